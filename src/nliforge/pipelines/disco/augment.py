"""The DISCO augmentation protocol (§5.1) as a side stage: the counterfactuals D^c, the
perturbed subset D^s, D^a = D^s ∪ D^c and D_train = D^b ∪ D^a (no duplicates), written under
`<run>/augment/` and registered as training sets `<name>_counterfactuals`, `<name>_augmented` and
`<name>_train`, so that `nliforge-train 'data/train_sets=[<name>_train]'` trains on them."""

from __future__ import annotations

import logging
import re
from pathlib import Path

from nliforge.data.combine import augmentation_sets
from nliforge.data.jsonl import write_jsonl
from nliforge.data.records import record_from_mapping
from nliforge.engine.shared_stages import classifier_run
from nliforge.engine.stages import RECORD_FIELDS, StageContext, StageOutput, stage

log = logging.getLogger(__name__)
REGISTERED = ("counterfactuals", "augmented", "train")


def default_set_name(run_dir: Path) -> str:
    """`disco_<run folder name>` with anything but letters, digits and underscores made an underscore."""
    return "disco_" + re.sub(r"[^A-Za-z0-9_]", "_", Path(run_dir).resolve().name)


@stage("augment", inputs=("classifier", "disco_source", "teacher_filter"), side=True, reads=RECORD_FIELDS,
       writes=("uid", "path", "count", "train_set"))
def augment_stage(ctx: StageContext) -> StageOutput:
    """Write the four sets; register three of them as named training sets when `register` is on."""
    from nliforge.data.register import register_train_set
    from nliforge.utils.home import user_conf_dir

    s = ctx.settings
    base = classifier_run(ctx.cfg).train_records()
    subset = [record_from_mapping(r, "stage disco_source") for r in ctx.rows("disco_source")]
    counterfactuals = [record_from_mapping(r, "stage teacher_filter") for r in ctx.rows("teacher_filter")]
    sets = augmentation_sets(base, subset, counterfactuals)
    folder = ctx.folder.root / "augment"
    name = s.get("name") or default_set_name(ctx.folder.root)
    conf = Path(s.register_dir) if s.get("register_dir") else user_conf_dir()
    rows = []
    for key, records in sets.items():
        path = write_jsonl(records, folder / f"{key}.jsonl")
        row = {"uid": key, "path": str(path), "count": len(records), "train_set": None}
        if bool(s.register) and key in REGISTERED:
            row["train_set"] = f"{name}_{key}"
            register_train_set(row["train_set"], path, conf, str(ctx.folder.root.resolve()),
                               tool="nliforge-generate pipeline=disco (augment)")
        rows.append(row)
    log.info("augmentation sets: %s", ", ".join(f"{r['uid']}={r['count']}" for r in rows))
    return StageOutput(rows, count_in=len(base) + len(counterfactuals),
                       extra={"base": len(base), **{r["uid"]: r["count"] for r in rows}})
