"""Pre-registration: a study's attempts, each locked to one plan, and a hash-chained ledger of them.

Layout under the studies root (`root=`, else $NLIFORGE_STUDIES, else ./studies)::

    <root>/<study>/ledger.jsonl           one line per event (preregister, amend, verdict); each line holds
                                         the sha256 of the line before, so an edited or removed line shows
    <root>/<study>/attempt-<n>/plan.lock  the resolved plan, its sha256, the UTC time, the git commit, and
                                         (attempt 2 on) the amendment's reason
    <root>/<study>/attempt-<n>/superseded.json   written when a later attempt opens: never deleted

`run` and `verdict` use the latest attempt only when the study file's plan is the one it locked.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from nliforge.errors import NLIDataError
from nliforge.study.schema import Study
from nliforge.utils.atomic import atomic_write_text, read_json_file, write_new_file

ROOT_ENV = "NLIFORGE_STUDIES"
GENESIS = "0" * 64


def canonical(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def sha256(obj) -> str:
    return hashlib.sha256(canonical(obj).encode("utf-8")).hexdigest()


def studies_root(root: str | None = None) -> Path:
    return Path(root or os.environ.get(ROOT_ENV) or "studies").expanduser()


def study_folder(study: Study, root: str | None = None) -> Path:
    return studies_root(root) / study.name


def attempt_numbers(folder: Path) -> list[int]:
    found = [p.name.removeprefix("attempt-") for p in folder.glob("attempt-*") if (p / "plan.lock").is_file()]
    return sorted(int(n) for n in found if n.isdigit())


def plan_diff(old, new, prefix: str = "") -> list[str]:
    """The dotted keys whose values differ between two plans (a key only one has included, unless it is
    empty there: a key a later nliforge adds with an empty default changes no locked plan)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in sorted(set(old) | set(new), key=str):
            if (k not in old and new[k] in ("", [], {}, None)) or (k not in new and old[k] in ("", [], {}, None)):
                continue
            out += plan_diff(old.get(k), new.get(k), f"{prefix}.{k}" if prefix else str(k))
        return out
    return [] if old == new else [prefix or "(the whole plan)"]


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# -- the ledger -------------------------------------------------------------------------------------
def ledger_entries(folder: Path) -> list[dict]:
    """The ledger's entries, each checked against the one before; a broken chain is an error."""
    path, prev, out = folder / "ledger.jsonl", GENESIS, []
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    for n, line in enumerate(lines, start=1):
        try:
            entry = json.loads(line)
            body = {k: v for k, v in entry.items() if k != "hash"}
            ok = entry["prev_hash"] == prev and sha256(body) == entry["hash"]
        except (json.JSONDecodeError, KeyError, TypeError):
            ok = False
        if not ok:
            raise NLIDataError(f"{path}:{n}: the ledger's chain is broken at this line (edited, reordered or "
                               "removed entries); restore it from version control")
        prev = entry["hash"]
        out.append(entry)
    return out


def append_entry(folder: Path, kind: str, payload: dict) -> dict:
    entries = ledger_entries(folder)
    body = {"index": len(entries), "time": utc_now(), "kind": kind, "payload": payload,
            "prev_hash": entries[-1]["hash"] if entries else GENESIS}
    entry = {**body, "hash": sha256(body)}
    path = folder / "ledger.jsonl"
    old = path.read_text(encoding="utf-8") if path.is_file() else ""
    atomic_write_text(path, [old, canonical(entry) + "\n"])
    return entry


# -- attempts ---------------------------------------------------------------------------------------
def read_lock(attempt: Path) -> dict:
    return read_json_file(attempt / "plan.lock")


def _lock(study: Study, folder: Path, n: int, reason: str | None) -> tuple[Path, dict]:
    from nliforge.utils.environment import source_commit

    plan = study.plan()
    lock = {"study": study.name, "attempt": n, "sha256": sha256(plan), "utc": utc_now(), "commit": source_commit(),
            "source": str(study.source), **({"reason": reason} if reason else {}), "plan": plan}
    attempt = folder / f"attempt-{n}"
    attempt.mkdir(parents=True, exist_ok=True)
    if not write_new_file(attempt / "plan.lock", (json.dumps(lock, indent=2, ensure_ascii=False) + "\n").encode()):
        raise NLIDataError(f"{attempt / 'plan.lock'}: already exists (another preregister or amend ran at once)")
    append_entry(folder, "preregister" if n == 1 else "amend",
                 {"attempt": n, "sha256": lock["sha256"], "commit": lock["commit"],
                  **({"reason": reason} if reason else {})})
    return attempt, lock


def changed_keys(study: Study, attempt: Path) -> list[str]:
    return plan_diff(read_lock(attempt)["plan"], study.plan())


def preregister(study: Study, root: str | None = None) -> tuple[Path, dict, bool]:
    """Lock the plan as attempt 1; (attempt folder, lock, True). Already locked with the same plan:
    (its folder, its lock, False); with another plan: refused, naming the changed keys."""
    folder = study_folder(study, root)
    numbers = attempt_numbers(folder)
    if not numbers:
        return (*_lock(study, folder, 1, None), True)
    attempt = folder / f"attempt-{numbers[-1]}"
    check_unchanged(study, attempt)
    return attempt, read_lock(attempt), False


def check_unchanged(study: Study, attempt: Path) -> None:
    changed = changed_keys(study, attempt)
    if changed:
        raise NLIDataError(f"study {study.name}: {study.source} differs from the plan locked in {attempt}/plan.lock "
                           f"at {', '.join(changed)}; restore it, or open a new attempt with "
                           f"`nliforge-study amend {study.name} reason=\"...\"`")


def current_attempt(study: Study, root: str | None = None, number: int | None = None) -> Path:
    """The latest attempt (or attempt `number`: an earlier one's runs can still be finished or judged), when the
    study file holds its plan and the ledger agrees with its lock."""
    folder = study_folder(study, root)
    numbers = attempt_numbers(folder)
    if not numbers:
        raise NLIDataError(f"study {study.name}: not pre-registered under {folder}; run "
                           f"`nliforge-study preregister {study.name}` first")
    if number is not None and number not in numbers:
        raise NLIDataError(f"study {study.name}: attempt={number}: no such attempt under {folder} "
                           f"(attempts: {', '.join(map(str, numbers))})")
    attempt = folder / f"attempt-{number or numbers[-1]}"
    check_ledger(folder, attempt)
    check_unchanged(study, attempt)
    return attempt


def check_ledger(folder: Path, attempt: Path) -> None:
    lock = read_lock(attempt)
    logged = {e["payload"].get("attempt"): e["payload"].get("sha256") for e in ledger_entries(folder)
              if e["kind"] in ("preregister", "amend")}
    if logged.get(lock["attempt"]) != lock["sha256"]:
        raise NLIDataError(f"{attempt}/plan.lock: its sha256 {lock['sha256'][:12]} is not the one the ledger "
                           f"recorded for attempt {lock['attempt']} ({str(logged.get(lock['attempt']))[:12]})")


def amend(study: Study, reason: str, root: str | None = None) -> tuple[Path, dict]:
    """Open attempt n + 1 with the study file's plan; every earlier attempt is kept and marked superseded."""
    if not reason.strip():
        raise NLIDataError("amend: reason=\"...\" is required (why the plan changes, kept in the ledger)")
    folder = study_folder(study, root)
    numbers = attempt_numbers(folder)
    if not numbers:
        raise NLIDataError(f"study {study.name}: nothing to amend under {folder}; run preregister first")
    attempt, lock = _lock(study, folder, numbers[-1] + 1, reason)
    for n in numbers:
        mark_superseded(folder / f"attempt-{n}", lock["attempt"], reason)
    return attempt, lock


def mark_superseded(attempt: Path, by: int, reason: str) -> None:
    """superseded.json, and the verdict files (if any) say so in their first line or column."""
    note = attempt / "superseded.json"
    if not note.is_file():
        atomic_write_text(note, [json.dumps({"by_attempt": by, "utc": utc_now(), "reason": reason}, indent=2) + "\n"])
    from nliforge.study.report import mark_verdict_superseded

    mark_verdict_superseded(attempt, by)


def reused_data_warnings(study: Study, attempt: Path) -> list[str]:
    """With `fresh_per_attempt`, a sentence per earlier attempt that evaluated the same worlds on the same suite."""
    if study.evaluation_data != "fresh_per_attempt":
        return []
    plan, out = study.plan(), []
    for n in attempt_numbers(attempt.parent):
        old = read_lock(attempt.parent / f"attempt-{n}")["plan"]
        if n < read_lock(attempt)["attempt"] and old["worlds"] == plan["worlds"] and old["suite"] == plan["suite"] \
                and set(old["claims"]) & set(plan["claims"]):
            out.append(f"attempt {n} evaluated the same worlds ({plan['worlds']['key']} in "
                       f"{', '.join(map(str, plan['worlds']['values']))}) on the same suite, yet this study declares "
                       "evaluation_data: fresh_per_attempt; with corrected_across_attempts its tests would join Holm")
    return out
