"""Product of experts and partial-input models: the PoE loss by hand, the stopped gradient, the
main head alone at test, and both through train(cfg) on the small world; the frozen, separately
trained bias expert (`model.poe.bias_model`): its loss by hand, a run on a hypothesis-only run's
folder, and the refusals before the run folder gets any file."""

import csv
import json
import logging
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F
from omegaconf import open_dict

from nliforge.data import NLIDataError, Record
from nliforge.data.datamodule import EncodedNLI, NLIDataModule, PadCollator
from nliforge.data.labels import LABEL2ID
from nliforge.data.training_set import build_training_set
from nliforge.evaluate import evaluate
from nliforge.models.backbone import build_backbone
from nliforge.models.classifier import NLIClassifier
from nliforge.models.poe import BiasTable, PoEClassifier, check_bias_model, poe_loss, poe_settings
from nliforge.models.predict import load_classifier, predict_probs
from nliforge.train import train
from nliforge.world.config import WorldConfig
from nliforge.world.generator import generate_split

from conftest import SMALL_WORLD, compose_config

TEXTS = ["A dog runs in the park.", "An animal runs.", "Nobody is sleeping.", "The man is tall."] * 30
RECORDS = [Record("u0", "A dog runs in the park.", "An animal runs.", "entailment"),
           Record("u1", "The man is tall.", "Nobody is sleeping in the park.", "contradiction"),
           Record("u2", "Nobody is sleeping.", "The man is tall.", "neutral")]


def _log_softmax(row):
    norm = math.log(sum(math.exp(v) for v in row))
    return [v - norm for v in row]


def test_poe_loss_matches_hand_computation():
    main = [[2.0, 0.5, -1.0], [0.0, 1.0, 0.0], [3.0, 0.0, 0.0]]
    bias = [[1.0, 0.0, 0.0], [0.2, 0.3, 2.0], [0.0, 0.0, 5.0]]
    labels = [0, 2, -1]  # the third row is unlabelled: ignored by both terms
    beta, gamma = 2.0, 0.4
    joint_nll, bias_nll = [], []
    for m, b, y in zip(main[:2], bias[:2], labels[:2]):
        joint = [lm + beta * lb for lm, lb in zip(_log_softmax(m), _log_softmax(b))]
        joint_nll.append(-_log_softmax(joint)[y])  # p_joint = softmax(log p_main + beta log p_bias)
        bias_nll.append(-_log_softmax(b)[y])
    expected = sum(joint_nll) / 2 + gamma * sum(bias_nll) / 2
    loss, parts = poe_loss(torch.tensor(main), torch.tensor(bias), torch.tensor(labels), beta, gamma)
    assert loss.item() == pytest.approx(expected, rel=1e-6)
    assert parts["joint"].item() == pytest.approx(sum(joint_nll) / 2, rel=1e-6)
    assert parts["bias"].item() == pytest.approx(sum(bias_nll) / 2, rel=1e-6)
    # beta = 0 leaves plain cross-entropy of the main head plus the bias term
    plain, _ = poe_loss(torch.tensor(main), torch.tensor(bias), torch.tensor(labels), 0.0, 0.0)
    assert plain.item() == pytest.approx(F.cross_entropy(torch.tensor(main), torch.tensor(labels),
                                                         ignore_index=-1).item(), rel=1e-6)


def _module_and_batch(arch: str, seed: int = 0):
    torch.manual_seed(seed)
    model, tok, perm = build_backbone({"kind": "tiny", "arch": arch}, TEXTS)
    module = PoEClassifier(model, label_permutation=perm, beta=1.0, gamma=1.0)
    data = EncodedNLI(RECORDS, tok, 64, hypothesis_view=True)
    return module, PadCollator(tok.pad_token_id)([data[i] for i in range(len(data))]), tok


@pytest.mark.parametrize("arch", ["roberta", "bert", "deberta-v2"])
def test_bias_head_sends_no_gradient_into_encoder(arch):
    module, batch, _ = _module_and_batch(arch)
    F.cross_entropy(module.bias_logits(batch), batch["labels"]).backward()
    grads = [p.grad for p in module.model.parameters()]
    assert all(g is None or not g.abs().sum() for g in grads)
    assert module.hyp_head.weight.grad.abs().sum() > 0
    # the main term, by contrast, does train the shared encoder
    module.zero_grad()
    poe_loss(module(batch), module.bias_logits(batch), batch["labels"])[0].backward()
    assert sum(float(p.grad.abs().sum()) for p in module.model.parameters() if p.grad is not None) > 0


def test_bias_features_are_the_hypothesis_alone_first_token():
    module, batch, tok = _module_and_batch("roberta")
    module.eval()
    hyp = tok([r.hypothesis for r in RECORDS], padding=True, return_tensors="pt")
    assert torch.equal(batch["hyp_input_ids"], hyp["input_ids"])
    assert batch["hyp_input_ids"].shape[1] < batch["input_ids"].shape[1]  # padded to its own width
    direct = module.model(**hyp, output_hidden_states=True).hidden_states[-1][:, 0]
    assert torch.allclose(module.hypothesis_features(batch), direct, atol=1e-6)


def test_predict_probs_is_the_main_head_alone():
    module, batch, _ = _module_and_batch("roberta")
    with torch.no_grad():
        module.hyp_head.bias.copy_(torch.tensor([10.0, -10.0, 0.0]))  # a loud bias expert must not leak in
    module.eval()
    main = module.model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits.softmax(-1)
    assert torch.allclose(module.predict_probs(batch), main, atol=1e-6)
    without_view = {k: v for k, v in batch.items() if not k.startswith("hyp_")}
    assert torch.allclose(module.predict_probs(without_view), main, atol=1e-6)
    with pytest.raises(NLIDataError, match="hyp_input_ids"):
        module.bias_logits(without_view)


def test_input_setting_encodes_one_side_and_names_the_key():
    _, tok, _ = build_backbone({"kind": "tiny"}, TEXTS)
    hyp = EncodedNLI(RECORDS, tok, 64, input="hypothesis")
    prem = EncodedNLI(RECORDS, tok, 64, input="premise")
    assert hyp[1]["input_ids"] == tok(RECORDS[1].hypothesis)["input_ids"]
    assert prem[1]["input_ids"] == tok(RECORDS[1].premise)["input_ids"]
    assert "hyp_input_ids" not in hyp[1]
    with pytest.raises(NLIDataError, match=r"model.input='both'; valid: pair, hypothesis, premise"):
        EncodedNLI(RECORDS, tok, 64, input="both")


def test_poe_settings_are_checked():
    assert poe_settings({"poe": {"enabled": False}}) is None and poe_settings({}) is None
    assert poe_settings({"poe": {"enabled": True, "beta": 2, "gamma": 0.4}}) == {"beta": 2.0, "gamma": 0.4}
    with pytest.raises(NLIDataError, match=r"model.poe.beta=-1; expected a number >= 0"):
        poe_settings({"poe": {"enabled": True, "beta": -1}})
    with pytest.raises(NLIDataError, match=r"model.poe.enabled=true needs model.input=pair"):
        poe_settings({"input": "hypothesis", "poe": {"enabled": True}})


def _accs(path: Path) -> dict[str, float]:
    with path.open() as fh:
        return {r["eval_set"]: float(r["value"]) for r in csv.DictReader(fh) if r["metric"] == "acc"}


def test_poe_training_run_through_train(cfg_train):
    with open_dict(cfg_train):
        cfg_train.model.poe.enabled = True
        cfg_train.model.poe.beta, cfg_train.model.poe.gamma = 2.0, 0.4
        cfg_train.model.max_epochs = 1
    results = train(cfg_train)
    out = Path(cfg_train.paths.output_dir)
    assert _accs(out / "metrics.csv") == pytest.approx({k: v["acc"] for k, v in results.items()})
    state = torch.load(out / "checkpoints" / "last.ckpt", map_location="cpu", weights_only=False)["state_dict"]
    assert state["hyp_head.weight"].shape == (3, 128)
    logged = pd.concat(pd.read_csv(p) for p in out.glob("csv_logs/*/metrics.csv"))
    assert {"train/loss_joint", "train/loss_bias"} <= set(logged.columns)
    assert len(pd.read_parquet(out / "dynamics" / "epoch_000.parquet")) == 900


def _probs(folder: Path, records, view: str) -> torch.Tensor:
    model, tok, perm = build_backbone({"kind": "pretrained", "name_or_path": str(folder)})
    module = NLIClassifier(model, label_permutation=perm)
    return torch.from_numpy(predict_probs(module, records, datamodule=NLIDataModule([], tok, input=view)))


def test_hypothesis_only_model_trains_scores_and_evaluates(cfg_train, tmp_path, world_cache):
    with open_dict(cfg_train):
        cfg_train.model.input = "hypothesis"
        cfg_train.callbacks.dynamics.mode = "checkpoint"  # the dynamics pass must read the same view
    results = train(cfg_train)
    folder = Path(cfg_train.paths.output_dir) / "model"
    last = pd.read_parquet(Path(cfg_train.callbacks.dynamics.dir) / "epoch_001.parquet")
    train_records = sorted(build_training_set(cfg_train).records, key=lambda r: r.uid)
    assert last["uid"].tolist() == [r.uid for r in train_records]
    dyn = torch.tensor(last[["p_entailment", "p_neutral", "p_contradiction"]].to_numpy())
    assert torch.allclose(dyn, _probs(folder, train_records, "hypothesis"), atol=1e-4)
    # held-out biased data (another world seed): the planted artifacts live in the hypothesis,
    # so the hypothesis-only model beats chance (1/3); measured ~0.54 after 2 epochs
    held = generate_split(WorldConfig(seed=7, n_train=600, n_dev=10, n_test=10), "train_biased")
    gold = torch.tensor([LABEL2ID[r.label] for r in held])
    assert (_probs(folder, held, "hypothesis").argmax(-1) == gold).float().mean() > 0.4
    cfg = compose_config("evaluate", [f"model.backbone.name_or_path={folder}", "model.input=hypothesis",
                                      *SMALL_WORLD], tmp_path / "eval", world_cache)
    again = evaluate(cfg)
    assert {k: v["acc"] for k, v in again.items()} == pytest.approx({k: v["acc"] for k, v in results.items()})
    cfg = compose_config("evaluate", [f"model.backbone.name_or_path={folder}", *SMALL_WORLD],
                         tmp_path / "eval_pair", world_cache)
    with pytest.raises(NLIDataError, match=r"trained with model.input='hypothesis'; pass model.input=hypothesis"):
        evaluate(cfg)


# --- the frozen, separately trained bias expert (model.poe.bias_model) ---

@pytest.mark.filterwarnings("ignore:You are trying to `self.log\\(\\)`")   # training_step outside a Trainer
def test_frozen_expert_loss_is_the_joint_term_alone():
    main = [[2.0, 0.5, -1.0], [0.0, 1.0, 0.0], [3.0, 0.0, 0.0]]
    p_bias = [[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]]
    labels, beta = [0, 2, 1], 1.5
    expected = sum(-_log_softmax([lm + beta * math.log(pb) for lm, pb in zip(_log_softmax(m), b)])[y]
                   for m, b, y in zip(main, p_bias, labels)) / 3
    log_bias = torch.tensor(p_bias).log()
    loss, parts = poe_loss(torch.tensor(main), log_bias, torch.tensor(labels), beta, gamma=0.0)
    assert loss.item() == pytest.approx(expected, rel=1e-6) and set(parts) == {"joint"}
    # through the module: the log-probs are looked up by uid (the table's order is not the batch's)
    _, tok, perm = build_backbone({"kind": "tiny"}, TEXTS)
    torch.manual_seed(0)
    model, _, _ = build_backbone({"kind": "tiny"}, TEXTS)
    table = BiasTable("expert", [r.uid for r in RECORDS][::-1], log_bias.numpy()[::-1].copy())
    module = PoEClassifier(model, label_permutation=perm, beta=beta, gamma=0.7, bias_table=table)
    assert module.gamma == 0.0 and not hasattr(module, "hyp_head")
    data = EncodedNLI(RECORDS, tok, 64)   # labels e, c, n: the `labels` above
    batch = PadCollator(tok.pad_token_id)([data[i] for i in range(len(data))])
    assert batch["labels"].tolist() == labels and "hyp_input_ids" not in batch   # no hypothesis view needed
    module.eval()   # no dropout: the same main logits twice
    main_logits = module(batch).tolist()
    by_hand = sum(-_log_softmax([lm + beta * math.log(pb) for lm, pb in zip(_log_softmax(m), b)])[y]
                  for m, b, y in zip(main_logits, p_bias, labels)) / 3
    assert module.training_step(batch, 0)["loss"].item() == pytest.approx(by_hand, rel=1e-5)
    module.bias_rows.pop("u1")
    with pytest.raises(NLIDataError, match=r"model.poe.bias_model='expert': no bias log-probs for training uid 'u1'"):
        module.training_step(batch, 0)


def test_predict_probs_view_must_match_the_datamodule():
    model, tok, perm = build_backbone({"kind": "tiny"}, TEXTS)
    module = NLIClassifier(model, label_permutation=perm)
    with pytest.raises(NLIDataError, match=r"view='hypothesis', but the datamodule encodes input='pair'"):
        predict_probs(module, RECORDS, datamodule=NLIDataModule([], tok), view="hypothesis")


@pytest.fixture(scope="module")
def hypothesis_run(cfg_train_base, tmp_path_factory) -> Path:
    """A hypothesis-only run folder (1 epoch, model saved): the frozen bias expert."""
    cfg = cfg_train_base.copy()
    with open_dict(cfg):
        cfg.paths.output_dir = str(tmp_path_factory.mktemp("hypothesis_only") / "run")
        cfg.model.input, cfg.model.max_epochs, cfg.save_model = "hypothesis", 1, True
        cfg.callbacks.dynamics.enabled = False
    train(cfg)
    return Path(cfg.paths.output_dir)


def _first_weight(folder: Path) -> torch.Tensor:
    return next(iter(load_classifier(folder).model.state_dict().values())).clone()


def _frozen_poe_cfg(cfg, bias_model) -> None:
    with open_dict(cfg):
        cfg.model.poe.enabled, cfg.model.poe.beta = True, 1.0
        cfg.model.poe.bias_model = str(bias_model)
        cfg.model.max_epochs = 1


def test_frozen_bias_expert_run_through_train(cfg_train, hypothesis_run, monkeypatch):
    before = _first_weight(hypothesis_run)
    used: dict[str, torch.Tensor] = {}
    real = PoEClassifier.bias_logits

    def spy(self, batch):
        assert "hyp_input_ids" not in batch
        out = real(self, batch)
        used.update(zip(batch["uid"], out.detach().cpu()))
        return out

    monkeypatch.setattr(PoEClassifier, "bias_logits", spy)
    _frozen_poe_cfg(cfg_train, hypothesis_run)
    results = train(cfg_train)
    out = Path(cfg_train.paths.output_dir)
    records = build_training_set(cfg_train).records
    assert sorted(used) == sorted(r.uid for r in records)   # every training record, looked up by uid
    expected = predict_probs(hypothesis_run, records, view="hypothesis", batch_size=cfg_train.data.eval_batch_size)
    got = torch.stack([used[r.uid] for r in records]).exp().numpy()
    np.testing.assert_allclose(got, expected, atol=1e-6)
    assert torch.equal(_first_weight(hypothesis_run), before)   # the expert stayed frozen
    assert _accs(out / "metrics.csv") == pytest.approx({k: v["acc"] for k, v in results.items()})
    manifest = json.loads((out / "train_set.manifest.json").read_text())
    assert manifest["poe_bias_model"] == str((hypothesis_run / "model").resolve())
    logged = pd.concat(pd.read_csv(p) for p in out.glob("csv_logs/*/metrics.csv"))
    assert "train/loss_joint" in logged.columns and "train/loss_bias" not in logged.columns
    state = torch.load(out / "checkpoints" / "last.ckpt", map_location="cpu", weights_only=False)["state_dict"]
    assert not any(k.startswith(("hyp_head", "bias_log_probs")) for k in state)


def _refused(cfg, match: str) -> None:
    with pytest.raises(NLIDataError, match=match) as err:
        train(cfg)
    assert "model.poe.bias_model" in str(err.value) and "\n" not in str(err.value)
    assert not Path(cfg.paths.output_dir).exists()   # refused before the run folder got any file


def test_missing_bias_model_folder_is_refused(cfg_train, tmp_path):
    _frozen_poe_cfg(cfg_train, tmp_path / "no_such_run")
    _refused(cfg_train, r"model.poe.bias_model='.*no_such_run': no such folder")


def test_bias_model_not_hypothesis_only_is_refused(cfg_train, tmp_path):
    run = tmp_path / "pair_run"
    (run / "model").mkdir(parents=True)
    (run / "config.yaml").write_text("model:\n  input: pair\n")
    (run / "model" / "config.json").write_text("{}")
    _frozen_poe_cfg(cfg_train, run)
    _refused(cfg_train, r"model.poe.bias_model='.*pair_run' was trained with model.input='pair'; expected a run "
                        r"trained with model.input=hypothesis")


def test_the_runs_own_config_yaml_says_its_input_not_hydras_record(tmp_path):
    """The probe: a refused `model.input=hypothesis` rerun used to rewrite a pair run's `.hydra/config.yaml`,
    and `trained_input` read that first, so the pair model passed as a hypothesis-only expert."""
    from nliforge.models.poe import check_bias_model, trained_input

    run = tmp_path / "pair_run"
    (run / ".hydra").mkdir(parents=True)
    (run / ".hydra" / "config.yaml").write_text("model:\n  input: hypothesis\n")   # a refused command's record
    (run / "config.yaml").write_text("model:\n  input: pair\n")                     # the run's own
    (run / "model").mkdir()
    (run / "model" / "config.json").write_text('{"nliforge_input": "pair"}')
    assert trained_input(run / "model") == "pair"
    with pytest.raises(NLIDataError, match="was trained with model.input='pair'"):
        check_bias_model(str(run))


def test_training_uid_missing_from_bias_table_is_refused(cfg_train, tmp_path, monkeypatch):
    def partial_table(path, records, **kwargs):   # an expert that scored all but the first record
        return BiasTable(path, [r.uid for r in records[1:]], np.zeros((len(records) - 1, 3), np.float32))

    monkeypatch.setattr("nliforge.models.poe.frozen_bias_table", partial_table)
    _frozen_poe_cfg(cfg_train, tmp_path)
    _refused(cfg_train, r"model.poe.bias_model=.*: no bias log-probs for training uid .* \(1 missing\)")


def test_bias_model_without_recorded_input_is_accepted_with_a_warning(tmp_path, caplog):
    (tmp_path / "config.json").write_text("{}")   # a bare Hugging Face folder records no model.input
    with caplog.at_level(logging.WARNING, logger="nliforge.models.poe"):
        assert check_bias_model(str(tmp_path)) == tmp_path
    assert "no run config records its model.input" in caplog.text
