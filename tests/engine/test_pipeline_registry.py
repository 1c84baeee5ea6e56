"""The pipeline registry (nliforge.engine.registry): a toy pipeline from outside the package, built from
the files of docs/adding-a-pipeline.md and registered through an entry point (a `.dist-info` folder on
sys.path, as `pip install` would leave), runs through `nliforge.generate.generate` and the console
script; a stage reading a field no stage before it writes is refused before any file is written; every
built-in pipeline is found through the registry with its declared stages matching its YAML."""

from __future__ import annotations

import json
import logging
import re
import sys
import tomllib
import warnings
from pathlib import Path

import pytest
import yaml
from omegaconf import OmegaConf

from conftest import CONF_DIR, compose_config, compose_plain
from nliforge.errors import NLIDataError
from nliforge.generate import generate
from nliforge.engine import registry
from nliforge.engine.stages import PipelineSpec, check_fields, stage
from nliforge.utils.cli import with_user_config_path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "adding-a-pipeline.md"
PAIRS = [  # two labeled pairs, a neutral one and an unlabeled one (toy_copy drops it)
    {"uid": "p1", "premise": "A dog runs in the park.", "hypothesis": "An animal is outside.", "label": "entailment"},
    {"uid": "p2", "premise": "A man sleeps on a bench.", "hypothesis": "The man is awake.", "label": "contradiction"},
    {"uid": "p3", "premise": "Two kids play chess.", "hypothesis": "They are brothers.", "label": "neutral"},
    {"uid": "p4", "premise": "A woman sings.", "hypothesis": "Someone makes a sound.", "label": None},
]


def guide_blocks() -> dict[str, str]:
    """The guide's python/yaml/toml code blocks, keyed by the path in their first line (`# <path>`)."""
    blocks = re.findall(r"```(\w*)\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.S)
    return {body.splitlines()[0][2:].strip(): body for lang, body in blocks
            if lang in ("python", "yaml", "toml") and body.startswith("# ")}


def write_dist_info(site: Path, name: str, version: str, entry_points: dict[str, dict[str, str]]) -> Path:
    """What `pip install` leaves for the entry points: <name>-<version>.dist-info with METADATA and
    entry_points.txt."""
    dist = site / f"{name.replace('-', '_')}-{version}.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    sections = [f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in items.items())
                for group, items in entry_points.items()]
    (dist / "entry_points.txt").write_text("\n".join(sections))
    return dist


@pytest.fixture
def toy_site(tmp_path, monkeypatch) -> Path:
    """The guide's toy package (toy_nli: module and YAML) and its entry point, in a folder on sys.path."""
    blocks = guide_blocks()
    site = tmp_path / "site"
    for rel in ("toy_nli/__init__.py", "toy_nli/conf/pipeline/toy.yaml"):
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(blocks[rel], encoding="utf-8")
    project = tomllib.loads(blocks["pyproject.toml"])["project"]
    write_dist_info(site, project["name"], project["version"], project["entry-points"])
    monkeypatch.syspath_prepend(str(site))
    yield site
    sys.modules.pop("toy_nli", None)


def toy_config(tmp_path: Path, extra: list[str] = ()):
    """`pipeline=toy input=<pairs.jsonl>` composed with the registered pipelines' config folders on the
    search path, as nliforge-generate composes it."""
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({**p, "source": "hand", "meta": {}}) + "\n" for p in PAIRS))
    overrides = with_user_config_path(["pipeline=toy", f"input={pairs}", *extra], env="",
                                      extra=registry.pipeline_conf_dirs())
    return compose_config("generate", overrides, tmp_path / "run", tmp_path / "cache")


EXPECTED = [  # by hand: prefix + hypothesis with its first letter lowered; entailment <-> contradiction
    {"uid": "toy-p1", "premise": "A dog runs in the park.", "hypothesis": "It is not true that an animal is outside.",
     "label": "contradiction", "source": "toy_negated",
     "meta": {"original_uid": "p1", "original_hypothesis": "An animal is outside."}},
    {"uid": "toy-p2", "premise": "A man sleeps on a bench.", "hypothesis": "It is not true that the man is awake.",
     "label": "entailment", "source": "toy_negated",
     "meta": {"original_uid": "p2", "original_hypothesis": "The man is awake."}},
    {"uid": "toy-p3", "premise": "Two kids play chess.", "hypothesis": "It is not true that they are brothers.",
     "label": "neutral", "source": "toy_negated",
     "meta": {"original_uid": "p3", "original_hypothesis": "They are brothers."}},
]


def read_dataset(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "dataset.jsonl").read_text().splitlines()]


def test_the_toy_pipeline_from_outside_the_package_is_registered(toy_site):
    assert registry.registered()["toy"] == "toy_nli:PIPELINE"
    spec = registry.load_pipeline("toy")
    assert not spec.stages[1].run.__module__.startswith("nliforge")
    assert [s.name for s in spec.stages] == ["input", "toy_copy", "toy_negate"]
    assert registry.pipeline_conf_dirs() == [toy_site / "toy_nli" / "conf"]
    assert spec.config_file == toy_site / "toy_nli" / "conf" / "pipeline" / "toy.yaml"


def test_the_config_folder_and_the_help_line_come_without_importing_the_package(toy_site):
    sys.modules.pop("toy_nli", None)
    assert registry.pipeline_conf_dirs() == [toy_site / "toy_nli" / "conf"]
    assert registry.help_line() == ("built in: wanli, disco, zaug, zfilter, longtext; "
                                    "installed: toy (toy-nli 0.1.0)")
    assert "toy_nli" not in sys.modules


def test_a_config_folder_elsewhere_is_read_from_the_spec(toy_site, tmp_path):
    """YAML kept outside the module's conf/: the package is imported to read its PipelineSpec.conf_dir."""
    moved = tmp_path / "elsewhere"
    (toy_site / "toy_nli" / "conf").rename(moved)
    init = toy_site / "toy_nli" / "__init__.py"
    init.write_text(init.read_text().replace('conf_dir=str(Path(__file__).parent / "conf")', f'conf_dir={str(moved)!r}'))
    sys.modules.pop("toy_nli", None)
    assert registry.pipeline_conf_dirs() == [moved] and "toy_nli" in sys.modules


def test_module_folder_finds_packages_and_modules_without_running_them(tmp_path, monkeypatch):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("raise RuntimeError('pkg ran')\n")
    (tmp_path / "pkg" / "sub" / "__init__.py").write_text("raise RuntimeError('sub ran')\n")
    (tmp_path / "pkg" / "single.py").write_text("raise RuntimeError('single ran')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert registry.module_folder("pkg") == tmp_path / "pkg"
    assert registry.module_folder("pkg.sub") == tmp_path / "pkg" / "sub"
    assert registry.module_folder("pkg.single") == tmp_path / "pkg"
    assert registry.module_folder("pkg.missing") is None and registry.module_folder("no_such_top") is None
    assert not {"pkg", "pkg.sub", "pkg.single"} & set(sys.modules)


def test_the_toy_pipeline_runs_and_writes_the_negated_pairs(toy_site, tmp_path):
    manifest = generate(toy_config(tmp_path))
    assert manifest["pipeline"] == "toy"
    assert manifest["stage_order"] == ["input", "toy_copy", "toy_negate"]
    copy = manifest["stages"]["toy_copy"]
    assert (copy["count_in"], copy["count_out"], copy["drops"]) == (4, 3, {"unlabeled": 1})
    assert manifest["final"] == {"path": "dataset.jsonl", "stage": "toy_negate", "count": 3}
    assert read_dataset(tmp_path / "run") == EXPECTED


def test_the_console_script_finds_the_toy_pipelines_yaml(toy_site, tmp_path, monkeypatch):
    """`nliforge-generate pipeline=toy` (in process): the toy's config folder is on the search path. The
    logging and warning settings the entry point makes (Hydra's handlers, quiet libraries) are undone."""
    from hydra.core.global_hydra import GlobalHydra

    from nliforge.generate import main

    cfg = toy_config(tmp_path)   # writes pairs.jsonl
    run = tmp_path / "cli_run"
    monkeypatch.setattr(sys, "argv", ["nliforge-generate", "pipeline=toy", f"input={cfg.input}",
                                      "pipeline.toy_negate.prefix=No way that", f"hydra.run.dir={run}"])
    root, handlers, level = logging.getLogger(), list(logging.getLogger().handlers), logging.getLogger().level
    try:
        with warnings.catch_warnings():
            main()
    finally:
        GlobalHydra.instance().clear()
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)
            handler.close()
        root.handlers[:] = handlers
        root.setLevel(level)
    assert [r["hypothesis"] for r in read_dataset(run)] == [
        "No way that an animal is outside.", "No way that the man is awake.", "No way that they are brothers."]


def test_a_stage_reading_a_field_no_earlier_stage_writes_is_refused_before_any_file(toy_site, tmp_path):
    cfg = toy_config(tmp_path, ["pipeline.stages=[input,toy_negate]"])
    with pytest.raises(NLIDataError) as err:
        generate(cfg)
    shown = re.search(r"```\nerror: (.*)\n```", GUIDE.read_text(encoding="utf-8"))[1]   # the guide shows it
    assert str(err.value) == shown == ("pipeline 'toy': stage 'toy_negate' reads original_hypothesis, "
                                       "original_label, source_uid, which no stage before it writes "
                                       "(pipeline.stages: input, toy_negate)")
    assert not (tmp_path / "run").exists()


def test_stage_names_belong_to_their_pipeline(toy_site, tmp_path):
    """WANLI's `prompts` is not a stage of the toy; Z-Aug and z-filter each have their own `zfilter`."""
    with pytest.raises(NLIDataError, match=r"unknown stage\(s\) \['prompts'\] for pipeline 'toy'; "
                                           r"valid: input, toy_copy, toy_negate$"):
        generate(toy_config(tmp_path, ["pipeline.stages=[input,prompts]"]))
    assert not (tmp_path / "run").exists()
    zaug, zfilter = registry.load_pipeline("zaug"), registry.load_pipeline("zfilter")
    assert zaug.table()["zfilter"] is not zfilter.table()["zfilter"]
    assert zfilter.table()["zfilter"].inputs == ("input", "zfilter_seed")


def test_field_check_names_pipeline_stage_and_field():
    a = stage("a", writes=("uid", "text"))(lambda ctx: None)
    b = stage("b", reads=("uid", "polarity"))(lambda ctx: None)
    check_fields("p", [a])
    with pytest.raises(NLIDataError) as err:
        check_fields("p", [a, b])
    assert str(err.value) == ("pipeline 'p': stage 'b' reads polarity, which no stage before it writes "
                              "(pipeline.stages: a, b)")
    with pytest.raises(NLIDataError, match="stage 'b' reads uid, polarity,"):
        check_fields("p", [b, a])


def test_two_stages_of_one_pipeline_with_one_name_are_refused():
    first = stage("s")(lambda ctx: None)
    second = stage("s")(lambda ctx: None)
    PipelineSpec("ok", (first,), optional=(first,))   # one stage listed twice is one stage
    with pytest.raises(NLIDataError, match=r"^pipeline 'bad': two stages named 's' \(.*<lambda> and .*<lambda>\)"):
        PipelineSpec("bad", (first, second))


def test_a_name_registered_twice_or_misnamed_is_refused(toy_site):
    write_dist_info(toy_site, "other-nli", "1.0", {registry.GROUP: {"wanli": "toy_nli:PIPELINE"}})
    with pytest.raises(NLIDataError, match="pipeline 'wanli' is registered twice "
                                           r"\(nliforge.pipelines.wanli.pipeline:PIPELINE and toy_nli:PIPELINE\)"):
        registry.registered()
    (toy_site / "other_nli-1.0.dist-info" / "entry_points.txt").write_text(
        f"[{registry.GROUP}]\nother = toy_nli:PIPELINE\nbroken = toy_nli:NOTHING\n")
    with pytest.raises(NLIDataError, match="other = toy_nli:PIPELINE: it declares pipeline 'toy'"):
        registry.load_pipeline("other")
    with pytest.raises(NLIDataError, match="broken = toy_nli:NOTHING: cannot load it"):
        registry.load_pipeline("broken")
    with pytest.raises(NLIDataError, match=r"pipeline.name='nope': no pipeline registered .* broken, disco,"):
        registry.load_pipeline("nope")


def pyproject_entry_points() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project["entry-points"][registry.GROUP]


@pytest.mark.parametrize("name", sorted(registry.BUILTIN))
def test_every_builtin_pipeline_is_registered_with_its_yamls_stages(name):
    assert pyproject_entry_points()[name] == registry.BUILTIN[name]
    spec = registry.load_pipeline(name)
    conf = yaml.safe_load(spec.config_file.read_text())
    assert spec.config_file == Path(CONF_DIR).resolve() / "pipeline" / f"{name}.yaml"
    assert conf["name"] == name
    assert [s.name for s in spec.stages] == conf["stages"]
    spec.resolve(conf["stages"])   # the default list passes the field check
    cfg = compose_plain("generate", [f"pipeline={name}"])
    assert all(OmegaConf.select(cfg, slot) is not None for slot in spec.generator_slots), spec.generator_slots


def test_the_builtins_are_exactly_the_packaged_pipeline_yamls():
    assert set(pyproject_entry_points()) == set(registry.BUILTIN)
    assert {p.stem for p in (Path(CONF_DIR) / "pipeline").glob("*.yaml")} == set(registry.BUILTIN)


def experiment_stage_lists() -> list[tuple[str, list[str]]]:
    """(file, its `pipeline.stages`) for every generate_experiment config that sets the stage list."""
    out = []
    for path in sorted((Path(CONF_DIR) / "generate_experiment").glob("*.yaml")):
        stages = ((yaml.safe_load(path.read_text()) or {}).get("pipeline") or {}).get("stages")
        if stages is not None:
            out.append((path.stem, stages))
    return out


@pytest.mark.parametrize("stem,stages", experiment_stage_lists(), ids=[s for s, _ in experiment_stage_lists()])
def test_every_experiments_stage_list_resolves_in_its_pipeline(stem, stages):
    """The demos' and experiments' lists (a stand-in `generator_lm`, `explain`, Z-Aug stopped after the
    confidence filter) name stages of their own pipeline, in an order where every field a stage reads is
    written before it."""
    name = next(n for n in registry.BUILTIN if stem.startswith(f"{n}_"))
    assert len(registry.load_pipeline(name).resolve(stages)) == len(stages) > 0
