"""The arms of a comparison, every one built from the same D0.

D0 is the world's `train_biased` split of `world.n_train` pairs (`data/train_sets=[synthetic_biased]`).
A method adds a set W to D0 (WANLI §3.2's MultiNLI + WANLI); whether it matters *which* N pairs are
added is read against a floor and a ceiling that add N pairs to the same D0:

  d0         D0 alone
  floor      D0 + N more pairs of D0's own biased distribution (`train_biased_extra`, world.n_extra=N)
  ceiling    D0 + N artifact-free pairs (a seeded N-subset of the unbiased split `train`)
  treatment  D0 + W (a named training set; a seeded N-subset of it when N is given)

Every arm keeps world.n_train = |D0|, so D0's records are the same bytes in all of them. A bigger
world.n_train would not do: each split is drawn whole for its size (nliforge.world.generator), so
`world.n_train=|D0|+N` is a fresh draw that does not contain D0.

`floor` with a total size M instead of N is the same-size biased control of a set that stands in for
D0 (Z-Aug's Par-Z and Seq-Z, Wu et al. 2022): D0 + (M - |D0|) extra pairs, or a seeded M-subset of
D0 when M <= |D0|.

    python -m nliforge.world.arms floor --n-train 4000 --n 300      # one Hydra override a line
    python -m nliforge.world.arms treatment --n-train 4000 --n 300 --w exp_wg_full_w0
"""

from __future__ import annotations

import argparse
import re
import sys

from nliforge.errors import NLIDataError

D0_SET = "synthetic_biased"              # conf/data/train_sets/synthetic_biased.yaml: split train_biased
EXTRA_SET = "synthetic_biased_extra"     # split train_biased_extra, world.n_extra pairs
UNBIASED_SET = "synthetic"               # split train: no artifacts
ARMS = ("d0", "floor", "ceiling", "treatment")
COMBINES = ("augment", "replace")
LIMIT_SEED = 0                           # the seeded subsets (`limit` + `limit_seed`, data/registry.take)
_SET_NAME = re.compile(r"[A-Za-z0-9_.-]+")
_TAKES = {"d0": set(), "floor": {"n", "total"}, "ceiling": {"n"}, "treatment": {"n", "w", "combine"}}


def _sets(*names: str) -> str:
    return f"data/train_sets=[{','.join(names)}]"


def _cut(name: str, n: int) -> list[str]:
    """A seeded n-subset of a set (`++`: a registered set's YAML may lack `limit` or `limit_seed`)."""
    return [f"++data.train_sets.{name}.limit={n}", f"++data.train_sets.{name}.limit_seed={LIMIT_SEED}"]


def _count(value, what: str, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise NLIDataError(f"arms: {what}={value!r}; expected an integer >= {low}")
    return value


def _floor(n_train: int, n: int | None, total: int | None) -> list[str]:
    if (n is None) == (total is None):
        raise NLIDataError("arms floor: give exactly one of n (pairs added to D0) and total (the floor's size)")
    if n is not None:
        total = n_train + _count(n, "n")
    total = _count(total, "total")
    world = [f"world.n_train={n_train}"]
    if total > n_train:
        return [_sets(D0_SET, EXTRA_SET), "data.combine=augment", *world, f"world.n_extra={total - n_train}"]
    if total == n_train:
        return [_sets(D0_SET), *world]
    return [_sets(D0_SET), *world, *_cut(D0_SET, total)]


def arm_overrides(arm: str, n_train: int, n: int | None = None, w: str | None = None,
                  total: int | None = None, combine: str = "augment") -> list[str]:
    """The Hydra overrides (nliforge-train) of one arm; |D0| = n_train, N = n, W = the training set `w`."""
    if arm not in ARMS:
        raise NLIDataError(f"arms: arm={arm!r}; valid arms: {', '.join(ARMS)}")
    n_train = _count(n_train, "n_train")
    given = {k for k, v in (("n", n), ("w", w), ("total", total)) if v is not None}
    given |= {"combine"} if combine != "augment" else set()
    if given - _TAKES[arm]:
        raise NLIDataError(f"arms {arm}: {', '.join(sorted(given - _TAKES[arm]))} does not apply; {arm} takes "
                           f"n_train{''.join(', ' + k for k in sorted(_TAKES[arm]))}")
    world = [f"world.n_train={n_train}"]
    if arm == "d0":
        return [_sets(D0_SET), *world]
    if arm == "floor":
        return _floor(n_train, n, total)
    if arm == "ceiling":
        if n is None or _count(n, "n") > n_train:
            raise NLIDataError(f"arms ceiling: n={n!r}; expected 1 <= n <= n_train={n_train} (the unbiased "
                               "split holds world.n_train pairs)")
        return [_sets(D0_SET, UNBIASED_SET), "data.combine=augment", *world, *_cut(UNBIASED_SET, n)]
    if not w or not _SET_NAME.fullmatch(w) or w == D0_SET:
        raise NLIDataError(f"arms treatment: w={w!r}; expected the name of a training set other than {D0_SET} "
                           "(letters, digits, _ . -)")
    if combine not in COMBINES:
        raise NLIDataError(f"arms treatment: combine={combine!r}; valid: {', '.join(COMBINES)}")
    cut = _cut(w, _count(n, "n")) if n is not None else []
    return [_sets(D0_SET, w), f"data.combine={combine}", *world, *cut]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nliforge.world.arms",
                                     description="Print the nliforge-train overrides of one arm, one a line.")
    parser.add_argument("arm", choices=ARMS)
    parser.add_argument("--n-train", type=int, required=True, help="|D0| (world.n_train)")
    parser.add_argument("--n", type=int, help="pairs added to D0 (floor, ceiling; treatment: cut W to N)")
    parser.add_argument("--total", type=int, help="floor only: the floor's size instead of |D0| + N")
    parser.add_argument("--w", help="treatment: the training set W")
    parser.add_argument("--combine", default="augment", choices=COMBINES, help="treatment: D0 + W or D0 ◇ W")
    args = parser.parse_args(argv)
    try:
        lines = arm_overrides(args.arm, args.n_train, args.n, args.w, args.total, args.combine)
    except NLIDataError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
