"""The review page's JSON API handlers: hand out the next item, take a judgement, report progress.

In rubric mode (`ReviewAPI(store, rubric=True)`, for long texts) every judgement must also carry
`rubric: {criterion: score}` with all of RUBRIC_CRITERIA scored as integers 1-10; outside it a
rubric is refused. `GET /api/config` tells the page which mode it is in and the criteria to show.

Store calls are blocking SQLite transactions, so they run on worker threads (`asyncio.to_thread`);
the store keeps one connection per thread. Every answer is JSON; errors are `{"error": message}`, a 4xx
for anything a client can send (tests/data/test_fuzz.py). The server's guard (server.py, csrf.py) has
already checked the Host, the tokens, the origin and the content type before a handler runs.
"""

from __future__ import annotations

import asyncio
import json
import re

from aiohttp import web

from nliforge.errors import NLIDataError
from nliforge.review.store import AlreadyJudgedError, ItemFullError, ReviewStore
from nliforge.data.judgements import REVIEW_LABELS, RUBRIC_CRITERIA, Judgement

ANNOTATOR_RE = re.compile(r"^[\w@+-](?:[\w.@+-]{0,62}[\w@+-])?$")
BODY_FIELDS = ("uid", "annotator", "label", "premise", "hypothesis", "rubric")
QUERY_FIELDS = ("annotator", "token")
# What the page shows beside each slider: (title, one-line description), in this project's own words.
RUBRIC_HELP = {
    "content_coverage": ("Content coverage", "Takes up the main points of the source it was asked to build on."),
    "accuracy": ("Accuracy", "States nothing false or unsupported about the source or the world."),
    "conciseness": ("Conciseness", "Says what it needs to without padding or detours."),
    "coherence_structure": ("Coherence and structure", "Ideas follow in a sensible order and hang together."),
    "readability": ("Readability", "Easy to read: clear sentences, grammatical, natural wording."),
    "non_redundancy": ("Non-redundancy", "Does not repeat the same point or phrase."),
    "referential_clarity": ("Referential clarity", "Every pronoun and reference has an obvious referent."),
    "focus": ("Focus", "Stays on the topic it was given instead of drifting."),
}
assert tuple(RUBRIC_HELP) == RUBRIC_CRITERIA
__all__ = ["ANNOTATOR_RE", "BODY_FIELDS", "RUBRIC_HELP", "ReviewAPI"]


class ReviewAPI:
    """aiohttp handlers over one ReviewStore (the only data this server can reach)."""

    def __init__(self, store: ReviewStore, rubric: bool = False):
        self.store = store
        self.rubric = bool(rubric)

    async def config(self, request: web.Request) -> web.Response:
        """`{"rubric": [{name, title, description}, ...] | null}`: null unless rubric mode is on."""
        _query(request)
        criteria = None
        if self.rubric:
            criteria = [{"name": c, "title": RUBRIC_HELP[c][0], "description": RUBRIC_HELP[c][1]}
                        for c in RUBRIC_CRITERIA]
        return web.json_response({"rubric": criteria})

    async def next(self, request: web.Request) -> web.Response:
        """`{"item": {uid, premise, hypothesis} | null, "progress": {...}}`; the item is claimed for them."""
        who = _annotator(_query(request).get("annotator"))
        item = await asyncio.to_thread(self.store.next_item, who)
        progress = await asyncio.to_thread(self.store.progress, who)
        shown = None if item is None else {"uid": item.uid, "premise": item.premise, "hypothesis": item.hypothesis}
        return web.json_response({"item": shown, "progress": progress})

    async def progress(self, request: web.Request) -> web.Response:
        who = _annotator(_query(request).get("annotator"))
        return web.json_response(await asyncio.to_thread(self.store.progress, who))

    async def judgement(self, request: web.Request) -> web.Response:
        """Validate and store one judgement; `revised` is decided here, from the item's own texts."""
        _query(request)
        body = await _body(request)
        who = _annotator(body.get("annotator"))
        label = body.get("label")
        if label not in REVIEW_LABELS:
            raise _error(web.HTTPBadRequest, f"label {label!r}; expected one of {', '.join(REVIEW_LABELS)}")
        uid = body.get("uid")
        if not isinstance(uid, str) or not uid:
            raise _error(web.HTTPBadRequest, "field 'uid' is required: the uid of the item being judged")
        item = await asyncio.to_thread(self.store.item, uid)
        if item is None:
            raise _error(web.HTTPNotFound, f"no item with uid {uid!r} in this review store")
        rubric = _rubric(body.get("rubric"), self.rubric)
        premise, p_rev = _text(body, "premise", item.premise, label)
        hypothesis, h_rev = _text(body, "hypothesis", item.hypothesis, label)
        judgement = Judgement(uid=uid, annotator=who, label=label, premise=premise, hypothesis=hypothesis,
                              revised=p_rev or h_rev, source="page", rubric=rubric)
        try:
            saved = await asyncio.to_thread(self.store.save, judgement, False)   # two tabs: 409, no overwrite
        except (ItemFullError, AlreadyJudgedError) as err:
            raise _error(web.HTTPConflict, str(err)) from None
        except NLIDataError as err:
            raise _error(web.HTTPBadRequest, str(err)) from None
        progress = await asyncio.to_thread(self.store.progress, who)
        return web.json_response({"saved": {"uid": uid, "annotator": who, "label": label, "revised": saved.revised},
                                  "progress": progress})


def _error(cls: type[web.HTTPException], message: str) -> web.HTTPException:
    return cls(text=json.dumps({"error": message}), content_type="application/json")


def _query(request: web.Request):
    """The query parameters, refusing any this API does not define."""
    unknown = sorted(set(request.query) - set(QUERY_FIELDS))
    if unknown:
        raise _error(web.HTTPBadRequest, f"unknown parameter(s) {unknown}; expected only {list(QUERY_FIELDS)}")
    return request.query


async def _body(request: web.Request) -> dict:
    """The request's JSON object. Whatever the bytes, the outcome is the object or a 400: too deep a nesting
    (RecursionError in the parser) and text SQLite cannot store (an unpaired surrogate escape such as
    `\\ud800`) are refused here, not met later as a 500."""
    try:
        body = json.loads(await request.read())
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise _error(web.HTTPBadRequest, "the body must be a JSON object with fields "
                                         f"{', '.join(BODY_FIELDS)}") from None
    try:
        json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise _error(web.HTTPBadRequest, "the body holds text that is not valid Unicode (an unpaired surrogate "
                                         "escape such as \\ud800)") from None
    except RecursionError:
        raise _error(web.HTTPBadRequest, "the body is nested too deeply") from None
    if not isinstance(body, dict):
        raise _error(web.HTTPBadRequest, f"the body must be a JSON object, got {type(body).__name__}")
    unknown = sorted(set(body) - set(BODY_FIELDS))
    if unknown:
        raise _error(web.HTTPBadRequest, f"unknown field(s) {unknown}; expected only {list(BODY_FIELDS)} "
                                         "(this server never reads or writes a file named by a request)")
    return body


def _annotator(value) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _error(web.HTTPBadRequest, "annotator is required: a short id such as 'alice' or 'w17'")
    value = value.strip()
    if not ANNOTATOR_RE.match(value) or ".." in value:
        raise _error(web.HTTPBadRequest, f"annotator {value!r}: expected 1-64 letters, digits or _ . @ + - "
                                         "(no slashes, no '..')")
    return value


def _rubric(value, required: bool) -> dict[str, int] | None:
    """The submitted rubric scores: all RUBRIC_CRITERIA as integers 1-10 in rubric mode, none otherwise."""
    if not required:
        if value is not None:
            raise _error(web.HTTPBadRequest, "field 'rubric' is refused: this server is not in rubric mode "
                                             "(start it with rubric=True to score long texts)")
        return None
    if not isinstance(value, dict):
        raise _error(web.HTTPBadRequest, "field 'rubric' is required in rubric mode: an object mapping each of "
                                         f"{', '.join(RUBRIC_CRITERIA)} to an integer 1-10")
    unknown = sorted(set(value) - set(RUBRIC_CRITERIA))
    if unknown:
        raise _error(web.HTTPBadRequest, f"rubric: unknown criterion {unknown[0]!r}; expected "
                                         f"{', '.join(RUBRIC_CRITERIA)}")
    for criterion in RUBRIC_CRITERIA:
        if criterion not in value:
            raise _error(web.HTTPBadRequest, f"rubric: criterion {criterion!r} is missing; every criterion "
                                             "needs a score 1-10")
        score = value[criterion]
        if isinstance(score, bool) or not isinstance(score, int) or not 1 <= score <= 10:
            raise _error(web.HTTPBadRequest, f"rubric: criterion {criterion!r} has score {score!r}; expected "
                                             "an integer 1-10")
    return {c: value[c] for c in RUBRIC_CRITERIA}


def _text(body: dict, key: str, original: str, label: str) -> tuple[str, bool]:
    """The submitted text and whether it differs from the original (whitespace at the ends ignored).

    A missing field means "unchanged". Empty text is refused unless the item is discarded, where the
    original is kept (a discard needs no revision).
    """
    value = body.get(key, original)
    if not isinstance(value, str):
        raise _error(web.HTTPBadRequest, f"field {key!r} must be a string (the {key} as reviewed)")
    if not value.strip():
        if label == "discard":
            return original, False
        raise _error(web.HTTPBadRequest, f"field {key!r} is empty; expected the {key} text (or label 'discard')")
    if value.strip() == original.strip():
        return original, False
    return value.strip(), True
