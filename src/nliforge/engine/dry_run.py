"""`nliforge-generate ... dry_run=true` (`nliforge.engine.execute.dry_run`): run the stages before the first
one that calls a generator, then print the first rendered prompts (the text, or the chat messages for a chat
generator) and stop, before any LLM call, as lm-evaluation-harness's `write_out` shows its prompts. The run
folder stays resumable: the same command without `dry_run` goes on from there. Here: which stage, and how
its prompts are shown."""

from __future__ import annotations

from collections.abc import Sequence

from nliforge.engine.stages import Stage
from nliforge.errors import NLIDataError

SHOWN = 5   # prompts printed


def first_generator_stage(pipeline: str, stages: Sequence[Stage]) -> Stage:
    """The first stage of the run that calls a generator over prompt rows (it declares `generators` and
    reads `prompt`); one error naming the pipeline when the run has none."""
    for st in stages:
        if st.generators and "prompt" in st.reads and st.inputs:
            return st
    raise NLIDataError(f"dry_run=true: no stage of this run of pipeline {pipeline!r} sends prompt rows to a "
                       f"generator (pipeline.stages: {', '.join(s.name for s in stages)}); nothing to show")


def render_prompts(rows: Sequence[dict], chat: bool, k: int = SHOWN) -> str:
    """The first `k` prompt rows as sent: the prompt text (and its `suffix`), or each chat message."""
    blocks = []
    for i, row in enumerate(rows[:k], 1):
        head = f"--- prompt {i} of {len(rows)}: {row.get('uid')} ---"
        if chat:
            body = "\n".join(f"[{m.get('role')}] {m.get('content')}" for m in row.get("messages") or [])
        else:
            body = str(row.get("prompt"))
            if row.get("suffix"):
                body += f"\n[suffix] {row['suffix']}"
        blocks.append(f"{head}\n{body}")
    return "\n\n".join(blocks) + "\n"
