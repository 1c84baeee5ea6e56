"""Product of experts and partial-input models: the PoE loss by hand, the stopped gradient, the
main head alone at test, and both through train(cfg) on the small world."""

import csv
import math
from pathlib import Path

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
from nliforge.models.poe import PoEClassifier, poe_loss, poe_settings
from nliforge.models.predict import predict_probs
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
