"""The verdict words of `experiments/summary.csv`: the rule lives in the package (`nliforge.evaluation.verdict`,
the one `nliforge-study verdict` applies); this module re-exports it and the statistics (t interval over
worlds, one-sided p, Holm: `nliforge.evaluation.worlds`, as `nliforge-report ... unit=world` computes them)
for the summary scripts.

On real text a world is a disjoint part of the corpus (R5: each part its own training and test pairs) or a
draw of D0, the floor's pool and W (R5-R4a); the first real-text attempts used the example as the unit on one
sample of the data and count as n_worlds = 1. Only NLI-Set has no worlds (`n_worlds` empty, the unit is the
prompt): its interval over prompts decides, read against the stated side.
"""

from __future__ import annotations

from nliforge.evaluation.verdict import MIN_WORLDS, MIN_WORLDS_LOW_POWER, VERDICTS, side, verdict  # noqa: F401
from nliforge.evaluation.worlds import Estimate, holm, one_sided_p, t_interval  # noqa: F401 (used by the summary scripts)
