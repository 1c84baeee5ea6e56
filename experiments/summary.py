"""Write `experiments/summary.csv` from the committed results files, and render the summary table of
`experiments/README.md` (between the markers START and END) from that CSV.

    python -m experiments.summary           # rewrites summary.csv and the README's table
    python -m experiments.summary --check   # exit 1 where either differs from what the files give

One row per claim and attempt of `summary_claims.CLAIMS`, columns COLUMNS; numbers by the readers of
`summary_sources` / `summary_real`, verdicts by the rule of `summary_stats` (its VERDICTS, rendered above
the table; a claim whose gate failed, checked by `summary_gates`, is `not tested (gate …)`), provenance (floor
design; current or stale) by the rule of `summary_provenance`. It also renders the top-level README's
experiments table (between TOP_START and TOP_END) from summary.csv alone. Offline,
reads nothing but files in this folder and the top-level README; about a second.
"""

from __future__ import annotations

import argparse
import csv
import io
import math
from pathlib import Path

from experiments.summary_claims import CLAIMS, Claim
from experiments.summary_gates import failed
from experiments.summary_provenance import DESIGNS, STATUSES, provenance
from experiments.summary_stats import MIN_WORLDS, VERDICTS, holm, one_sided_p, verdict
from nliforge.errors import NLIDataError

HERE = Path(__file__).resolve().parent

COLUMNS = ["claim", "paper", "paper_number", "estimate", "low", "high", "n_worlds", "verdict", "provenance", "file"]
START, END = "<!-- summary:start -->", "<!-- summary:end -->"
TOP_START, TOP_END = "<!-- experiments-table:start -->", "<!-- experiments-table:end -->"
CSV, README, TOP_README = HERE / "summary.csv", HERE / "README.md", HERE.parent / "README.md"
INTRO = [
    "Written by `python -m experiments.summary` from the committed results files into `summary.csv` (one row per",
    "claim and per attempt, every attempt listed); do not edit between the markers. Accuracy differences in points;",
    "challenge mean = the mean of the negation, overlap and length challenge splits. **The unit is the world**: D0,",
    "W, the floor and the ceiling are drawn once per world seed, so the estimate is the mean over worlds of each",
    "world's mean over training seeds, and the interval a 95% t interval over worlds (n_worlds − 1 df: with 2",
    "worlds t = 12.71, hence the wide intervals). The folders' own tables pool world × training seed units; their",
    "intervals are too narrow for a claim. The provenance column (by rule, `experiments/summary_provenance.py`)",
    "gives each row's floor design and whether it is current: `fresh_draw_floor` rows (`wanli_generated`'s first",
    "attempt, `disco_table3`, `combined`, `zfilter_training`, `real_lm`) compared against a fresh draw of |D0| + N",
    "biased pairs that does not hold D0, so floor and treatment differ in their base too; they are **stale: first",
    "attempt**, their verdicts not current findings. On real text the first attempts (R1-R4) used the example as the unit on one sample of the data",
    "(n_worlds = 1; their interval spans every training seed's 95% bootstrap interval, or is the paired t over",
    "seeds, R2d); R5 repeats them over 5 disjoint parts of the corpus, or 3 draws of D0 and W, as worlds.",
    "NLI-Set has no worlds (n_worlds –): its unit is the prompt.",
]


def _num(x: float) -> str:
    return "" if x is None or math.isnan(x) else f"{x:.4f}"


def family_holm_p(claims: list[Claim], estimates: list, gates: list | None = None) -> dict[int, float]:
    """Claim index -> its Holm-adjusted one-sided p over the tested claims of its `family` (claims outside any
    family, and claims whose gate failed (`gates[i]` a sentence: not tested), are absent)."""
    gates = gates or [None] * len(claims)
    out: dict[int, float] = {}
    for family in {c.family for c in claims if c.family}:
        members = [i for i, c in enumerate(claims)
                   if c.family == family and estimates[i] is not None and not gates[i]]
        raw = {i: one_sided_p(estimates[i], claims[i].direction, claims[i].reference) for i in members}
        out.update(holm({i: (1.0 if math.isnan(p) else p) for i, p in raw.items()}))
    return out


def claim_rows(claims: list[Claim], root: Path = HERE) -> list[dict[str, str]]:
    estimates = [c.source.read(root) if c.source is not None else None for c in claims]
    gates = [failed(c.gates, root) for c in claims]
    adjusted = family_holm_p(claims, estimates, gates)
    files = [c.data_files for c in claims]
    return [claim_row(c, root, e, adjusted.get(i), files, gates[i] or "")
            for i, (c, e) in enumerate(zip(claims, estimates))]


def claim_row(claim: Claim, root: Path = HERE, e=None, holm_p: float | None = None,
              all_files: list[tuple[str, ...]] | None = None, gate: str | None = None) -> dict[str, str]:
    """One CSV row: the claim's number read from its files (unless given as `e`), its verdict and provenance by
    rule (`all_files`: every claim's data files, for the superseded rule; default CLAIMS'). A claim whose gate failed
    (`gate`: the sentence, else computed from `claim.gates`) is `not tested (gate …)`. A claim text with
    `{bound}` gets the reference the file states (a majority class, a significance bound)."""
    if all_files is None:
        all_files = [c.data_files for c in CLAIMS]
    if e is None and claim.source is not None:
        e = claim.source.read(root)
    if gate is None:
        gate = failed(claim.gates, root)
    text = claim.claim.format(bound=e.reference) if e is not None and "{bound" in claim.claim else claim.claim
    return {"claim": text, "paper": claim.paper, "paper_number": claim.paper_number,
            "estimate": _num(e.estimate) if e else "", "low": _num(e.low) if e else "",
            "high": _num(e.high) if e else "", "n_worlds": "" if e is None or e.n_worlds is None else str(e.n_worlds),
            "verdict": verdict(claim.kind, e, claim.direction, claim.reference, claim.costly, claim.tolerance, holm_p,
                               claim.paper_value, gate=gate),
            "provenance": provenance(claim, [tuple(f) for f in all_files]), "file": claim.file}


STUDY_CLAIMS = "*/attempt-*/claims.csv"   # a study's verdict (nliforge-study verdict root=experiments)


def study_rows(root: Path = HERE) -> list[dict[str, str]]:
    """One row per claim of every study attempt judged under `root`, as its claims.csv says: the numbers and
    the verdict word are the package's (`nliforge.evaluation.verdict`), not recomputed here."""
    rows = []
    for path in sorted(root.glob(STUDY_CLAIMS), key=lambda p: (p.parent.parent.name, int(p.parent.name.split("-")[1]))):
        study, attempt = path.parent.parent.name, path.parent.name.replace("-", " ")
        with path.open(newline="") as fh:
            for r in csv.DictReader(fh):
                contrast = r["contrast"].replace(" - ", " − ")
                status = "current" if r["status"] == "current" else "superseded: later attempt"
                rows.append({"claim": f"{study}, {attempt}: {contrast}, {r['metric']} ({r['claim']}; points)",
                             "paper": r["paper"], "paper_number": r["paper_number"], "estimate": r["estimate"],
                             "low": r["low"], "high": r["high"], "n_worlds": r["n_worlds"], "verdict": r["verdict"],
                             "provenance": f"study; {status}", "file": str(path.relative_to(root))})
    return rows


def csv_text(rows: list[dict[str, str]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def read_rows(text: str) -> list[dict[str, str]]:
    rows = list(csv.DictReader(io.StringIO(text)))
    if rows and list(rows[0]) != COLUMNS:
        raise NLIDataError(f"{CSV}: expected columns {COLUMNS}, found {list(rows[0])}")
    return rows


def _cell(row: dict[str, str], claim: Claim) -> str:
    """`+3.0 [−22.5, +28.5]`: signed where the claim is a difference (its text has ' − ')."""
    if not row["estimate"]:
        return "–"
    sign = "+" if " − " in claim.claim else ""
    fmt = lambda key: f"{float(row[key]):{sign}.{claim.digits}f}".replace("-", "−")  # noqa: E731
    return fmt("estimate") + (f" [{fmt('low')}, {fmt('high')}]" if row["low"] else "")


def render(rows: list[dict[str, str]], claims: list[Claim] = CLAIMS) -> str:
    """The README block: how to read the table, the verdict words, and one table row per CSV row (the
    diagnosis from the claim's definition). The first rows match the claims one to one, in order; the rest are
    studies' rows (`study_rows`), whose diagnosis is in their claims.md."""
    studies = rows[len(claims):]
    rows = rows[:len(claims)]
    if len(rows) != len(claims) or any(not r["claim"].startswith(c.claim.split("{bound")[0])
                                       for r, c in zip(rows, claims)) \
            or any(not r["provenance"].startswith("study; ") for r in studies):
        raise NLIDataError(f"{CSV}: its rows are not summary_claims.CLAIMS; run python -m experiments.summary")
    esc = lambda s: s.replace("|", "\\|")  # noqa: E731
    lines = [START, "", " ".join(INTRO), "",
             f"Verdicts, applied by rule (`experiments/summary_stats.py`; {MIN_WORLDS} worlds for a claim; a claim's "
             "pre-registered gates checked first, `experiments/summary_gates.py`, never rows of their own):", ""]
    lines += [f"- **{word}**: {meaning}." for word, meaning in VERDICTS.items()]
    lines += ["", "Provenance, `<floor design>; <status>`, by rule (`experiments/summary_provenance.py`):", ""]
    lines += [f"- `{word}`: {meaning}." for word, meaning in {**DESIGNS, **STATUSES}.items()]
    lines += ["", "| claim | paper | paper's number | ours [95%] | n_worlds | verdict | provenance | file | diagnosis |",
              "|---|---|---|---|---|---|---|---|---|"]
    for row, claim in zip(rows, claims):
        files = ", ".join(f"`{f}`" for f in row["file"].split("; "))
        cells = [row["claim"], row["paper"], row["paper_number"], _cell(row, claim), row["n_worlds"] or "–",
                 row["verdict"], row["provenance"], files, claim.diagnosis or "–"]
        lines.append("| " + " | ".join(esc(c) for c in cells) + " |")
    for row in studies:
        files = f"`{row['file']}`"
        cells = [row["claim"], row["paper"], row["paper_number"], _numbers(row), row["n_worlds"] or "–",
                 row["verdict"], row["provenance"], files, f"its claims.md ({row['file'].replace('.csv', '.md')})"]
        lines.append("| " + " | ".join(esc(c) for c in cells) + " |")
    return "\n".join(lines + ["", END])


def _numbers(r: dict[str, str]) -> str:
    """A row's `estimate [low, high]` for the top-level table: 3 decimals where every number is below 1 in
    size, else 1; signed where the claim is a difference (its text has ' − ')."""
    keys = [k for k in ("estimate", "low", "high") if r[k]]
    values = [float(r[k]) for k in keys]
    fmt = f"{'+' if ' − ' in r['claim'] else ''}.{3 if max(abs(v) for v in values) < 1 else 1}f"
    text = [f"{v:{fmt}}".replace("-", "−") for v in values]
    return text[0] + (f" [{text[1]}, {text[2]}]" if len(text) == 3 else "")


def _counts(words: list[str]) -> str:
    seen: dict[str, int] = {}
    for w in words:
        seen[w] = seen.get(w, 0) + 1
    return ", ".join(f"{w} {n}" for w, n in seen.items()) or "–"


def top_table(rows: list[dict[str, str]]) -> str:
    """The top-level README's experiments block, from summary.csv's rows alone: per folder its rows' floor
    designs and their verdicts counted, current apart from stale or superseded; then every current row whose
    verdict decides (neither `not shown`, `not tested`, `descriptive` nor `not run`), with its number."""
    folders: dict[str, list[dict[str, str]]] = {}
    for r in rows:
        folders.setdefault(r["file"].split("/")[0], []).append(r)
    word = lambda r: r["verdict"].split(" (")[0]  # noqa: E731
    status = lambda r: r["provenance"].split("; ", 1)[1]  # noqa: E731
    lines = [TOP_START, "",
             "Rendered by `python -m experiments.summary` from `experiments/summary.csv` alone (do not edit between "
             "the markers). Per folder: its rows' floor designs and their verdicts, counted; rows marked **stale** ran "
             "before the floors that hold D0 (or with the example as the unit) and are not current findings, "
             "**superseded** rows were re-run with more worlds. Every claim, number and interval, and what the words "
             "mean: [experiments/README.md](experiments/README.md).", "",
             "| folder | rows | floor design | current rows: verdicts | stale or superseded rows: verdicts |",
             "|---|---|---|---|---|"]
    for folder, rs in folders.items():
        designs = sorted({r["provenance"].split("; ")[0] for r in rs})
        current = [word(r) for r in rs if status(r) == "current"]
        old: dict[str, list[str]] = {}
        for r in rs:
            if status(r) != "current":
                old.setdefault(status(r), []).append(word(r))
        old_cell = "; ".join(f"**{s}**: {_counts(ws)}" for s, ws in old.items()) or "–"
        lines.append(f"| `{folder}/` | {len(rs)} | {', '.join(designs)} | {_counts(current)} | {old_cell} |")
    lines += ["", "Current rows whose verdict decides:", "", "| claim | ours [95%] | n_worlds | verdict |",
              "|---|---|---|---|"]
    for r in current_decisive(rows):
        cells = [r["claim"], _numbers(r), r["n_worlds"] or "–", r["verdict"]]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines + ["", TOP_END])


def current_decisive(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The current rows whose verdict decides (not `not shown`, `not tested`, `descriptive` or `not run`)."""
    return [r for r in rows if r["provenance"].endswith("; current") and r["estimate"]
            and not r["verdict"].startswith(("not shown", "not tested", "descriptive", "not run"))]


def replace_block(readme: str, block: str, start: str = START, end: str = END) -> str:
    if readme.count(start) != 1 or readme.count(end) != 1 or readme.index(start) > readme.index(end):
        raise NLIDataError(f"expected one {start} … {end} block")
    return readme[:readme.index(start)] + block + readme[readme.index(end) + len(end):]


def readme_block(readme: str, start: str = START, end: str = END) -> str:
    replace_block(readme, "", start, end)   # checks the markers
    return readme[readme.index(start):readme.index(end) + len(end)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on a difference")
    args = ap.parse_args(argv)
    text = csv_text(claim_rows(CLAIMS) + study_rows())
    readme, top = README.read_text(), TOP_README.read_text()
    new_readme = replace_block(readme, render(read_rows(text)))
    new_top = replace_block(top, top_table(read_rows(text)), TOP_START, TOP_END)
    if args.check:
        stale = [str(p.relative_to(HERE.parent)) for p, old, new in (
            (CSV, CSV.read_text() if CSV.is_file() else "", text), (README, readme, new_readme), (TOP_README, top, new_top))
            if old != new]
        print(f"stale: {', '.join(stale)}; run python -m experiments.summary" if stale else "up to date")
        return 1 if stale else 0
    CSV.write_text(text)
    README.write_text(new_readme)
    TOP_README.write_text(new_top)
    print(f"wrote {CSV} ({len(CLAIMS)} claims), the table in {README} and the experiments table in {TOP_README}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
