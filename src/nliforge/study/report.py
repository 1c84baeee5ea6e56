"""A verdict's files in the attempt folder: claims.csv (one row per claim, never a gate), claims.md (the
gates' sentences, the claims' table and diagnoses) and claims.png (each claim's per-world values);
environment differences between runs; the mark a superseded attempt's files carry; W&B (optional)."""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter, defaultdict
from pathlib import Path

from nliforge.study.claims import ClaimResult
from nliforge.study.gates import GateState, fmt, is_done, run_dir
from nliforge.study.schema import Study
from nliforge.utils.atomic import atomic_write_text, save_figure

COLUMNS = ["attempt", "status", "claim", "family", "contrast", "metric", "side", "n_worlds", "estimate", "low", "high",
           "p_one_sided", "holm_p", "holm_tests", "verdict", "needs", "paper", "paper_number", "per_world",
           "diagnosis"]
SUPERSEDED_MD = "> **Superseded** by attempt {by}: kept as it was judged; the current verdict is attempt {by}'s.\n\n"


def _num(x: float, scale: float = 1.0, digits: int = 4) -> str:
    return "" if x is None or math.isnan(x) else f"{scale * x:.{digits}f}"


def claim_rows(study: Study, n: int, results: list[ClaimResult], status: str = "current") -> list[dict]:
    rows = []
    for r in results:
        c, e, s = r.claim, r.estimate, r.scale
        rows.append({"attempt": n, "status": status, "claim": c.id, "family": c.family, "contrast": f"{c.a} - {c.b}",
                     "metric": c.metric, "side": c.side, "n_worlds": len(r.per_world),
                     "estimate": _num(e.estimate, s), "low": _num(e.low, s), "high": _num(e.high, s),
                     "p_one_sided": _num(r.p), "holm_p": _num(r.holm_p) if r.holm_m else "",
                     "holm_tests": r.holm_m or "", "verdict": r.verdict, "needs": ";".join(c.needs),
                     "paper": c.paper, "paper_number": c.paper_number,
                     "per_world": ";".join(f"{w}:{_num(v, s)}" for w, v in r.per_world.items()),
                     "diagnosis": r.diagnosis})
    return rows


def csv_text(rows: list[dict]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def table_lines(results: list[ClaimResult]) -> list[str]:
    """The verdict table (the terminal's and claims.md's), points when the study's scale is 100."""
    lines = ["| claim | contrast | metric | estimate [95% t over worlds] | n_worlds | one-sided p | Holm p | verdict |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        e, s = r.estimate, r.scale
        est = fmt(e.estimate, s, True) + (f" [{fmt(e.low, s, True)}, {fmt(e.high, s, True)}]" if e.has_interval else "")
        lines.append(f"| {r.claim.id} | {r.claim.contrast} | {r.claim.metric} | {est if r.per_world else ''} | "
                     f"{len(r.per_world)} | {_num(r.p, digits=3)} | {_num(r.holm_p, digits=3) if r.holm_m else ''} "
                     f"| {r.verdict} |")
    return lines


def markdown(study: Study, lock: dict, gates: dict[str, GateState], results: list[ClaimResult],
             warnings: list[str]) -> str:
    n = lock["attempt"]
    head = [f"# Study {study.name}, attempt {n}", "", study.question, "",
            f"Pre-registered {lock['utc']} (plan sha256 {lock['sha256'][:12]}, commit {lock.get('commit') or 'none'})"
            + (f"; amended: {lock['reason']}" if lock.get("reason") else "") + ". "
            f"Worlds: {study.worlds.key} in {', '.join(map(str, study.worlds.values))}; training seeds "
            f"{', '.join(map(str, study.seeds))} (averaged within a world); min_worlds {study.min_worlds}; "
            f"evaluation data: {study.evaluation_data.replace('_', ' ')}.", ""]
    gate_lines = ["## Gates", ""] + [f"- {g.status}: {g.sentence}" for g in gates.values()] if gates else []
    body = ["## Claims", "", *table_lines(results), "", "## Diagnoses", "", *[f"- {r.diagnosis}" for r in results]]
    warn = ["", "## Warnings", "", *[f"- {w}" for w in warnings]] if warnings else []
    return "\n".join(head + gate_lines + ([""] if gate_lines else []) + body + warn) + "\n"


def plot(results: list[ClaimResult], path: Path) -> Path:
    """One panel per claim: each world's value, the mean and its t interval, the zero line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(2.6 * len(results) + 0.6, 3.2), squeeze=False)
    for ax, r in zip(axes[0], results):
        s, values = r.scale, list(r.per_world.values())
        ax.axhline(0, color="0.6", lw=0.8)
        ax.scatter(range(len(values)), [s * v for v in values], s=14, color="tab:blue")
        if r.estimate.has_interval:
            mid = (len(values) - 1) / 2
            ax.errorbar([mid], [s * r.estimate.estimate], yerr=[[s * (r.estimate.estimate - r.estimate.low)],
                        [s * (r.estimate.high - r.estimate.estimate)]], fmt="o", color="black", capsize=4)
        ax.set_xticks(range(len(values)), [str(w) for w in r.per_world], fontsize=7)
        ax.set_title(f"{r.claim.id}\n{r.verdict.split(' (')[0]}", fontsize=8)
        ax.set_xlabel("world", fontsize=7)
    axes[0][0].set_ylabel(f"{results[0].claim.contrast}" + (" (points)" if results[0].scale == 100 else ""), fontsize=8)
    fig.tight_layout()
    return save_figure(fig, path, dpi=110)


def environment_warnings(study: Study, attempt: Path) -> list[str]:
    """A sentence per environment.json key whose value differs between the done runs, with the counts."""
    seen: dict[str, Counter] = defaultdict(Counter)
    for w, a, s in study.run_names():
        path = run_dir(attempt, w, a, s) / "environment.json"
        if not (is_done(path.parent) and path.is_file()):
            continue
        for key, value in _flat(json.loads(path.read_text())).items():
            seen[key][json.dumps(value)] += 1
    return [f"the runs' environment.json differ at {key}: " + ", ".join(f"{v} in {c} runs" for v, c in counts.items())
            for key, counts in seen.items() if len(counts) > 1]


def _flat(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        out.update(_flat(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v})
    return out


def write_verdict(study: Study, attempt: Path, lock: dict, gates: dict, results: list[ClaimResult],
                  warnings: list[str]) -> list[Path]:
    by = superseded_by(attempt)
    status = f"superseded by attempt {by}" if by else "current"
    md = markdown(study, lock, gates, results, warnings)
    files = [atomic_write_text(attempt / "claims.csv", [csv_text(claim_rows(study, lock["attempt"], results, status))]),
             atomic_write_text(attempt / "claims.md", [SUPERSEDED_MD.format(by=by) if by else "", md])]
    if any(r.per_world for r in results):
        files.append(plot(results, attempt / "claims.png"))
    return files


def superseded_by(attempt: Path) -> int | None:
    """The attempt that superseded this one (its superseded.json, written when a later attempt opened), or None."""
    note = attempt / "superseded.json"
    return json.loads(note.read_text())["by_attempt"] if note.is_file() else None


def mark_verdict_superseded(attempt: Path, by: int) -> None:
    """An earlier attempt's claims.csv rows read `superseded by attempt <by>` and its claims.md opens with
    the note; nothing else in them changes."""
    csv_path, md_path = attempt / "claims.csv", attempt / "claims.md"
    if csv_path.is_file():
        with csv_path.open(newline="") as fh:
            rows = list(csv.DictReader(fh))
        for r in rows:
            if r["status"] == "current":
                r["status"] = f"superseded by attempt {by}"
        atomic_write_text(csv_path, [csv_text(rows)])
    if md_path.is_file() and not md_path.read_text().startswith("> **Superseded**"):
        atomic_write_text(md_path, [SUPERSEDED_MD.format(by=by), md_path.read_text()])


def log_wandb(study: Study, attempt: Path, results: list[ClaimResult], gates: dict) -> None:
    """One W&B run in the group `study-<name>` with the claims table and the gates (WANDB_MODE=offline works)."""
    import wandb

    run = wandb.init(project="nliforge", group=f"study-{study.name}", job_type="verdict",
                     name=f"{study.name}-{attempt.name}", dir=str(attempt), config=study.plan())
    with (attempt / "claims.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    run.log({"claims": wandb.Table(columns=COLUMNS, data=[[r[c] for c in COLUMNS] for r in rows]),
             **{f"gate/{k}": g.status for k, g in gates.items()}})
    run.finish()
