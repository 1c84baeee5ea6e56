"""Phenomena about sentence structure: HANS-style heuristics, negation, pronouns, embedding.

Each function takes a seeded Random and a label and returns every (premise, hypothesis)
variant it knows for that label, all built from one random filling. The variants differ in
their surface features (negation in the hypothesis, full overlap), so the generator can pick
the one that matches the feature vector it needs; a label is never decided by the variant.
"""

from __future__ import annotations

import random

from nliforge.world import vocab
from nliforge.world.text import sentence as S

Pairs = list[tuple[str, str]]


def pronoun(name: str) -> str:
    """Subject pronoun for a name from the vocabulary."""
    return "she" if name in vocab.FEMALE_NAMES else "he"


def lexical_overlap(rng: random.Random, label: str) -> Pairs:
    """Subject/object role swaps, passives and conjoined subjects over the same words."""
    a, b, c = (f"the {p}" for p in rng.sample(vocab.PROFESSIONS, 3))
    past, base, part = rng.choice(vocab.TRANSITIVE)
    if label == "entailment":
        return [(S(a, "and", b, past, c), S(b, past, c)),
                (S(a, past, c, "and", b), S(a, past, b)),
                (S(a, past, c), S(c, "was", part, "by", a)),
                (S(a, "never", past, c), S(c, "was never", part, "by", a)),
                (S(a, "and", b, "never", past, c), S(b, "never", past, c)),
                (S(a, "never", past, c), S(a, "did not", base, c))]
    if label == "neutral":
        return [(S(a, past, c), S(c, past, a)),
                (S(a, "never", past, c), S(c, "never", past, a)),
                (S(a, past, c), S(c, "did not", base, a)),
                (S(a, "was", part, "by", c), S(a, past, c)),
                (S(a, past, c), S(b, past, c))]
    return [(S(a, "never", past, c), S(a, past, c)),
            (S(a, past, c), S(a, "never", past, c)),
            (S(a, past, c), S(a, "did not", base, c)),
            (S(a, past, c, "but never", past, b), S(a, "never", past, c)),
            (S(a, "never", past, c), S(c, "was", part, "by", a))]


def subsequence(rng: random.Random, label: str) -> Pairs:
    """A contiguous stretch of the premise read as a sentence of its own."""
    a, b = (f"the {p}" for p in rng.sample(vocab.PROFESSIONS, 2))
    (past, base), (past2, _) = rng.sample(vocab.INTRANSITIVE, 2)
    tpast = rng.choice(vocab.TRANSITIVE)[0]
    near = rng.choice(("near", "beside", "behind"))
    if label == "entailment":
        return [(S(a, near, b, past), S(a, past)),
                (S(a, "who", tpast, b, past), S(a, tpast, b)),
                (S(a, near, b, "never", past), S(a, "never", past)),
                (S(a, near, b, "never", past), S(a, "did not", base)),
                (S(a, near, b, past), S("someone", near, b, past))]
    if label == "neutral":
        return [(S(a, near, b, past), S(b, past)),
                (S(a, "who", tpast, b, past), S(b, past)),
                (S(a, near, b, "never", past), S(b, "never", past)),
                (S(a, near, b, past), S(b, "did not", base)),
                (S(a, near, b, past), S(a, past2))]
    return [(S(a, near, b, "never", past), S(a, past)),
            (S(a, near, b, past), S(a, "did not", base)),
            (S(a, past + ", but", b, "never", past), S(a, "never", past)),
            (S(a, "who", tpast, b, "never", past), S(a, past))]


def constituent(rng: random.Random, label: str) -> Pairs:
    """An embedded clause under a sure adverb, a doubtful adverb, a conditional or a denial."""
    a, b = (f"the {p}" for p in rng.sample(vocab.PROFESSIONS, 2))
    (past, base), (past2, _) = rng.sample(vocab.INTRANSITIVE, 2)
    sure, unsure = rng.choice(vocab.SURE_ADVERBS), rng.choice(vocab.UNSURE_ADVERBS)
    x, y = f"{a} {past}", f"{b} {past2}"
    if label == "entailment":
        return [(S(sure, x), S(x)), (S(x + ", and", y), S(y)),
                (S(sure, a, "never", past), S(a, "never", past)),
                (S(a, "never", past + ", and", y), S(a, "did not", base)),
                (S(sure, x), S("somebody", past))]
    if label == "neutral":
        return [(S("if", x + ",", y), S(y)), (S("if", x + ",", y), S(x)), (S(unsure, x), S(x)),
                (S("if", a, "never", past + ",", y), S(a, "never", past)),
                (S(unsure, x), S(a, "did not", base))]
    return [(S("it is false that", x), S(x)), (S(sure, a, "never", past), S(x)),
            (S(sure, x), S(a, "did not", base)),
            (S(sure, x + ", and", b, "never", past), S(a, "never", past)),
            (S("it is false that", a, "never", past), S(a, "never", past))]


def negation(rng: random.Random, label: str) -> Pairs:
    """Sentential negation, double negation and 'did not fail to'."""
    n, m = rng.sample(vocab.NAMES, 2)
    past, base = rng.choice(vocab.INTRANSITIVE)
    tpast, tbase, _ = rng.choice(vocab.TRANSITIVE)
    if label == "entailment":
        return [(S(n, "never", past), S(n, "did not", base)),
                (S(n, past, "and", m, "did not", base), S(m, "did not", base)),
                (S(n, "did not fail to", tbase, m), S(n, tpast, m)),
                (S("it is not true that", n, "never", past), S(n, past)),
                (S(n, "and", m, "never", past), S(m, "never", past))]
    if label == "neutral":
        return [(S(n, "did not", base), S(m, "did not", base)),
                (S(n, "never", past), S(m, past)),
                (S(n, "did not", tbase, m), S(m, "did not", tbase, n)),
                (S(n, "never", tpast, m), S(m, "never", tpast, n)),
                (S(n, tpast, m), S(m, tpast, n))]
    return [(S(n, past), S(n, "did not", base)), (S(n, past), S(n, "never", past)),
            (S(n, "never", past), S(n, past)), (S(n, "did not", base), S(n, past)),
            (S(n, past + ", but", m, "never", past), S(n, "never", past)),
            (S("it is not true that", n, past), S(n, past))]


def coreference(rng: random.Random, label: str) -> Pairs:
    """A pronoun that can only refer to one of two people of different gender."""
    her, him = rng.choice(vocab.FEMALE_NAMES), rng.choice(vocab.MALE_NAMES)
    (n, m, pron) = (her, him, "he") if rng.random() < 0.5 else (him, her, "she")
    other = "she" if pron == "he" else "he"
    adj, ant = rng.choice(vocab.ANTONYMS)
    verb = rng.choice(vocab.TRANSITIVE)[0]
    pos = S(n, verb, m + ", and", pron, "was", adj)
    neg = S(n, verb, m + ", and", pron, "was not", adj)
    if label == "entailment":
        return [(pos, S(m, "was", adj)), (pos, S(m, "was not", ant)), (neg, S(m, "was not", adj))]
    if label == "neutral":
        return [(pos, S(n, "was", adj)), (neg, S(n, "was not", adj)), (pos, S(n, "was not", ant)),
                (pos, S(n, "was", ant))]
    both = S(n, verb, m) + " " + S(pron, "was", adj + ", and", other, "was not", adj)
    return [(pos, S(m, "was", ant)), (pos, S(m, "was not", adj)), (neg, S(m, "was", adj)),
            (both, S(m, "was not", adj))]


def presupposition(rng: random.Random, label: str) -> Pairs:
    """Factive verbs ('knows that') commit to their clause; belief verbs do not."""
    n, m = rng.sample(vocab.NAMES, 2)
    past, base = rng.choice(vocab.INTRANSITIVE)
    fact = rng.choice(vocab.FACTIVE)
    bel = rng.choice(vocab.NONFACTIVE)
    x, xneg = f"{m} {past}", f"{m} never {past}"
    if label == "entailment":
        return [(S(n, fact, "that", x), S(x)), (S(n, "does not know that", x), S(x)),
                (S(n, fact, "that", xneg), S(xneg)), (S(n, fact, "that", x), S("someone", past)),
                (S(n, fact, "that", xneg), S(m, "did not", base))]
    if label == "neutral":
        return [(S(n, bel, "that", x), S(x)), (S(n, bel, "that", xneg), S(xneg)),
                (S(n, bel, "that", x), S(m, "did not", base)),
                (S(n, bel, "that", x), S(n, "knows that", x))]
    return [(S(n, fact, "that", xneg), S(x)), (S(n, fact, "that", x), S(xneg)),
            (S(n, fact, "that", x), S(m, "did not", base)),
            (S(n, "never", past + ", but", pronoun(n), "knows that", x), S(xneg))]


def exclusivity(rng: random.Random, label: str) -> Pairs:
    """'The only one who ...' rules everyone else out."""
    n, m = rng.sample(vocab.NAMES, 2)
    (past, base), (past2, base2) = rng.sample(vocab.INTRANSITIVE, 2)
    only = S(n, "was the only person who", past)
    of_two = S("of", n, "and", m + ", only", n, past)
    if label == "entailment":
        return [(only, S(n, past)), (only, S("nobody else", past)), (of_two, S(m, "did not", base)),
                (of_two, S(n, past)), (S(n, "was the only person who never", past), S(n, "never", past))]
    if label == "contradiction":
        return [(of_two, S(m, past)), (only, S(n, "did not", base)), (only, S("someone else also", past)),
                (S("of", n, "and", m + ", only", n, "never", past), S(m, "never", past)),
                (S(n, "was the only person who never", past), S(n, past))]
    return [(only, S(n, past2)), (only, S(n, "was the only person who", past2)),
            (S(n, "was the only person who", past + ", and", m, past2), S(n, past2)),
            (only, S(n, "did not", base2)),
            (S(n, "was the only person who never", past + ", and", m, "never", past2),
             S(n, "never", past2))]
