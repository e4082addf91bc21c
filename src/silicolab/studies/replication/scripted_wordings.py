"""A scripted paraphraser: a test double that answers the paraphrase prompt offline.

:func:`scripted_paraphraser` returns a reply function for ``load_model("scripted",
fn=...)`` that answers :func:`~silicolab.studies.replication.wordings.aparaphrase`'s
prompt by deterministic synonym substitution (``want`` -> ``would like``, ``mug`` ->
``cup``...). It reads the wording's number (``Wording: 2``), the protected strings
(``Keep verbatim: [...]``) and the texts (the JSON object after ``Texts``) from the prompt,
never touches a protected string, and picks each word's synonym by the wording's number,
so wordings 1, 2, 3 differ and a rerun gives the same texts. It is not a model of a
paraphraser: the offline demo and the tests use it to exercise the replication.

>>> from silicolab.llm import load_model
>>> model = load_model("scripted", fn=scripted_paraphraser())
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from silicolab.core.errors import InputError
from silicolab.core.seeding import stable_hash
from silicolab.llm import Request

#: Word -> its stand-ins (a wording picks one by its number); none is a number-asking word
#: or an auxiliary verb, so questions keep their type.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "want": ("would like", "wish", "hope"),
    "buy": ("purchase", "acquire"),
    "sell": ("part with", "let go of"),
    "mug": ("cup", "coffee mug", "drinking mug"),
    "good": ("fair", "decent", "reasonable"),
    "people": ("persons", "individuals"),
    "person": ("individual", "candidate"),
    "bargaining": ("haggling", "negotiating"),
    "agree": ("settle", "concur"),
    "explicitly": ("clearly", "expressly", "openly"),
    "will not": ("refuse to", "won't"),
    "more than": ("above", "in excess of"),
    "below": ("under", "beneath"),
    "minimum": ("lowest", "smallest"),
    "emotional": ("sentimental", "personal"),
    "job": ("position", "post"),
    "hire": ("employ", "take on"),
    "capable": ("competent", "able"),
    "offered": ("given", "granted"),
    "firm": ("practice", "office"),
}
_WORD = re.compile(
    r"\b(" + "|".join(re.escape(w) for w in sorted(SYNONYMS, key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)
_INDEX = re.compile(r"^Wording: *(\d+)", re.MULTILINE)
_KEEP = re.compile(r"^Keep verbatim: *(.+)$", re.MULTILINE)
_TEXTS = re.compile(r"^Texts\b.*\n", re.MULTILINE)


def _synonym(match: re.Match[str], index: int) -> str:
    word = match.group(0)
    options = SYNONYMS[word.lower()]
    pick = options[(index - 1 + stable_hash(word.lower())) % len(options)]
    return pick[:1].upper() + pick[1:] if word[:1].isupper() else pick


def reword(text: str, keep: list[str], index: int) -> str:
    """``text`` with its listed words replaced by wording ``index``'s synonyms, every
    string of ``keep`` (as a whole term, any case) left exactly as it was."""
    masked: list[str] = []

    def hide(match: re.Match[str]) -> str:
        masked.append(match.group(0))
        return f"\x00{len(masked) - 1}\x00"

    for term in sorted(keep, key=len, reverse=True):
        text = re.sub(rf"(?<!\w){re.escape(term)}(?!\w)", hide, text, flags=re.IGNORECASE)
    text = _WORD.sub(lambda m: _synonym(m, index), text)
    return re.sub("\x00(\\d+)\x00", lambda m: masked[int(m.group(1))], text)


def _read_prompt(request: Request) -> tuple[int, list[str], dict[str, str]]:
    """``(wording index, protected strings, texts)`` from the paraphrase prompt."""
    for message in request.messages:
        if message["role"] != "user" or not message["content"].startswith("Step: paraphrase"):
            continue
        prompt = message["content"]
        index, keep, texts = _INDEX.search(prompt), _KEEP.search(prompt), _TEXTS.search(prompt)
        if index and keep and texts:
            found, _end = json.JSONDecoder().raw_decode(prompt, texts.end())
            return int(index.group(1)), json.loads(keep.group(1)), found
    raise InputError("the scripted paraphraser got a prompt that is not a paraphrase request")


def scripted_paraphraser() -> Callable[[Request], str]:
    """A reply function for ``load_model("scripted", fn=...)`` that paraphrases by
    synonym substitution (see the module docstring)."""

    def reply(request: Request) -> str:
        index, keep, texts = _read_prompt(request)
        return json.dumps({path: reword(text, keep, index) for path, text in texts.items()})

    return reply


__all__ = ["SYNONYMS", "reword", "scripted_paraphraser"]
