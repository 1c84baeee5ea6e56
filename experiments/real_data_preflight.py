"""Before a real-data experiment spends GPU hours: is every training set it needs in the local HF cache?

    python -m experiments.real_data_preflight mnli wanli anli_r1 ...     # names of conf/data/train_sets/*.yaml

Prints each set's Hub id, split and row count; for every set that cannot be read, one line naming its
config file and the command that downloads it, then exits 2. Evaluation sets are not checked: the
suites skip a missing one with a warning (`skip_missing`), training sets cannot be skipped.
"""

from __future__ import annotations

import sys
from pathlib import Path

from omegaconf import OmegaConf

from nliforge.errors import NLIDataError
from nliforge.data.hub import hub_id, hub_table

CONF = Path(__file__).resolve().parents[1] / "conf" / "data" / "train_sets"


def set_spec(name: str) -> dict:
    path = CONF / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in CONF.glob("*.yaml")))
        raise SystemExit(f"{path}: no such training-set config; known: {known}")
    spec = OmegaConf.to_container(OmegaConf.load(path))
    if name not in spec:
        raise SystemExit(f"{path}: expected a top-level key {name!r}")
    return spec[name]


def download_hint(spec: dict, where: str) -> str:
    try:
        path = hub_id(spec, where)
    except NLIDataError:
        return f"give {where} a `path` (a Hub id or a local folder)"
    return (f"HF_HUB_OFFLINE=0 HF_DATASETS_OFFLINE=0 python -c \"import datasets; "
            f"datasets.load_dataset({path!r}, {spec.get('config')!r}, split={spec.get('split', 'train')!r})\"")


def main(names: list[str]) -> int:
    if not names:
        raise SystemExit(__doc__.splitlines()[2].strip())
    missing = []
    for name in names:
        spec, where = set_spec(name), f"conf/data/train_sets/{name}.yaml"
        if spec.get("loader") != "hub":
            print(f"{name}: loader {spec.get('loader')!r}, not a Hub set: not checked")
            continue
        try:
            table, path, split = hub_table(spec, where)
        except NLIDataError as err:
            missing.append(f"{name}: {err}\n    download: {download_hint(spec, where)}")
            continue
        print(f"{name}: {path} [{split}] {len(table):,} rows")
    if missing:
        print(f"{len(missing)} of {len(names)} training sets cannot be read; nothing was run:", file=sys.stderr)
        print("\n".join(missing), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
