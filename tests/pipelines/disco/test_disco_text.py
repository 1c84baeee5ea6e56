"""DISCO text handling: spans (chunker), splicing by offsets, filler cleaning, heuristic filter."""

from __future__ import annotations

import random

import pytest

from nliforge.pipelines.disco import heuristics as dh
from nliforge.pipelines.disco.chunker import (Chunker, FunctionWordChunker, SpacyChunker, Span, build_chunker,
                                         select_spans)
from nliforge.pipelines.disco.splice import clean_filler, masked, prefix_suffix, splice

SENTENCES = [
    "A man in a red shirt is playing the guitar.",
    "Two dogs, one black and one white, run through the snow.",
    "She has been sleeping on the couch near the window",
    "The woman who is smiling has a baby's bottle.",
    "A boy isn't wearing a t-shirt (or a hat) at 3.5 degrees.",
    "There is a dog out of the house!",
    "  \"A man\"   walks ,slowly.  ",
    "",
    "He is.",
]


def texts(sentence: str) -> list[str]:
    return [s.text for s in FunctionWordChunker().chunks(sentence)]


@pytest.mark.parametrize("sentence", SENTENCES)
def test_span_offsets_match_text_and_have_no_edge_space_or_punctuation(sentence):
    spans = FunctionWordChunker().chunks(sentence)
    assert [s.start for s in spans] == sorted(s.start for s in spans)
    for s in spans:
        assert s.text == sentence[s.start:s.end]
        assert s.text == s.text.strip() and s.text[-1].isalnum()


def test_expected_chunkings():
    assert texts(SENTENCES[0]) == ["A man", "in a red shirt", "is playing", "the guitar"]
    assert texts(SENTENCES[1]) == ["Two dogs", "one black", "and one white", "run", "through the snow"]
    assert texts(SENTENCES[2]) == ["has been sleeping", "on the couch", "near the window"]
    assert texts(SENTENCES[3]) == ["The woman", "is smiling", "a baby's bottle"]
    assert texts(SENTENCES[4]) == ["A boy", "isn't wearing", "a t-shirt", "a hat", "at 3.5 degrees"]
    assert texts(SENTENCES[5]) == ["a dog", "out of the house"]
    assert texts(SENTENCES[6]) == ["A man", "walks", "slowly"]
    assert texts("") == [] and texts("He is.") == []


def test_function_word_chunker_is_a_chunker():
    assert isinstance(FunctionWordChunker(), Chunker)
    assert isinstance(build_chunker("function_words"), FunctionWordChunker)


def test_unknown_chunker_names_the_setting_and_kinds():
    with pytest.raises(ValueError, match=r"pipeline\.spans\.chunker.*'stanza'.*function_words, spacy"):
        build_chunker("stanza")


def test_spacy_missing_says_how_to_install_and_the_alternative():
    try:
        import spacy  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("spaCy is installed here")
    with pytest.raises(ImportError) as err:
        build_chunker("spacy")
    msg = str(err.value)
    assert "pip install spacy" in msg and "python -m spacy download en_core_web_sm" in msg
    assert "pipeline.spans.chunker=function_words" in msg
    with pytest.raises(ImportError, match="en_core_web_lg"):
        SpacyChunker(model="en_core_web_lg")


def test_select_spans_seeded_subset_in_document_order():
    spans = FunctionWordChunker().chunks(SENTENCES[1])
    a = select_spans(spans, 3, random.Random(7))
    assert a == select_spans(spans, 3, random.Random(7))
    assert len(a) == 3 and [s.start for s in a] == sorted(s.start for s in a)
    assert set(a) <= set(spans)
    assert select_spans(spans, 10, random.Random(0)) == spans
    assert select_spans(spans, None, random.Random(0)) == spans
    assert select_spans(spans, 0, random.Random(0)) == []
    with pytest.raises(ValueError):
        select_spans(spans, -1, random.Random(0))


# --- splicing ---------------------------------------------------------------------------------

def test_splice_changes_only_the_chosen_occurrence():
    text = "A man talks to a man."
    second = Span(15, 20, "a man")
    assert text[15:20] == "a man"
    assert splice(text, second, "a woman") == "A man talks to a woman."
    first = Span(0, 5, "A man")
    assert splice(text, first, "A girl") == "A girl talks to a man."


def test_splice_normalises_seam_whitespace():
    text = "A man in a red shirt is playing the guitar."
    guitar = Span(32, 42, "the guitar")
    assert splice(text, guitar, "  a   piano ") == "A man in a red shirt is playing a piano."
    shirt = Span(6, 20, "in a red shirt")
    assert splice(text, shirt, "") == "A man is playing the guitar."
    # Never a space before punctuation that follows, never a double space.
    assert splice("A dog , sleeps", Span(0, 5, "A dog"), "Cats") == "Cats, sleeps"
    assert splice("He saw (a cat) there", Span(8, 13, "a cat"), " two owls ") == "He saw (two owls) there"
    assert splice("the dog's bone", Span(4, 7, "dog"), "cat") == "the cat's bone"
    assert splice("the guitar", Span(4, 10, "guitar"), ", loudly") == "the, loudly"


def test_splice_rejects_offsets_that_do_not_match():
    with pytest.raises(ValueError, match="span text 'a man'"):
        splice("A man talks to a man.", Span(14, 19, "a man"), "x")
    with pytest.raises(ValueError):
        splice("short", Span(2, 40, "ort"), "x")


def test_masked_and_prefix_suffix():
    text = "A man talks to a man."
    span = Span(15, 20, "a man")
    assert masked(text, span) == "A man talks to [blank]."
    assert masked(text, span, mask="___") == "A man talks to ___."
    assert prefix_suffix(text, span) == ("A man talks to", ".")
    assert prefix_suffix(text, Span(0, 5, "A man")) == ("", "talks to a man.")
    with pytest.raises(ValueError):
        prefix_suffix(text, Span(0, 5, "a man"))


@pytest.mark.parametrize("completion, final, expected", [
    ("a piano", False, "a piano"),
    ("\n  a piano.\nPremise: something else", False, "a piano"),
    ('"a piano."', False, "a piano"),
    ("[a piano]", False, "a piano"),
    ("a piano.", True, "a piano."),
    ("  \n ", False, None),
    ('"."', False, None),
    ("", False, None),
])
def test_clean_filler(completion, final, expected):
    assert clean_filler(completion, sentence_final=final) == expected


# --- heuristic filter -------------------------------------------------------------------------

P = "A man in a red shirt is playing the guitar."
H = "A man is making music."


def run(filler, new_premise=None, label="neutral", demos=()):
    return dh.check(filler, P, new_premise or f"A man in a red shirt is playing {filler}.", H, label, demos)


def test_good_filler_passes_every_rule():
    assert run("a violin quietly") is None


@pytest.mark.parametrize("bad, good, rule", [
    ("a ___ hat", "a hat", "leftover_gap"),
    ("[blank]", "a hat", "leftover_gap"),
    ("...", "a hat", "empty_filler"),
    ("the guitar", "the harp", "copied_sentence"),
    ("Is making music", "is making friends", "copied_sentence"),
    ("a man making music", "a drum", "overlap_hypothesis"),
    ("a red guitar shirt", "a coat", "overlap_premise"),
    ("a true statement", "a statue", "instruction_words"),
    ("the conclusion", "a conclave", "instruction_words"),
])
def test_rules_fail_and_pass(bad, good, rule):
    assert run(bad) == rule
    assert run(good) is None


def test_negation_rule_whole_words_and_only_for_contradiction():
    assert run("nothing at all", label="contradiction") == "negation_word"
    assert run("a guitar he isn't tuning", label="contradiction") == "negation_word"
    assert run("a guitar he doesn’t tune", label="contradiction") == "negation_word"
    assert run("never a drum", label="contradiction") == "negation_word"
    assert run("a song everyone may know", label="contradiction") is None   # "know" is not "no"
    assert run("a notebook", label="contradiction") is None                # "not" inside a word
    assert run("nothing at all", label="neutral") is None
    assert not dh.negation_word("a known tune", "contradiction")
    assert dh.negation_word("no tune", " Contradiction ")


def test_new_premise_overlap_rule():
    assert run("a violin", new_premise="A man is making music now.") == "new_premise_overlap"
    assert run("a violin", new_premise="A man is playing a violin.") is None


def test_copied_demonstration_rule():
    assert run("a violin", demos=["A violin."]) == "copied_demonstration"
    assert run("a big brass tuba", demos=["brass tuba"]) == "copied_demonstration"
    assert run("a violin", demos=["violin"]) is None       # a one-word demo is only matched whole
    assert run("a violin", demos=["a cello"]) is None
    assert run("a violin") is None


def test_thresholds_are_settings():
    strict = dh.DiscoHeuristicSettings(premise_overlap=0.05)
    assert dh.check("a shiny violin", P, P, H, "neutral", settings=strict) == "overlap_premise"
    assert dh.jaccard("a b".split(), "b c".split()) == pytest.approx(1 / 3)
    assert dh.jaccard([], []) == 0.0
    assert dh.words("Isn't  the man's [blank]_hat?") == ["isnt", "the", "mans", "blank", "hat"]


def test_apply_all_counts_each_rule():
    items = [
        dict(filler="a violin", premise=P, new_premise="A man plays a violin.", hypothesis=H,
             target_label="neutral"),
        dict(filler="no guitar", premise=P, new_premise="A man plays no guitar.", hypothesis=H,
             target_label="contradiction"),
        dict(filler="not any drum", premise=P, new_premise="x", hypothesis=H, target_label="contradiction"),
        dict(filler="the guitar", premise=P, new_premise=P, hypothesis=H, target_label="neutral"),
        dict(filler="a cello", premise=P, new_premise="A man plays a cello.", hypothesis=H,
             target_label="entailment", demo_fillers=["a cello"]),
    ]
    kept, counts = dh.apply_all(items)
    assert kept == [0]
    assert counts["negation_word"] == 2
    assert counts["copied_sentence"] == 1 and counts["copied_demonstration"] == 1
    assert set(counts) == set(dh.RULES) and sum(counts.values()) == 4
    assert counts["leftover_gap"] == 0

