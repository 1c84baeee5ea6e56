"""The card's provenance section, written from a run folder's manifest.json and config.yaml: pipeline
and stages with their yields and drop reasons, generators, sampling settings, seeds, review agreement,
cost, and the nliforge version and git commit. Every number is the manifest's, not recomputed."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from nliforge.engine.run_folder import source_commit

SKIPPED_CONFIG = ("hydra", "paths", "logger")     # where no seed of the data lives


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def drops_text(drops: Mapping[str, int]) -> str:
    """Every drop reason with its count, most frequent first (the manifest's full list, not cut)."""
    return ", ".join(f"{k}={v}" for k, v in sorted(drops.items(), key=lambda kv: (-kv[1], kv[0]))) or "-"


def ratio(out: int, count_in: int) -> str:
    return f"{out / count_in:.1%}" if count_in else "-"


def stages_section(manifest: Mapping) -> str:
    """Pipeline, stage order and each stage's in/out counts, yield (out/in) and drop reasons."""
    stages = manifest.get("stages", {})
    order = manifest.get("stage_order") or list(stages)
    rows = [(name, e.get("count_in", 0), e.get("count_out", 0), ratio(e.get("count_out", 0), e.get("count_in", 0)),
             drops_text(e.get("drops", {}))) for name in order if (e := stages.get(name))]
    final = manifest.get("final") or {}
    tail = f"\n\nThe final dataset is stage `{final['stage']}`: {final['count']} records." if final else ""
    return (f"### Pipeline\n\n`{manifest.get('pipeline', '?')}`: " + " → ".join(f"`{n}`" for n in order)
            + "\n\nFilter yields and drop reasons per stage (out/in above 100% is a fan-out stage):\n\n"
            + table(("stage", "in", "out", "out/in", "drops"), rows) + tail)


def generators_section(manifest: Mapping) -> str:
    """The generator(s) the manifest records: one (`generator`) or several by name (`generators`)."""
    named = dict(manifest.get("generators") or {})
    if manifest.get("generator"):
        named = {"generator": manifest["generator"], **named}
    rows = [(name, ", ".join(f"{k}={v}" for k, v in sorted(g.items()))) for name, g in named.items()
            if isinstance(g, Mapping)]
    return "### Generators\n\n" + (table(("name", "settings"), rows) if rows else "none recorded")


def sampling_rows(config: Mapping) -> list[tuple[str, str]]:
    """Every `pipeline.<stage>.sampling` node of the run's config, with the stage's n and per_request."""
    rows = []
    for stage, node in (config.get("pipeline") or {}).items():
        if isinstance(node, Mapping) and isinstance(node.get("sampling"), Mapping):
            extra = {k: node[k] for k in ("n", "per_request") if k in node}
            settings = {**node["sampling"], **extra}
            rows.append((f"pipeline.{stage}", ", ".join(f"{k}={v}" for k, v in settings.items())))
    return rows


def seeds(config: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every `seed` / `*_seed` setting of the config (dotted key, value), outside hydra, paths and logger."""
    if isinstance(config, Mapping):
        for key, value in config.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if not prefix and key in SKIPPED_CONFIG:
                continue
            if (key == "seed" or str(key).endswith("_seed")) and not isinstance(value, (Mapping, list)):
                yield path, value
            else:
                yield from seeds(value, path)
    elif isinstance(config, list):
        for i, value in enumerate(config):
            yield from seeds(value, f"{prefix}.{i}")


def cost_section(manifest: Mapping) -> str:
    """The ledger: requests sent and answered from cache, tokens and USD cost per entry, and the total."""
    ledger = manifest.get("ledger") or {}
    if not ledger:
        return "### Cost\n\nno LLM calls recorded"
    keys = ("sent", "cached", "prompt_tokens", "completion_tokens")
    rows = [(name, *(e.get(k, 0) for k in keys), f"{e.get('cost', 0.0):.4f}") for name, e in ledger.items()]
    total = ["**total**", *(sum(e.get(k, 0) for e in ledger.values()) for k in keys),
             f"{sum(e.get('cost', 0.0) for e in ledger.values()):.4f}"]
    return "### Cost\n\n" + table(("ledger entry", "requests sent", "from cache", "prompt tokens",
                                   "completion tokens", "cost (USD)"), [*rows, total])


def review_section(review: Mapping) -> str:
    """Review agreement of a reviewed set (review_report.json); says so when the set was not reviewed."""
    if not review:
        return "### Review\n\nnot reviewed: this is the generated set as the pipeline's filters left it"
    kappa = review.get("kappa")
    lines = [f"- mode: {review.get('mode', '?')}", f"- examples reviewed: {review.get('examples', '?')}",
             f"- kept: {review.get('kept', '?')}"]
    if kappa is not None:
        lines.append(f"- Cohen's kappa between the two annotators: {kappa:.3f}")
    if review.get("counts"):
        lines.append("- outcomes: " + drops_text(review["counts"]))
    if review.get("reviewer"):
        lines.append(f"- reviewer: {review['reviewer']} ({review.get('judgements', '?')} judgements)")
    return "### Review\n\n" + "\n".join(lines)


def software_section(manifest: Mapping) -> str:
    """nliforge's version and git commit that made the run, the libraries, and the publishing commit."""
    versions = dict(manifest.get("versions") or {})
    commit = versions.pop("nliforge_commit", None) or "not recorded in manifest.json"
    rows = [("nliforge", versions.pop("nliforge", "?")), ("git commit", commit), *sorted(versions.items())]
    return ("### Software\n\n" + table(("package", "version"), rows)
            + f"\n\nCard written by nliforge-publish at commit {source_commit() or 'unknown (not a git checkout)'}.")


def provenance_markdown(manifest: Mapping, config: Mapping, review: Mapping) -> str:
    """The whole provenance section."""
    sampling = sampling_rows(config)
    seed_rows = list(seeds(config))
    return "\n\n".join([
        "## Provenance", stages_section(manifest), generators_section(manifest),
        "### Sampling\n\n" + (table(("stage", "settings"), sampling) if sampling else "none in the config"),
        "### Seeds\n\n" + (table(("setting", "value"), seed_rows) if seed_rows else "none in the config"),
        review_section(review), cost_section(manifest), software_section(manifest)])
