"""nliforge-publish run=<folder> repo_id=<user/name>: a generated or reviewed set in the Hugging Face
Hub's dataset layout (data/<split>-00000-of-00001.parquet + a README.md card whose provenance comes
from the run's manifest), uploaded with huggingface_hub unless dry_run (the default).
`publish(cfg)` is the pure function; `main` is the thin Hydra entry point."""

from __future__ import annotations

import logging
from pathlib import Path

import hydra
from omegaconf import DictConfig, OmegaConf

from nliforge.errors import NLIDataError
from nliforge.engine.run_folder import RunFolder
from nliforge.publishing.card import write_card
from nliforge.publishing.local_paths import public_set, without_local_paths
from nliforge.publishing.dataset_files import data_file, label_names, load_set, write_split
from nliforge.publishing.upload import check_repo_id, upload_folder
from nliforge.utils.atomic import build_folder
from nliforge.utils.cli import CONF_DIR, one_line_errors, run_cli

log = logging.getLogger("nliforge.publish")


def read_run(run: Path) -> tuple[dict, dict]:
    """The run folder's manifest and resolved config; a clear error when it is not a run folder."""
    if not (run / "manifest.json").is_file() or not (run / "config.yaml").is_file():
        raise NLIDataError(f"run={run}: not a generation run folder (expected manifest.json and config.yaml "
                           "written by nliforge-generate)")
    return RunFolder(run).manifest(), OmegaConf.to_container(OmegaConf.load(run / "config.yaml"), resolve=False)


def publish(cfg: DictConfig) -> dict:
    """Write the Hub-layout folder (atomically: a failure leaves the old folder as it was) and upload it
    unless dry_run. Returns the folder, its files with sizes, split counts and, when uploaded, the URLs."""
    run = Path(str(cfg.run))
    repo_id = check_repo_id(str(cfg.repo_id))
    manifest, config = read_run(run)
    splits = OmegaConf.to_container(cfg.splits, resolve=True) if cfg.get("splits") else None
    chosen = public_set(load_set(run, str(cfg.set), manifest, splits), run)   # no path of this machine
    manifest, config = without_local_paths(manifest, run), without_local_paths(config, run)
    names = label_names(chosen.splits)
    meta = OmegaConf.to_container(cfg.card, resolve=True)
    meta["pretty_name"] = meta.get("pretty_name") or repo_id.split("/")[1]
    out = Path(str(cfg.out)) if cfg.get("out") else run / "hub"

    def build(tmp: Path) -> None:
        sizes = {split: write_split(recs, names, tmp / data_file(split)) for split, recs in chosen.splits.items()}
        write_card(tmp / "README.md", meta, chosen, names, sizes, manifest, config, run)

    build_folder(out, build)
    files = {str(p.relative_to(out)): p.stat().st_size for p in sorted(out.rglob("*")) if p.is_file()}
    result = {"folder": out, "repo_id": repo_id, "set": chosen.kind, "source": str(chosen.path), "files": files,
              "splits": {k: len(v) for k, v in chosen.splits.items()}, "labels": names, "uploaded": False}
    if not cfg.dry_run:
        message = cfg.get("commit_message") or f"nliforge-publish {manifest.get('pipeline', '')} run {run.name}"
        result.update(upload_folder(out, repo_id, bool(cfg.private), cfg.hub.get("endpoint"), str(message)))
        result["uploaded"] = True
    return result


def summary(result: dict) -> str:
    """What was written (and uploaded), for the console."""
    lines = [f"{result['set']} set {result['source']} -> {result['folder']}",
             "splits: " + ", ".join(f"{k}={v}" for k, v in result["splits"].items()),
             "labels: " + ", ".join(result["labels"])]
    lines += [f"  {name}  {size} bytes" for name, size in result["files"].items()]
    if result["uploaded"]:
        lines.append(f"uploaded to {result['repo_url']} ({result['commit_url']})")
    else:
        lines.append(f"dry run: nothing uploaded; dry_run=false uploads to datasets/{result['repo_id']}")
    return "\n".join(lines)


@hydra.main(version_base="1.3", config_path=CONF_DIR, config_name="publish")
def _hydra_main(cfg: DictConfig) -> None:
    from huggingface_hub.errors import HfHubHTTPError

    with one_line_errors(NLIDataError, HfHubHTTPError):
        result = publish(cfg)
    print(summary(result))


def main() -> None:
    """Console script `nliforge-publish`."""
    run_cli(_hydra_main, CONF_DIR)


if __name__ == "__main__":
    main()
