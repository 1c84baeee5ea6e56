"""A byte-level BPE tokenizer trained on the spot, so tiny models need no download."""

from __future__ import annotations

from collections.abc import Iterable

from tokenizers import ByteLevelBPETokenizer
from tokenizers.processors import TemplateProcessing
from transformers import PreTrainedTokenizerFast

SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]


def train_tiny_tokenizer(texts: Iterable[str], vocab_size: int = 2000, min_frequency: int = 2) -> PreTrainedTokenizerFast:
    """Train a RoBERTa-style tokenizer (`<s> A </s></s> B </s>`) on the given texts."""
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(list(texts), vocab_size=vocab_size, min_frequency=min_frequency,
                            special_tokens=SPECIALS, show_progress=False)
    bos, eos = bpe.token_to_id("<s>"), bpe.token_to_id("</s>")
    bpe.post_processor = TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", bos), ("</s>", eos)],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
        unk_token="<unk>", mask_token="<mask>", cls_token="<s>", sep_token="</s>",
        model_max_length=512,
    )


CAUSAL_SPECIALS = ["<|endoftext|>", "<pad>"]


def train_causal_tokenizer(texts: Iterable[str], vocab_size: int = 2000, min_frequency: int = 2) -> PreTrainedTokenizerFast:
    """Train a GPT-2-style byte-level BPE tokenizer for a causal LM.

    Unlike `train_tiny_tokenizer` it adds no special tokens around the text (a prompt must be
    encoded as is, so the model continues it), and it round-trips any text, newlines included.
    `<|endoftext|>` is both bos and eos (as in GPT-2); `<pad>` pads batches.
    """
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(list(texts), vocab_size=vocab_size, min_frequency=min_frequency,
                            special_tokens=CAUSAL_SPECIALS, show_progress=False)
    eos = CAUSAL_SPECIALS[0]
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer, bos_token=eos, eos_token=eos, unk_token=eos,
        pad_token=CAUSAL_SPECIALS[1], clean_up_tokenization_spaces=False, model_max_length=1024,
    )
