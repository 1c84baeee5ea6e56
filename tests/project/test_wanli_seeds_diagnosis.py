"""experiments/wanli_generated/seeds_diagnosis.py (the H2 diagnosis): seed overlap, transmission of a seed's
artifact to its generated pairs and the reviewed W's make-up, on a scratch layout written here with counts
worked by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.wanli_generated import seeds_diagnosis as diag

NEG = ("a man runs", "a man does not run")          # negation feature (and no full overlap)
PLAIN = ("a man runs", "a woman sleeps")             # no feature


def row(uid, pair, label, **meta):
    return {"uid": uid, "premise": pair[0], "hypothesis": pair[1], "label": label, "source": "t", "meta": meta}


def write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_seed_overlap_transmission_and_reviewed_make_up(tmp_path):
    world = tmp_path / "world0"
    # full: seeds s1 (negation, contradiction) and s2 (plain, neutral); variability 0.2 and 0.4
    write(world / "gen_full" / "stages" / "seeds.jsonl",
          [row("s1", NEG, "contradiction", variability=0.2), row("s2", PLAIN, "neutral", variability=0.4)])
    # s1's two pairs: one with negation; s2's two pairs: none -> 0.50 (n=2) vs 0.00 (n=2)
    write(world / "gen_full" / "review" / "reviewed.jsonl",
          [row("g1", NEG, "contradiction", seed_uid="s1", intended_label="contradiction"),
           row("g2", PLAIN, "neutral", seed_uid="s1", intended_label="contradiction"),
           row("g3", PLAIN, "neutral", seed_uid="s2", intended_label="neutral"),
           row("g4", PLAIN, "entailment", seed_uid="s2", intended_label="neutral")])
    # random seeds: s2 (shared with full) and s3 (plain, entailment)
    write(world / "gen_randseeds" / "stages" / "seeds.jsonl",
          [row("s2", PLAIN, "neutral", variability=0.4), row("s3", PLAIN, "entailment", variability=0.1)])
    write(world / "gen_randseeds" / "review" / "reviewed.jsonl",
          [row("h1", NEG, "neutral", seed_uid="s3", intended_label="entailment")])
    out = tmp_path / "d.md"
    diag.main([str(tmp_path), str(out)])
    text = out.read_text()
    assert "Seeds shared by the two variants: 1 of 2 / 2." in text
    # seeds: mean variability 0.300; negation prevalence 0.5, P(contradiction | negation) 1.00
    assert "| full (ambiguous seeds) | 2 | 0.300 | 0.500 / 1.00 |" in text
    assert "| random seeds | 2 | 0.250 | 0.000 / – |" in text
    assert "| full (ambiguous seeds) | 0.50 (n=2) vs 0.00 (n=2) |" in text
    assert "| random seeds | – (n=0) vs 1.00 (n=1) |" in text
    # reviewed full W: shares e 0.25, n 0.50, c 0.25; reviewed = intended for g1, g3: 0.50; negation 0.25 / 1.00
    assert "| full (ambiguous seeds) | 4 | 0.25 | 0.50 | 0.25 | 0.50 | 0.250 / 1.00 |" in text


def test_missing_generation_names_the_command(tmp_path):
    (tmp_path / "world0" / "gen_randseeds").mkdir(parents=True)
    (tmp_path / "world0" / "gen_full").mkdir(parents=True)
    with pytest.raises(SystemExit, match=r"seeds.jsonl: missing; run `TRAIN=0"):
        diag.main([str(tmp_path), str(tmp_path / "d.md")])
