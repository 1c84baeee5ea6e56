"""Label-following claims of `experiments/summary.csv` (experiments/label_following/README.md): the share of pairs
a generator writes with the label it was asked for, judge-corrected, over the synthetic worlds; and whether label
guidance raises it (F2, attempts 2-4, stated before each run)."""

from __future__ import annotations

from experiments.summary_claim import Claim
from experiments.summary_sources import Paired, UnitRow

UNITS = "label_following/units_guided.csv"
UNITS5 = "label_following/units_lambda1.csv"   # attempt 5: λ = 1.0
UNITS_WHOLE = "label_following/units_whole.csv"   # whole instances, as the Z-Aug pipeline samples
UNITS_OFFLINE = "label_following/units_offline.csv"   # wanli_generated's offline generator, and the others again
ZAUG_GEN = "the configured Z-Aug generator (tiny GPT-2, λ = 0.5, 3 epochs, on each world's D0)"
ZAUG_GEN1 = "the Z-Aug generator at λ = 1.0 (tiny GPT-2, 3 epochs, on each world's D0)"
F2_FAMILY = "label guidance F2 (attempts 2-5)"


def share(row: str, what: str, g2: str, units: str = UNITS) -> Claim:
    return Claim(f"Label-following of {what}: pairs whose judged label is the intended one, judge-corrected "
                 "(%)", "Z-Aug §2.1 (a label-conditioned generator)", "– (design)",
                 UnitRow((units,), row, "corrected"), kind="descriptive", diagnosis=g2 + " (G2: >= 60% in every world)")


def guided(w: str) -> Claim:
    return Claim(f"Label guidance (w = {w}) raises the label-following of {ZAUG_GEN}: guided − unguided, "
                 "judge-corrected share (F2; points)", "Z-Aug §2.1; classifier-free guidance (design)", "– (design)",
                 Paired((UNITS,), f"guided_w{w}", "zaug_ul_e3", eval_set="corrected"), family=F2_FAMILY)


LABEL_FOLLOWING = [
    share("zaug_ul_e3", ZAUG_GEN + ", sampled plainly", "G2 fails in every world: the premise predicts the label "
          "in D0 and the generator reads the label token little"),
    share("guided_w1", f"{ZAUG_GEN}, label guidance w = 1", "G2 fails in world 0 only"),
    share("guided_w2", f"{ZAUG_GEN}, label guidance w = 2", "G2 fails in world 0 only"),
    share("guided_w4", f"{ZAUG_GEN}, label guidance w = 4", "G2 fails in worlds 0 and 2; hypotheses leave D0's "
          "lexicon more often"),
    *(guided(w) for w in ("1", "2", "4")),
    share("zaug_ul1_e3", ZAUG_GEN1 + ", sampled plainly", "G2 fails in every world", UNITS5),
    share("guided1_w2", ZAUG_GEN1 + ", label guidance w = 2", "G2 fails in world 0 only", UNITS5),
    Claim(f"Label guidance (w = 2) raises the label-following of {ZAUG_GEN1}: guided − unguided, judge-corrected "
          "share (F2, attempt 5; points)", "Z-Aug §2.1; classifier-free guidance (design)", "– (design)",
          Paired((UNITS5,), "guided1_w2", "zaug_ul1_e3", eval_set="corrected"), family=F2_FAMILY),
    Claim(f"Label-following of {ZAUG_GEN} as the Z-Aug pipeline samples it (whole instances; the label is the one it "
          "wrote): the hypothesis holds that label, judge-corrected (%)", "Z-Aug §3 (sampling)", "– (design)",
          UnitRow((UNITS_WHOLE,), "zaug_whole", "corrected"), kind="descriptive",
          diagnosis="at or above 60% in every world (no criterion stated)"),
    share("offline", "the offline generator of wanli_generated (the WANLI pipeline's stand-in LM, trained on D0 "
          "without labels)", "G2 fails in every world: chance", UNITS_OFFLINE),
    Claim(f"Label-following, {ZAUG_GEN1} with label guidance w = 2 − the offline generator, judge-corrected share "
          "(descriptive; points)", "Z-Aug §2.1; WANLI §2.2", "– (design)",
          Paired((UNITS_OFFLINE,), "guided1_w2", "offline", eval_set="corrected"), kind="descriptive"),
    Claim("A stronger label-consistency term (λ = 1.0 − λ = 0.5), unguided label-following, judge-corrected share "
          "(not a stated criterion; points)", "Z-Aug §2.2.1", "– (design)",
          Paired((UNITS5,), "zaug_ul1_e3", "zaug_ul_e3", eval_set="corrected"), kind="descriptive"),
]
