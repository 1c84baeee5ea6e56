"""Long-text NLI prompts (NLI-Set, appendix 0.1): from one context statement, ask for two formal
paragraphs of about five sentences where the second stands in a given relation to the first.

The prompt is our own wording of the paper's outline. The relation is described by what a careful
reader may conclude, never by its name: neither the prompt nor an accepted answer contains a word
of `LABEL_TERMS`, so the label cannot be read off the text (the validation stage checks answers).
Context statements come from a text file (one per line, `#` comments) or a JSONL file (`text`).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from nliforge.errors import NLIDataError

LABELS = ("entailment", "neutral", "contradiction")
# Words that would name the relation; the default list `longtext_validate` refuses per intended label.
LABEL_TERMS = {
    "entailment": ["entail", "entails", "entailed", "entailment", "implies", "implied", "imply", "implication"],
    "neutral": ["neutral", "neutrality"],
    "contradiction": ["contradict", "contradicts", "contradicted", "contradiction", "contradictory"],
}
# What the second paragraph must do, described by a reader's conclusion, not by the label's name.
RELATIONS = {
    "entailment": ("Everything the second paragraph says must follow from the first paragraph: a careful "
                   "reader who accepts the first paragraph as true has to accept the second one as well."),
    "neutral": ("The second paragraph must stay on the same subject but add information that the first "
                "paragraph neither supports nor rules out: a careful reader of the first paragraph cannot "
                "tell whether the second one is true or false."),
    "contradiction": ("The second paragraph must describe the same situation in a way that cannot be true at "
                      "the same time as the first paragraph: a careful reader who accepts the first paragraph "
                      "as true has to reject the second one."),
}
SYSTEM = ("You write short formal texts for a dataset that teaches models to judge how two passages "
          "relate. Follow the format rules exactly and write only the requested text.")
STATEMENT_PREFIX = "Context statement: "


def longtext_prompt(statement: str, label: str) -> str:
    """The completion-style prompt for one statement and one intended label."""
    if label not in RELATIONS:
        raise NLIDataError(f"no long-text relation for label {label!r}; expected one of {list(RELATIONS)}")
    return (
        "We are building a dataset of passage pairs for natural language inference.\n\n"
        f"{STATEMENT_PREFIX}{statement.strip()}\n\n"
        "Write a text of exactly two paragraphs on the subject of the context statement, in the same "
        "formal register. Each paragraph should be about five sentences long. The first paragraph "
        "describes a concrete situation related to the statement. "
        f"{RELATIONS[label]}\n\n"
        "Rules:\n"
        "- Separate the two paragraphs with one blank line.\n"
        "- No title, headings, bullet points or numbering.\n"
        "- Do not say or hint in words how the paragraphs relate to each other; the reader must work it "
        "out from their content alone.\n"
        "- Write only the two paragraphs, nothing before or after them.\n\n"
        "Text:\n")


def longtext_messages(statement: str, label: str) -> tuple[dict[str, str], ...]:
    """The chat variant: a system turn on the task, the same prompt as the user turn."""
    return ({"role": "system", "content": SYSTEM},
            {"role": "user", "content": longtext_prompt(statement, label).removesuffix("Text:\n").rstrip()})


def statement_of(prompt: str) -> str | None:
    """The context statement inside a long-text prompt (None if it is not one)."""
    for line in prompt.splitlines():
        if line.startswith(STATEMENT_PREFIX):
            return line[len(STATEMENT_PREFIX):].strip()
    return None


def relation_of(prompt: str) -> str | None:
    """The intended label a long-text prompt describes (None if it is not one)."""
    return next((label for label, text in RELATIONS.items() if text in prompt), None)


def default_statements_path() -> Path:
    """The statements the project ships (pipelines/longtext/data/statements.txt)."""
    return Path(str(resources.files("nliforge.pipelines.longtext") / "data" / "statements.txt"))


def read_statements(path: str | Path | None) -> list[str]:
    """Statements from a `.jsonl` file (a `text` field per line) or a text file (one per line, `#`
    comments); None reads the shipped default set. A bad line fails naming `file:line`."""
    path = Path(path) if path else default_statements_path()
    if not path.is_file():
        raise NLIDataError(f"{path}: statements file not found (pipeline.statements.path)")
    out: list[str] = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            text = line.strip()
            if not text or (path.suffix != ".jsonl" and text.startswith("#")):
                continue
            where = f"{path}:{lineno}"
            out.append(_check(_jsonl_text(text, where) if path.suffix == ".jsonl" else text, where))
    if not out:
        raise NLIDataError(f"{path}: no statements (expected one per line, or JSONL with a 'text' field)")
    return out


def _check(text: str, where: str) -> str:
    """A statement is one sentence-sized line: at least three words, at most 1000 characters."""
    if len(text.split()) < 3 or len(text) > 1000:
        raise NLIDataError(f"{where}: expected a context statement of 3+ words and at most 1000 characters, "
                           f"got {text[:60]!r}")
    return text


def _jsonl_text(line: str, where: str) -> str:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as err:
        raise NLIDataError(f"{where}: invalid JSON ({err.msg} at column {err.colno})") from None
    text = obj.get("text") if isinstance(obj, dict) else None
    if not isinstance(text, str) or not text.strip():
        raise NLIDataError(f"{where}: expected a JSON object with a non-empty string field 'text'")
    return text.strip()
