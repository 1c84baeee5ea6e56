"""Tables of experiments/nli_set from one run folder: yield per stage, instruction following per
generator and check (Wilson 95% intervals), H1's paired difference t03 - t07 (Newcombe's interval,
method 10), the judge's parse rate and score spread (H2), the explain stage's files, passages verbatim.

    python -m experiments.nli_set.nli_set_table --run /tmp/nliforge_exp/nli_set/run --out experiments/nli_set/results.md
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter
from pathlib import Path

from scipy.stats import binomtest

from nliforge.pipelines.longtext.checks import LongTextRules, check_longtext
from nliforge.pipelines.longtext.prompts import LABEL_TERMS, LABELS
from nliforge.pipelines.longtext.rubric import parse_score
from nliforge.data.judgements import RUBRIC_CRITERIA
from nliforge.utils.atomic import atomic_write_text

CHECKS = ("two_paragraphs", "sentence_count", "label_not_stated", "long_enough")
PAIR = ("smollm2_t03", "smollm2_t07")   # H1: first minus second


def rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.is_file() else []


def wilson(k: int, n: int) -> tuple[float, float]:
    """Wilson score 95% interval for k of n (scipy); (nan, nan) for n = 0."""
    if n == 0:
        return math.nan, math.nan
    ci = binomtest(k, n).proportion_ci(0.95, method="wilson")
    return ci.low, ci.high


def newcombe_paired(a: int, b: int, c: int, d: int) -> tuple[float, float, float]:
    """p1 - p2 for paired binary outcomes (a both, b first only, c second only, d neither) and
    Newcombe's (1998) method-10 95% interval, from each proportion's Wilson interval and the phi
    correlation of the pairs (phi = 0 when a margin is empty)."""
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    (l1, u1), (l2, u2) = wilson(a + b, n), wilson(a + c, n)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    phi = (a * d - b * c) / math.sqrt(margins) if margins else 0.0
    delta = math.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    eps = math.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0.0))
    return p1 - p2, p1 - p2 - delta, p1 - p2 + eps


def pct(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"{k}/{n} = {100 * k / n:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]" if n else "n/a"


def stage_yield(run: Path) -> list[str]:
    man = json.loads((run / "manifest.json").read_text())
    out = ["| stage | in | out | drops | seconds |", "|---|---|---|---|---|"]
    for name in man["stage_order"]:
        st = man["stages"][name]
        drops = ", ".join(f"{k} {v}" for k, v in st["drops"].items()) or "-"
        out.append(f"| {name} | {st['count_in']} | {st['count_out']} | {drops} | {st.get('seconds', 0):.0f} |")
    return out


def checks_by_generator(run: Path) -> tuple[list[str], dict[str, dict[str, bool]]]:
    """Per generator: every check's pass rate (all answers, each check on its own), the all-checks rate and
    how many paragraphs the answers have."""
    prompts = {p["uid"]: p for p in rows(run / "stages" / "longtext_prompts.jsonl")}
    rules = LongTextRules.from_dict(None, LABEL_TERMS)
    passed: dict[str, dict[str, bool]] = {}
    counts: dict[str, Counter] = {}
    paragraphs: dict[str, Counter] = {}
    for g in rows(run / "stages" / "longtext_generate.jsonl"):
        checked = check_longtext(g["text"], prompts[g["prompt_uid"]]["label"], rules)
        counts.setdefault(g["generator"], Counter()).update({k: int(v) for k, v in checked.flags.items()}
                                                            | {"all": int(checked.reason is None), "n": 1})
        passed.setdefault(g["generator"], {})[g["prompt_uid"]] = checked.reason is None
        n_par = len(checked.paragraphs)
        paragraphs.setdefault(g["generator"], Counter())[str(n_par) if n_par < 4 else "4+"] += 1
    out = ["| generator | answers | all checks (95% CI) | " + " | ".join(CHECKS) + " |", "|---|---|---|" + "---|" * len(CHECKS)]
    for gen, c in sorted(counts.items()):
        out.append(f"| {gen} | {c['n']} | {pct(c['all'], c['n'])} | " + " | ".join(pct(c[k], c["n"]) for k in CHECKS) + " |")
    out += ["", "Paragraphs written (blank-line split) per generator: " + "; ".join(
        f"{gen}: " + ", ".join(f"{k} × {v}" for k, v in sorted(c.items())) for gen, c in sorted(paragraphs.items())) + "."]
    return out, passed


def h1(passed: dict[str, dict[str, bool]]) -> list[str]:
    first, second = (passed.get(g, {}) for g in PAIR)
    uids = sorted(set(first) & set(second))
    if not uids:
        return ["H1: not computed (a generator has no answers)."]
    a = sum(first[u] and second[u] for u in uids)
    b = sum(first[u] and not second[u] for u in uids)
    c = sum(second[u] and not first[u] for u in uids)
    d = len(uids) - a - b - c
    diff, lo, hi = newcombe_paired(a, b, c, d)
    verdict = "supported" if lo > 0 else "contradicted" if hi < 0 else "not shown"
    return [f"Paired over {len(uids)} prompts: both pass {a}, only {PAIR[0]} {b}, only {PAIR[1]} {c}, neither {d}.",
            f"**H1: {PAIR[0]} − {PAIR[1]} = {100 * diff:+.1f} points, 95% CI [{100 * lo:+.1f}, {100 * hi:+.1f}] → {verdict}.**"]


def h2(run: Path) -> list[str]:
    """The judge: records with all eight scores, answers per criterion that parse, the parsed values."""
    js = rows(run / "rubric_judgements.jsonl")
    if not js:
        return ["H2: no record reached the judge."]
    values: dict[str, list[int]] = {c: [] for c in RUBRIC_CRITERIA}
    for j in js:
        answers = j["rubric"] or {}
        if not j["rubric"]:
            try:
                answers = {c: parse_score(t) for c, t in json.loads(j["extra"]["answer"]).items()}
            except (json.JSONDecodeError, KeyError):
                answers = {}
        for c in RUBRIC_CRITERIA:
            if answers.get(c) is not None:
                values[c].append(answers[c])
    scored = sum(1 for j in js if j["rubric"])
    verdict = "met" if scored >= 0.8 * len(js) else "not met"
    out = [f"**H2: {scored} of {len(js)} judged records have all eight scores ({100 * scored / len(js):.0f}%) → {verdict}.**",
           "", "| criterion | answers that parse | parsed values (value × count) |", "|---|---|---|"]
    for c in RUBRIC_CRITERIA:
        dist = ", ".join(f"{v}×{k}" for v, k in sorted(Counter(values[c]).items()))
        out.append(f"| {c} | {len(values[c])}/{len(js)} | {dist or '-'} |")
    reasons = Counter(j["extra"].get("rubric_error") for j in js if not j["rubric"])
    out += ["", "Unscored by reason: " + (", ".join(f"{k} {v}" for k, v in reasons.items()) or "none") + "."]
    return out


def explain(run: Path) -> list[str]:
    ex = rows(run / "stages" / "explain.jsonl")
    man = json.loads((run / "manifest.json").read_text())["stages"].get("explain", {})
    if not ex:
        return [f"Explain stage: {man.get('extra', {}).get('skipped', 'no rows')}"]
    out = [f"Classifier trained on {man['extra']['train_size']} passages ({man['extra']['labels_from']}), "
           f"{man['extra']['method']} attributions, inputs {man['extra']['max_length']} tokens ({man['extra']['long_inputs']}).",
           "", "| uid | generator | intended | predicted | p(e, n, c) | files |", "|---|---|---|---|---|---|"]
    for r in ex:
        probs = ", ".join(f"{r['probs'][lab]:.2f}" for lab in LABELS)   # the JSONL's keys are sorted: name them
        out.append(f"| {r['uid']} | {r['model']} | {r['intended_label']} | {r['predicted_label']} | {probs} | "
                   + ", ".join([r["html"], *r["pngs"]]) + " |")
    files = sorted(p.relative_to(run) for p in (run / "explain" / "attributions").rglob("*") if p.is_file())
    return out + ["", "Files under the run folder: " + ", ".join(f"`{f}`" for f in files) + "."]


def verbatim(run: Path, per_gen: int = 1) -> list[str]:
    """Per generator: its first passage that passed, and its first two that failed (cut at 500 characters)."""
    prompts = {p["uid"]: p for p in rows(run / "stages" / "longtext_prompts.jsonl")}
    kept = {r["meta"]["prompt_uid"] + ":" + r["meta"]["model"] for r in rows(run / "stages" / "longtext_validate.jsonl")}
    drops = {d["uid"]: d["reason"] for d in rows(run / "stages" / "longtext_validate.drops.jsonl")}
    out: list[str] = []
    for gen in sorted({g["generator"] for g in rows(run / "stages" / "longtext_generate.jsonl")}):
        mine = [g for g in rows(run / "stages" / "longtext_generate.jsonl") if g["generator"] == gen]
        good = [g for g in mine if g["uid"] in kept][:per_gen]
        bad = [g for g in mine if g["uid"] not in kept][:2]
        for g, what in [(x, "passed") for x in good] + [(x, f"dropped: {drops.get(x['uid'])}") for x in bad]:
            p = prompts[g["prompt_uid"]]
            text = g["text"] if what == "passed" else g["text"][:500] + (" [...]" if len(g["text"]) > 500 else "")
            out += [f"**{gen}**, {what}; statement “{p['statement']}”, intended {p['label']}:", "",
                    "\n".join("> " + line for line in text.splitlines() or [""]), ""]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args()
    if not (args.run / "manifest.json").is_file():
        raise SystemExit(f"--run {args.run}: no manifest.json (expected an nliforge-generate run folder)")
    checks, passed = checks_by_generator(args.run)
    rubric = (args.run / "rubric.md").read_text().split("\n", 2)[-1] if (args.run / "rubric.md").is_file() else "n/a"
    parts = ["# NLI-Set experiment: results", "", f"Run folder: `{args.run}`.", "", "## Yield per stage", "",
             *stage_yield(args.run), "", "## Instruction following per generator and check (95% Wilson CI)", "",
             *checks, "", *h1(passed), "", "## Rubric (SmolLM2 judge, per criterion)", "", rubric.strip(), "",
             *h2(args.run), "", "## Explain stage", "", *explain(args.run), "", "## Passages verbatim", "",
             *verbatim(args.run)]
    atomic_write_text(args.out, ["\n".join(parts) + "\n"])
    print(args.out.read_text())


if __name__ == "__main__":
    main()
