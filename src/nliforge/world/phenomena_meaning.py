"""Phenomena about word and world meaning: antonyms, hypernyms, quantifiers, numbers, order.

Same contract as `phenomena_syntax`: `fn(rng, label)` returns every (premise, hypothesis)
variant for that label from one random filling.
"""

from __future__ import annotations

import random

from nliforge.world import vocab
from nliforge.world.text import article
from nliforge.world.text import sentence as S

Pairs = list[tuple[str, str]]


def antonym(rng: random.Random, label: str) -> Pairs:
    """Contrary adjectives: 'tall' rules out 'short', but 'not tall' does not give 'short'."""
    n, m = rng.sample(vocab.NAMES, 2)
    (a, b), (a2, _) = rng.sample(vocab.ANTONYMS, 2)
    both, mixed = S(n, "is", a + ", and", m, "is", b), S(n, "is", a + ", and", m, "is not", a)
    if label == "entailment":
        return [(S(n, "is", a), S(n, "is not", b)), (both, S(m, "is", b)), (mixed, S(m, "is not", a)),
                (S(n, "is very", a), S(n, "is", a))]
    if label == "neutral":
        return [(S(n, "is not", a), S(n, "is", b)), (S(n, "is", a), S(n, "is", a2)),
                (S(n, "is", a), S(n, "is not", a2)), (S(n, "is", a + ", and", m, "is", a2), S(m, "is", a)),
                (S(n, "is not", a + ", and", m, "is not", b), S(n, "is", b)),
                (S(n, "is", a + ", and", m, "is not", a2), S(m, "is not", a))]
    return [(S(n, "is", a), S(n, "is", b)), (S(n, "is", a), S(n, "is not", a)), (both, S(n, "is", b)),
            (both, S(m, "is", a)), (mixed, S(n, "is not", a))]


def hypernym(rng: random.Random, label: str) -> Pairs:
    """A kind entails its category ('a dog' -> 'a mammal'); negation reverses the direction."""
    n, m = rng.sample(vocab.NAMES, 2)
    (lo, los, hi, his), (lo2, los2, hi2, his2) = rng.sample(vocab.HYPONYMS, 2)
    past, base = rng.choice(vocab.SEEING_VERBS)
    if label == "entailment":
        out = [(S(n, past, article(lo)), S(n, past, article(hi))),
               (S(n, past, "no", his), S(n, past, "no", los)),
               (S(n, past, article(lo), "and", article(lo2)), S(n, past, article(lo2))),
               (S(n, past, "no", his), S(n, "did not", base, article(lo)))]
        if hi2 != hi:
            out.append((S(n, past, article(lo), "but no", his2), S(n, past, "no", his2)))
        return out
    if label == "neutral":
        return [(S(n, past, article(hi)), S(n, past, article(lo))),
                (S(n, past, "no", los), S(n, past, "no", his)),
                (S(n, past, article(lo)), S(n, past, article(lo2))),
                (S(n, past, article(lo) + ", and", m, past, article(lo2)), S(m, past, article(lo))),
                (S(n, past, "no", los + ", and", m, past, article(lo2)), S(m, past, "no", los))]
    return [(S(n, past, article(lo)), S(n, past, "no", his)),
            (S(n, past, "no", his), S(n, past, article(lo))),
            (S(n, past, "no", his + ", but", m, past, article(hi)), S(n, past, article(hi))),
            (S(n, past, article(lo) + ", but", m, past, "no", los), S(n, past, "no", los)),
            (S(n, past, article(lo)), S(n, "did not", base, "any", his))]


def quantifier(rng: random.Random, label: str) -> Pairs:
    """all / some / none / not all over a group of people."""
    g, g2 = rng.sample(vocab.GROUPS, 2)
    (past, _), (past2, _) = rng.sample(vocab.INTRANSITIVE, 2)

    def q(quant: str, group: str = g, verb: str = past) -> str:
        return f"{quant} of the {group} {verb}"

    if label == "entailment":
        return [(S(q("all")), S(q("some"))), (S(q("none")), S(q("not all"))),
                (S(q("none")), S("no", g, past)), (S(q("all") + ", and", q("some", g, past2)), S(q("some"))),
                (S(q("all") + ", and", q("none", g2)), S(q("none", g2)))]
    if label == "neutral":
        return [(S(q("some")), S(q("all"))), (S(q("not all")), S(q("none"))),
                (S(q("some")), S(q("not all"))), (S(q("some")), S(q("some", g, past2))),
                (S(q("all") + ", and", q("some", g2, past2)), S(q("all", g2))),
                (S(q("none") + ", and", q("some", g2, past2)), S(q("none", g2)))]
    return [(S(q("all")), S(q("none"))), (S(q("none")), S(q("some"))), (S(q("some")), S(q("none"))),
            (S(q("all")), S(q("not all"))), (S(q("all") + ", and", q("none", g2)), S(q("all", g2))),
            (S(q("all") + ", and", q("none", g2)), S(q("none")))]


def set_complement(rng: random.Random, label: str) -> Pairs:
    """Percentages of a group and their complements ('30% passed' -> '70% failed')."""
    g, g2 = rng.sample(vocab.GROUPS, 2)
    p, p2 = rng.sample(vocab.PERCENTS, 2)
    pos, negpos, comp = rng.choice(vocab.COMPLEMENTS)

    def pct(k: int | str, pred: str = pos, group: str = g) -> str:
        return f"{k}% of the {group} {pred}" if isinstance(k, int) else f"{k} of the {group} {pred}"

    prem = S(pct(p))
    if label == "entailment":
        return [(prem, S(pct(100 - p, comp))), (prem, S(pct(100 - p, negpos))), (prem, S(pct("some"))),
                (prem, S(pct("not all"))),
                (S(pct(p) + ", and", pct(p2, pos, g2)), S(pct(p2, pos, g2))),
                (S(pct(p) + ", and", pct("none", pos, g2)), S(pct("none", pos, g2)))]
    if label == "neutral":
        return [(prem, S(pct(p, pos, g2))), (prem, S(pct(100 - p, comp, g2))),
                (prem, S(pct(100 - p, negpos, g2))), (S(pct("some")), S(pct(p))),
                (S(pct(p) + ", and", pct("some", pos, g2)), S(pct(p, pos, g2)))]
    return [(prem, S(pct(p, comp))), (prem, S(pct(p2))), (prem, S(pct(p, negpos))),
            (prem, S(pct("none"))), (S(pct(p) + ", and", pct(p2, pos, g2)), S(pct(p2)))]


def directions(rng: random.Random, label: str) -> Pairs:
    """Cardinal directions: converses, transitivity, and facts on another axis."""
    t1, t2, t3 = rng.sample(vocab.TOWNS, 3)
    axes = list(vocab.DIRECTIONS)
    rng.shuffle(axes)
    d, opp = axes[0] if rng.random() < 0.5 else axes[0][::-1]
    d2 = axes[1][rng.randrange(2)]

    def rel(x: str, y: str, direction: str = d, neg: bool = False) -> str:
        return f"{x} is {'not ' if neg else ''}{direction} of {y}"

    base, chain = S(rel(t1, t2)), S(rel(t1, t2) + ", and", rel(t2, t3))
    if label == "entailment":
        return [(base, S(rel(t2, t1, opp))), (base, S(rel(t2, t1, neg=True))),
                (base, S(rel(t1, t2, opp, neg=True))), (chain, S(rel(t1, t3)))]
    if label == "contradiction":
        return [(base, S(rel(t2, t1))), (base, S(rel(t1, t2, opp))), (base, S(rel(t1, t2, neg=True))),
                (chain, S(rel(t3, t1))), (S(rel(t1, t2) + ", but", rel(t3, t2, neg=True)),
                                          S(rel(t1, t2, neg=True)))]
    side = S(rel(t1, t2) + ", and", rel(t3, t2))
    return [(base, S(rel(t1, t3))), (base, S(rel(t3, t2))), (side, S(rel(t1, t3))),
            (side, S(rel(t3, t1, neg=True))),
            (S(rel(t1, t2) + ", but", rel(t3, t2, d2, neg=True)), S(rel(t1, t3, d2, neg=True)))]


def numbers(rng: random.Random, label: str) -> Pairs:
    """Counts against 'more than' / 'fewer than' / 'at least' thresholds."""
    n, m = rng.sample(vocab.NAMES, 2)
    noun = rng.choice(vocab.COUNT_NOUNS)
    k = rng.randint(3, 10)
    lo, hi = rng.randint(2, k - 1), rng.randint(k + 1, 12)

    def has(who: str, amount: str, neg: bool = False) -> str:
        return f"{who} {'does not have' if neg else 'has'} {amount} {noun}"

    prem = S(has(n, str(k)))
    if label == "entailment":
        return [(prem, S(has(n, f"more than {lo}"))), (prem, S(has(n, f"fewer than {hi}"))),
                (prem, S(has(n, f"more than {hi}", True))), (prem, S(has(n, f"at least {lo}"))),
                (S(has(n, f"more than {lo}"), "and fewer than", str(hi), noun), S(has(n, f"more than {lo}"))),
                (S(has(n, str(k)) + ", and", has(m, str(k), True)), S(has(m, str(k), True)))]
    if label == "neutral":
        return [(S(has(n, f"more than {lo}")), S(has(n, str(k)))), (prem, S(has(m, str(k)))),
                (S(has(n, f"more than {lo}")), S(has(n, str(k), True))),
                (S(has(n, f"more than {lo}") + ", and", has(m, str(k))), S(has(n, str(k)))),
                (S(has(n, f"more than {lo}") + ", and", has(m, str(k), True)), S(has(n, str(k), True)))]
    return [(prem, S(has(n, f"more than {hi}"))), (prem, S(has(n, f"fewer than {lo}"))),
            (prem, S(has(n, str(k), True))), (prem, S(has(n, f"more than {lo}", True))),
            (S(has(n, f"more than {lo}")), S(has(n, str(lo)))),
            (S(has(n, f"fewer than {hi}")), S(has(n, str(hi)))),
            (S(has(n, f"more than {lo}") + ", and", has(m, f"more than {lo}", True)),
             S(has(n, f"more than {lo}", True)))]


def comparison(rng: random.Random, label: str) -> Pairs:
    """Comparatives: converse pairs ('taller' / 'shorter'), asymmetry and transitivity."""
    n, m, o = rng.sample(vocab.NAMES, 3)
    (a, b), (c, _) = rng.sample(vocab.COMPARATIVES, 2)

    def cmp(x: str, y: str, adj: str = a, neg: bool = False) -> str:
        return f"{x} is {'not ' if neg else ''}{adj} than {y}"

    base, chain = S(cmp(n, m)), S(cmp(n, m) + ", and", cmp(m, o))
    if label == "entailment":
        return [(base, S(cmp(m, n, b))), (base, S(cmp(m, n, neg=True))), (base, S(cmp(n, m, b, True))),
                (chain, S(cmp(n, o)))]
    if label == "contradiction":
        return [(base, S(cmp(m, n))), (base, S(cmp(n, m, b))), (base, S(cmp(n, m, neg=True))),
                (chain, S(cmp(o, n))), (S(cmp(n, m) + ", but", cmp(o, m, neg=True)), S(cmp(n, m, neg=True)))]
    side = S(cmp(n, m) + ", and", cmp(o, m))
    return [(base, S(cmp(n, o))), (side, S(cmp(n, o))), (side, S(cmp(o, n, neg=True))),
            (S(cmp(n, m) + ", but", cmp(o, m, c, True)), S(cmp(o, n, c, True))), (base, S(cmp(n, m, c)))]


def temporal(rng: random.Random, label: str) -> Pairs:
    """Event order with 'before' and 'after': converses, asymmetry and transitivity."""
    n, m, o = rng.sample(vocab.NAMES, 3)
    (v1, b1), (v2, b2), (v3, b3) = rng.sample(vocab.INTRANSITIVE, 3)
    e1, e2, e3 = f"{n} {v1}", f"{m} {v2}", f"{o} {v3}"
    base = S(e1, "before", e2)
    chain, fork = S(e1, "before", e2 + ", and", e2, "before", e3), S(e1, "before", e2, "and before", e3)
    if label == "entailment":
        return [(base, S(e2, "after", e1)), (base, S(m, "did not", b2, "before", e1)),
                (chain, S(e1, "before", e3)), (chain, S(e3, "after", e1))]
    if label == "contradiction":
        return [(base, S(e2, "before", e1)), (base, S(e1, "after", e2)),
                (base, S(n, "did not", b1, "before", e2)), (chain, S(e3, "before", e1))]
    return [(fork, S(e2, "before", e3)), (fork, S(e3, "before", e2)), (base, S(e1, "before", e3)),
            (base, S(o, "did not", b3, "before", e2)), (fork, S(e3, "after", e2))]
