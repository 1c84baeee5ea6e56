"""Write `experiments/summary.csv` from the committed results files, and render the summary table of
`experiments/README.md` (between the markers START and END) from that CSV.

    python experiments/summary.py           # rewrites summary.csv and the README's table
    python experiments/summary.py --check   # exit 1 where either differs from what the files give

One row per claim and attempt of `summary_claims.CLAIMS`, columns COLUMNS; numbers by the readers of
`summary_sources` / `summary_real`, verdicts by the rule of `summary_stats` (its VERDICTS, rendered above
the table). Offline, reads nothing but files in this folder; about a second.
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from summary_claims import CLAIMS, Claim  # noqa: E402
from summary_stats import MIN_WORLDS, VERDICTS, holm, one_sided_p, verdict  # noqa: E402

from nliforge.errors import NLIDataError  # noqa: E402

COLUMNS = ["claim", "paper", "paper_number", "estimate", "low", "high", "n_worlds", "verdict", "file"]
START, END = "<!-- summary:start -->", "<!-- summary:end -->"
CSV, README = HERE / "summary.csv", HERE / "README.md"
INTRO = [
    "Written by `python experiments/summary.py` from the committed results files into `summary.csv` (one row per",
    "claim and per attempt, every attempt listed); do not edit between the markers. Accuracy differences in points;",
    "challenge mean = the mean of the negation, overlap and length challenge splits. **The unit is the world**: D0,",
    "W, the floor and the ceiling are drawn once per world seed, so the estimate is the mean over worlds of each",
    "world's mean over training seeds, and the interval a 95% t interval over worlds (n_worlds − 1 df: with 2",
    "worlds t = 12.71, hence the wide intervals). The folders' own tables pool world × training seed units; their",
    "intervals are too narrow for a claim. A floor of D0 + N biased pairs in these files is a fresh draw of",
    "|D0| + N biased pairs (the world draws a split whole for its size): floor and treatment differ in their base",
    "too. On real text the first attempts (R1-R4) used the example as the unit on one sample of the data",
    "(n_worlds = 1; their interval spans every training seed's 95% bootstrap interval, or is the paired t over",
    "seeds, R2d); R5 repeats them over 5 disjoint parts of the corpus, or 3 draws of D0 and W, as worlds.",
    "NLI-Set has no worlds (n_worlds –): its unit is the prompt.",
]


def _num(x: float) -> str:
    return "" if x is None or math.isnan(x) else f"{x:.4f}"


def family_holm_p(claims: list[Claim], estimates: list) -> dict[int, float]:
    """Claim index -> its Holm-adjusted one-sided p over the claims of its `family` (claims outside any
    family are absent)."""
    out: dict[int, float] = {}
    for family in {c.family for c in claims if c.family}:
        members = [i for i, c in enumerate(claims) if c.family == family and estimates[i] is not None]
        raw = {i: one_sided_p(estimates[i], claims[i].direction, claims[i].reference) for i in members}
        out.update(holm({i: (1.0 if math.isnan(p) else p) for i, p in raw.items()}))
    return out


def claim_rows(claims: list[Claim], root: Path = HERE) -> list[dict[str, str]]:
    estimates = [c.source.read(root) if c.source is not None else None for c in claims]
    adjusted = family_holm_p(claims, estimates)
    return [claim_row(c, root, e, adjusted.get(i)) for i, (c, e) in enumerate(zip(claims, estimates))]


def claim_row(claim: Claim, root: Path = HERE, e=None, holm_p: float | None = None) -> dict[str, str]:
    """One CSV row: the claim's number read from its files (unless given as `e`) and its verdict by rule.
    A claim text with `{bound}` gets the reference the file states (a majority class, a significance bound)."""
    if e is None and claim.source is not None:
        e = claim.source.read(root)
    text = claim.claim.format(bound=e.reference) if e is not None and "{bound" in claim.claim else claim.claim
    return {"claim": text, "paper": claim.paper, "paper_number": claim.paper_number,
            "estimate": _num(e.estimate) if e else "", "low": _num(e.low) if e else "",
            "high": _num(e.high) if e else "", "n_worlds": "" if e is None or e.n_worlds is None else str(e.n_worlds),
            "verdict": verdict(claim.kind, e, claim.direction, claim.reference, claim.costly, claim.tolerance, holm_p),
            "file": claim.file}


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
    diagnosis from the claim's definition). Rows and claims must match one to one, in order."""
    if len(rows) != len(claims) or any(not r["claim"].startswith(c.claim.split("{bound")[0])
                                       for r, c in zip(rows, claims)):
        raise NLIDataError(f"{CSV}: its rows are not summary_claims.CLAIMS; run python experiments/summary.py")
    esc = lambda s: s.replace("|", "\\|")  # noqa: E731
    lines = [START, "", " ".join(INTRO), "",
             f"Verdicts, applied by rule (`experiments/summary_stats.py`; {MIN_WORLDS} worlds for a claim):", ""]
    lines += [f"- **{word}**: {meaning}." for word, meaning in VERDICTS.items()]
    lines += ["", "| claim | paper | paper's number | ours [95%] | n_worlds | verdict | file | diagnosis |",
              "|---|---|---|---|---|---|---|---|"]
    for row, claim in zip(rows, claims):
        files = ", ".join(f"`{f}`" for f in row["file"].split("; "))
        cells = [row["claim"], row["paper"], row["paper_number"], _cell(row, claim), row["n_worlds"] or "–",
                 row["verdict"], files, claim.diagnosis or "–"]
        lines.append("| " + " | ".join(esc(c) for c in cells) + " |")
    return "\n".join(lines + ["", END])


def replace_block(readme: str, block: str) -> str:
    if readme.count(START) != 1 or readme.count(END) != 1 or readme.index(START) > readme.index(END):
        raise NLIDataError(f"{README}: expected one {START} … {END} block")
    return readme[:readme.index(START)] + block + readme[readme.index(END) + len(END):]


def readme_block(readme: str) -> str:
    replace_block(readme, "")   # checks the markers
    return readme[readme.index(START):readme.index(END) + len(END)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on a difference")
    args = ap.parse_args(argv)
    text = csv_text(claim_rows(CLAIMS))
    readme = README.read_text()
    new_readme = replace_block(readme, render(read_rows(text)))
    if args.check:
        stale = [p.name for p, old, new in ((CSV, CSV.read_text() if CSV.is_file() else "", text),
                                            (README, readme, new_readme)) if old != new]
        print(f"stale: {', '.join(stale)}; run python experiments/summary.py" if stale else "up to date")
        return 1 if stale else 0
    CSV.write_text(text)
    README.write_text(new_readme)
    print(f"wrote {CSV} ({len(CLAIMS)} claims) and the table in {README}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
