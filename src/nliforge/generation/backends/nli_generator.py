"""The Z-Aug generator as a batch backend (`generator=gpt2_unlikelihood`).

A thin layer over `HFLocal`, so sampling keeps its guarantees (per-sample seeds, answers
independent of batching, KV cache, context-length Failures): each request's prompt is a prefix
of the generator's format (see `nliforge.generation.zaug_format`) and gets the tokenizer's BOS
text put in front, as in training. The answer texts are the continuations, label tokens kept:
for the prompt `""` a whole `{premise}<|label|>{hypothesis}` to read with `parse_generated`, for
`format_prefix(premise, label)` the hypothesis alone (a label token sampled after the prompt's
label ends it, as EOS does). `label_guidance` > 0 decodes hypotheses with label guidance
(`nliforge.generation.backends.label_guidance`; prompts must then end with a label token).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from nliforge.generation.backends.hf_local import HFLocal
from nliforge.generation.types import Failure, GenerationError, GenerationRequest, Response
from nliforge.generation.zaug_format import LABEL_TOKENS, parse_generated

__all__ = ["NLIGeneratorBackend", "parse_generated"]


class NLIGeneratorBackend:
    """BatchBackend over a trained generator folder (one written by `train_generator`)."""

    name = "gpt2_unlikelihood"

    def __init__(self, model: str, batch_size: int = 64, device: str = "cpu", dtype: str = "float32",
                 max_context: int | None = None, label_guidance: float = 0.0):
        kwargs = dict(batch_size=batch_size, device=device, dtype=dtype, max_context=max_context)
        if label_guidance:
            from nliforge.generation.backends.label_guidance import GuidedHFLocal

            self._hf = GuidedHFLocal(model, list(LABEL_TOKENS.values()), float(label_guidance), **kwargs)
        else:
            self._hf = HFLocal(model, **kwargs)
        self.model, self.batch_size = self._hf.model, self._hf.batch_size
        tokenizer = self._hf._tok
        missing = [t for t in LABEL_TOKENS.values() if t not in tokenizer.get_vocab()]
        if missing:
            raise GenerationError(f"generator.model={model!r} has no label tokens {missing}: it is not a Z-Aug "
                                  f"generator folder (train one with nliforge.models.generator_train.train_generator)")
        self._bos = tokenizer.bos_token or tokenizer.eos_token

    def generate_batch(self, requests: Sequence[GenerationRequest]) -> list[Response | Failure]:
        """One Response (or Failure) per request, in order; see `HFLocal.generate_batch`."""
        return self._hf.generate_batch([self._frame(req) for req in requests])

    def _frame(self, req: GenerationRequest) -> GenerationRequest:
        """BOS in front of the prompt; when the prompt already holds a label token, another label
        token ends the hypothesis like EOS does (the text is cut before it, as at a stop string)."""
        prompt = req.prompt if req.prompt.startswith(self._bos) else self._bos + req.prompt
        sampling = req.sampling
        if any(tok in prompt for tok in LABEL_TOKENS.values()):
            stops = tuple(dict.fromkeys((*sampling.stop, *LABEL_TOKENS.values())))
            sampling = replace(sampling, stop=stops)
        return replace(req, prompt=prompt, sampling=sampling)
