"""What each `nliforge-study` command does and prints (cli.py parses the command line)."""

from __future__ import annotations

from collections.abc import Sequence

from nliforge.study import ledger
from nliforge.study.gates import evaluate_gates, is_done, missing_cells, run_dir
from nliforge.study.schema import Study


def _lock_line(attempt, lock: dict) -> str:
    return (f"{attempt}/plan.lock (sha256 {lock['sha256'][:12]}, {lock['utc']}, "
            f"commit {(lock.get('commit') or 'none')[:12]})")


def preregister(study: Study, root: str | None) -> int:
    from nliforge.study.runner import check_composes

    check_composes(study)     # an arm that cannot run is refused before its plan is locked
    attempt, lock, new = ledger.preregister(study, root)
    print(f"{'pre-registered' if new else 'already pre-registered, same plan'}: {_lock_line(attempt, lock)}")
    return 0


def amend(study: Study, reason: str, root: str | None) -> int:
    from nliforge.study.runner import check_composes

    check_composes(study)
    attempt, lock = ledger.amend(study, reason, root)
    print(f"attempt {lock['attempt']} opened: {_lock_line(attempt, lock)}; earlier attempts kept, marked superseded")
    return 0


def run(study: Study, root: str | None, extra: Sequence[str], number: int | None = None, jobs: int = 1) -> int:
    from nliforge.study.runner import check_run_args, run_study

    check_run_args(extra)
    attempt = ledger.current_attempt(study, root, number)
    left = run_study(study, attempt, extra, jobs=jobs)
    print(f"{len(study.run_names()) - left} of {len(study.run_names())} runs done"
          + (f"; {left} left (see {attempt}/logs/; run again to resume)" if left else ""))
    return 1 if left else 0


def status_lines(study: Study, attempt) -> list[str]:
    names = study.run_names()
    left = [(w, a, s) for w, a, s in names if not is_done(run_dir(attempt, w, a, s), study.save_model)]
    gates = evaluate_gates(study, attempt)
    gate_text = "; ".join(g.sentence if g.status != "failed" else f"FAILED {g.sentence}" for g in gates.values())
    lines = [f"{attempt}: {len(names) - len(left)} of {len(names)} runs done"
             + (f" · gates: {gate_text}" if gates else "")]
    for arm in study.arms:
        todo = [f"world {w} seed {s}" for w, a, s in left if a == arm]
        lines.append(f"  {arm}: {len(names) // len(study.arms) - len(todo)} done"
                     + (f", left: {', '.join(todo)}" if todo else ""))
    return lines


def status(study: Study, root: str | None, number: int | None = None) -> int:
    attempt = ledger.current_attempt(study, root, number)
    print("\n".join(status_lines(study, attempt)))
    return 0


def verdict(study: Study, root: str | None, wandb: bool = False, number: int | None = None) -> int:
    from nliforge.study.claims import judge
    from nliforge.study.report import environment_warnings, log_wandb, table_lines, write_verdict

    attempt = ledger.current_attempt(study, root, number)
    lock = ledger.read_lock(attempt)
    if study.rescore:    # kept models not yet scored on the study's extra suites
        from nliforge.study.runner import rescore

        rescore(study, attempt)
    gates = evaluate_gates(study, attempt)
    results = judge(study, attempt, gates)
    warnings = [*missing_cells(study, attempt), *environment_warnings(study, attempt),
                *ledger.reused_data_warnings(study, attempt)]
    files = write_verdict(study, attempt, lock, gates, results, warnings)
    ledger.append_entry(attempt.parent, "verdict", {"attempt": lock["attempt"], "claims_csv_sha256":
                        ledger.sha256((attempt / "claims.csv").read_text()),
                        "verdicts": {r.claim.id: r.verdict for r in results}})
    for g in gates.values():
        print(f"gate {g.status}: {g.sentence}")
    print("\n".join(table_lines(results)))
    for w in warnings:
        print(f"warning: {w}")
    print("→ " + ", ".join(str(f) for f in files))
    if wandb:
        log_wandb(study, attempt, results, gates)
    return 0
