"""Per world seed and variant: what each generation stage took in and kept, and what the review kept, as JSON.

    python -m experiments.wanli_generated.counts <scratch> <out.json>
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def counts(scratch: Path) -> dict:
    out = {}
    for world in sorted(scratch.glob("world*")):
        entry = {"n_add": int((world / "n_add").read_text())} if (world / "n_add").is_file() else {}
        for gen in sorted(p for p in world.glob("gen_*") if p.is_dir()):
            manifest = gen / "manifest.json"
            stages = json.loads(manifest.read_text())["stages"] if manifest.is_file() else {}
            review = gen / "review" / "review_report.json"
            entry[gen.name[4:]] = {
                "stages": {k: [v.get("count_in"), v.get("count_out")] for k, v in stages.items()},
                "review": json.loads(review.read_text()) if review.is_file() else None}
        annot = world / "annotator" / "metrics.csv"
        if annot.is_file():
            rows = [line.split(",") for line in annot.read_text().splitlines()[1:]]
            entry["annotator_acc"] = {r[2]: round(float(r[4]), 4) for r in rows if r[3] == "acc"}
        out[world.name] = entry
    return out


if __name__ == "__main__":
    Path(sys.argv[2]).write_text(json.dumps(counts(Path(sys.argv[1])), indent=1) + "\n")
