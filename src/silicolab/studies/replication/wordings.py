"""Wording variants of a study: the same design, its texts said in other words.

A finding that holds under one wording only is fragile. A :class:`Wording` replaces some
texts of a :class:`~silicolab.studies.hypothesis.Hypothesis` and nothing else, so a
replication can run the same design under several wordings; wording 0 is always the
original (it changes nothing).

**Wording and structure.** :func:`wording_fields` lists every paraphrasable text by a flat
path: ``scenario``; ``agents.<agent>.goal``, ``.constraint`` and
``.attributes.<key>`` (the value, never the key); ``variables.<var>.description``,
``.operationalization`` and ``.questions.<i>.text``; and for a cause
``variables.<cause>.attribute`` and ``.public_name``, the labels an agent is told its
condition under. Empty texts are not listed (there is nothing to paraphrase). Everything
else is structure and never changes: names, roles, types, units, levels, treatment values,
causes, scopes, visibility, addressees, aggregation, the protocol.

**The check** (:func:`check_wording`; a list of problems, each starting with its path):

1. a path must be one of :func:`wording_fields` (no unknown path), its text not empty;
2. every *protected term* found in the original text must still be in the paraphrase:
   each cause's treatment values, every variable's levels and units (e.g. ``$50``,
   ``high``, ``dollars``). Found means as a whole term, not inside a longer word or number
   (``$5`` is not in ``$50``); case is ignored so a term may open a sentence;
3. a question keeps the type of its answer: a question of a ``continuous`` or ``count``
   variable that asks for a number (``how much``, ``how many``, ``price``, ``number``,
   ``amount``, a digit...) still asks for one (its unit is kept by rule 2); a question of a
   ``binary`` variable in yes/no form (it opens with an auxiliary verb: *did*, *is*,
   *will*...) stays in that form (opens with one, or says ``whether`` or ``yes or no``, or
   names both levels); a levelled question that names its levels still names them (rule 2);
4. the condition labels stay distinct: a cause's ``attribute`` is not another cause's and
   not an agent's background attribute key (the agent would see one label twice).

:func:`aparaphrase` asks the scientist model for ``k - 1`` paraphrases, one typed call
each (prompt ``studies/prompts/paraphrase.j2``), repairing a reply that fails the check at
most :data:`REPAIRS` times; :func:`load_wordings` reads a researcher's own wordings from a
YAML file. Both return the original first.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from silicolab.core.errors import InputError, ParseFailure
from silicolab.core.seeding import stable_hash
from silicolab.core.sync import sync_twin
from silicolab.core.templates import render_template
from silicolab.llm import LanguageModel, astructured
from silicolab.studies.hypothesis import Hypothesis, StudyVariable

PROMPTS = Path(__file__).parents[1] / "prompts"
#: How many times a paraphrase that fails :func:`check_wording` is re-asked.
REPAIRS = 2
#: Sampling temperature of the paraphrase calls: varied enough for distinct wordings.
TEMPERATURE = 0.7

_NUMBER_ASK = re.compile(
    r"\bhow (much|many|long|far|old|often|likely)\b|\b(number|amount|price|cost|value|sum|"
    r"total|count|percent(age)?|rate|rating|score|scale|figure|estimate)s?\b|\d",
    re.IGNORECASE,
)
_YES_NO = re.compile(
    r"^\W*(did|do|does|is|are|was|were|has|have|had|will|would|can|could|should|shall|may|"
    r"might|must)\b",
    re.IGNORECASE,
)
_YES_NO_WORDS = re.compile(r"\bwhether\b|\byes or no\b", re.IGNORECASE)


class Wording(BaseModel):
    """One wording of a study: ``index`` (0 is the original), the ``texts`` it sets
    (path -> text, see the module docstring; a path left out keeps its original text) and
    its ``source`` (``"original"``, ``"model"``, or the file it was read from)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int = Field(ge=0)
    texts: dict[str, str] = Field(default_factory=dict)
    source: str = "original"

    def apply(self, hypothesis: Hypothesis) -> Hypothesis:
        """A copy of ``hypothesis`` with this wording's texts in place, validated again;
        the structure is untouched. An unknown path is an :class:`InputError`."""
        places = _locations(hypothesis)
        unknown = sorted(set(self.texts) - set(places))
        if unknown:
            raise InputError(
                f"wording {self.index}: unknown paths {unknown}; the texts of this "
                f"hypothesis are {sorted(places)}"
            )
        data = hypothesis.model_dump(mode="json")
        for path, text in self.texts.items():
            *parents, last = places[path]
            node = data
            for key in parents:
                node = node[key]
            node[last] = text
        try:
            return Hypothesis.model_validate(data)
        except ValidationError as exc:
            problem = exc.errors()[0]["msg"].removeprefix("Value error, ")
            raise InputError(f"wording {self.index} breaks the hypothesis: {problem}") from None

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Wording:
        return cls.model_validate(data)


def original(hypothesis: Hypothesis) -> Wording:
    """Wording 0: the hypothesis as written. It holds every original text (applying it
    changes nothing), so a record shows the original beside its paraphrases."""
    return Wording(index=0, texts=wording_fields(hypothesis), source="original")


def _locations(h: Hypothesis) -> dict[str, tuple[str | int, ...]]:
    """Every text field's path -> its place in ``h.model_dump()`` (empty ones included)."""
    out: dict[str, tuple[str | int, ...]] = {"scenario": ("scenario",)}
    for i, a in enumerate(h.agents):
        for name in ("goal", "constraint"):
            out[f"agents.{a.name}.{name}"] = ("agents", i, name)
        for key in a.attributes:
            out[f"agents.{a.name}.attributes.{key}"] = ("agents", i, "attributes", key)
    for i, v in enumerate(h.variables):
        for name in ("description", "operationalization"):
            out[f"variables.{v.name}.{name}"] = ("variables", i, name)
        for j in range(len(v.questions)):
            out[f"variables.{v.name}.questions.{j}.text"] = ("variables", i, "questions", j, "text")
        if not v.measured:
            for name in ("attribute", "public_name"):
                out[f"variables.{v.name}.{name}"] = ("variables", i, name)
    return out


def wording_fields(hypothesis: Hypothesis) -> dict[str, str]:
    """Every paraphrasable text of ``hypothesis``: path -> text, empty texts left out."""
    data = hypothesis.model_dump(mode="json")
    out = {}
    for path, place in _locations(hypothesis).items():
        node: Any = data
        for key in place:
            node = node[key]
        if str(node).strip():
            out[path] = str(node)
    return out


def protected_terms(hypothesis: Hypothesis) -> list[str]:
    """The strings a paraphrase must keep where its original has them: treatment values,
    levels and units of every variable, longest first, without repeats."""
    terms = {t for v in hypothesis.variables for t in (*v.values, *v.levels, v.units) if t}
    return sorted(terms, key=lambda t: (-len(t), t))


def _has(text: str, term: str) -> bool:
    """Whether ``term`` occurs in ``text`` as a whole term (case ignored)."""
    return re.search(rf"(?<!\w){re.escape(term)}(?!\w)", text, re.IGNORECASE) is not None


def _question_owner(hypothesis: Hypothesis, path: str) -> StudyVariable | None:
    parts = path.split(".")
    if parts[0] != "variables" or parts[-1] != "text" or "questions" not in parts:
        return None
    return hypothesis.variable(parts[1])


def _question_problems(v: StudyVariable, path: str, before: str, after: str) -> list[str]:
    """Rule 3 of the module docstring: the question asks for the same type of answer."""
    asks_number = v.type in ("continuous", "count") and _NUMBER_ASK.search(before)
    if asks_number and not _NUMBER_ASK.search(after):
        return [f"{path}: the question no longer asks for a number (say e.g. 'how much', "
                    "'how many', 'what price' or 'what number')"]  # fmt: skip
    if v.type == "binary" and _YES_NO.search(before):
        kept = (
            _YES_NO.search(after)
            or _YES_NO_WORDS.search(after)
            or all(_has(after, level) for level in v.levels)
        )
        if not kept:
            return [f"{path}: the yes/no question is no longer a yes/no question (open it "
                    "with e.g. 'Did', 'Is', 'Will', or ask 'whether')"]  # fmt: skip
    return []


def _label_problems(hypothesis: Hypothesis, texts: dict[str, str]) -> list[str]:
    """Rule 4: the labels an agent is told its condition under stay distinct."""
    background = {k.casefold() for a in hypothesis.agents for k in a.attributes}
    seen: dict[str, str] = {}
    problems = []
    for v in hypothesis.treatments:
        path = f"variables.{v.name}.attribute"
        label = texts.get(path, v.attribute).strip().casefold()
        if label in seen:
            problems.append(f"{path}: {label!r} is also the label of {seen[label]}")
        elif label in background and path in texts:
            problems.append(f"{path}: {label!r} is already an agent's background attribute")
        seen[label] = path
    return problems


def check_wording(hypothesis: Hypothesis, wording: Wording) -> list[str]:
    """The problems of ``wording`` for ``hypothesis`` (empty when it is valid), each
    starting with the path it concerns; the rules are in the module docstring."""
    fields = wording_fields(hypothesis)
    terms = protected_terms(hypothesis)
    problems = []
    for path, text in wording.texts.items():
        if path not in fields:
            problems.append(f"{path}: unknown path; the texts of this hypothesis are "
                            f"{', '.join(fields)}")  # fmt: skip
            continue
        if not text.strip():
            problems.append(f"{path}: the text is empty; write the paraphrase")
            continue
        before = fields[path]
        lost = [t for t in terms if _has(before, t) and not _has(text, t)]
        if lost:
            problems.append(f"{path}: the original says {', '.join(map(repr, lost))}; keep "
                            "each exactly as written")  # fmt: skip
        owner = _question_owner(hypothesis, path)
        if owner is not None:
            problems += _question_problems(owner, path, before, text)
    return problems + _label_problems(hypothesis, wording.texts)


@functools.lru_cache(maxsize=64)
def _reply_schema(paths: tuple[str, ...]) -> type[BaseModel]:
    """A reply with one required text per path (the JSON keys are the paths)."""
    fields: Any = {f"t{i}": (str, Field(alias=path)) for i, path in enumerate(paths)}
    return create_model(
        "Paraphrase", __config__=ConfigDict(extra="ignore", populate_by_name=False), **fields
    )


def _prompt(hypothesis: Hypothesis, fields: dict[str, str], index: int) -> list[dict[str, str]]:
    keep = [t for t in protected_terms(hypothesis) if any(_has(x, t) for x in fields.values())]
    user = render_template(
        PROMPTS,
        "paraphrase",
        index=index,
        keep=keep,
        keep_json=json.dumps(keep, ensure_ascii=False),
        texts_json=json.dumps(fields, ensure_ascii=False, indent=1),
    )
    return [
        {"role": "system", "content": render_template(PROMPTS, "system")},
        {"role": "user", "content": user},
    ]


def sample_identity(seed: int, index: int) -> int:
    """The ``sample_index`` of wording ``index``'s call under ``seed``: fixed by the
    wording's identity, so a rerun hits the cache and wording 2 never becomes wording 1's."""
    return stable_hash(f"{seed}:paraphrase:{index}") % 2**31


async def _paraphrase_one(
    hypothesis: Hypothesis, model: LanguageModel, index: int, seed: int, temperature: float
) -> Wording:
    """Ask for wording ``index``; re-ask with the problems listed, at most REPAIRS times."""
    fields = wording_fields(hypothesis)
    schema = _reply_schema(tuple(fields))
    messages = _prompt(hypothesis, fields, index)
    problems: list[str] = []
    for _attempt in range(REPAIRS + 1):
        try:
            reply = await astructured(
                model, messages, schema, retries=2, tag="scientist",
                temperature=temperature, sample_index=sample_identity(seed, index),
            )  # fmt: skip
        except ParseFailure as exc:
            message = f"paraphrase {index}: {exc}"
            raise ParseFailure(message, raw=exc.raw, attempts=exc.attempts) from exc
        texts = reply.model_dump(by_alias=True)
        wording = Wording(index=index, texts=texts, source="model")
        problems = check_wording(hypothesis, wording)
        if not problems:
            return wording
        messages = [
            *messages,
            {"role": "assistant", "content": json.dumps(texts, ensure_ascii=False)},
            {"role": "user", "content": "That paraphrase breaks the rules:\n- "
             + "\n- ".join(problems) + "\nFix these and reply again with the whole JSON "
             "object, every key mapped to its rewritten text."},
        ]  # fmt: skip
    raise ParseFailure(
        f"paraphrase {index} stayed invalid after {REPAIRS} repairs: {'; '.join(problems)}; "
        "rerun with another seed=, or supply the wordings in a file",
        raw=messages[-2]["content"],
        attempts=REPAIRS + 1,
    )


async def aparaphrase(
    hypothesis: Hypothesis,
    model: LanguageModel,
    k: int,
    *,
    seed: int = 0,
    temperature: float = TEMPERATURE,
) -> list[Wording]:
    """``k`` wordings of ``hypothesis``: the original (wording 0, no call) and ``k - 1``
    paraphrases by ``model`` (the scientist), asked concurrently, one typed call each.

    Every paraphrase passes :func:`check_wording`; one that does not after
    :data:`REPAIRS` re-asks raises :class:`ParseFailure` naming its problems. Wording
    ``i``'s call has a sample identity fixed by ``seed`` and ``i``, so a rerun is free."""
    if k < 1:
        raise InputError(f"k={k}: ask for at least one wording (1 is the original alone)",
                         params=("k",))  # fmt: skip
    jobs = [_paraphrase_one(hypothesis, model, i, seed, temperature) for i in range(1, k)]
    done = await asyncio.gather(*jobs, return_exceptions=True)
    for result in done:
        if isinstance(result, BaseException):
            raise result
    return [original(hypothesis), *done]  # type: ignore[list-item]


paraphrase = sync_twin(aparaphrase)


def load_wordings(path: str | Path, hypothesis: Hypothesis) -> list[Wording]:
    """A researcher's wordings of ``hypothesis`` from the YAML file ``path``: a list whose
    entries each map paths (see :func:`wording_fields`) to texts; a path left out keeps
    its original text. Entry ``n`` (from 1) becomes wording ``n``, after the original.
    Every entry is checked; the :class:`InputError` names the file, the entry and the path
    of each problem."""
    import yaml

    from silicolab.core.files import read_user_text

    path = Path(path)
    text = read_user_text(path, what="wordings file")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, list) or not data:
        raise InputError(
            f"{path}: expected a list of wordings, each a mapping from a path such as "
            "'scenario' or 'agents.<agent>.goal' to its text"
        )
    wordings, problems = [original(hypothesis)], []
    for n, entry in enumerate(data, start=1):
        if not isinstance(entry, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in entry.items()
        ):
            problems.append(f"wording {n}: expected a mapping from paths to texts (strings)")
            continue
        wording = Wording(index=n, texts=entry, source=str(path))
        problems += [f"wording {n}, {p}" for p in check_wording(hypothesis, wording)]
        wordings.append(wording)
    if problems:
        raise InputError(f"{path}: " + "; ".join(problems))
    return wordings


__all__ = [
    "REPAIRS",
    "TEMPERATURE",
    "Wording",
    "aparaphrase",
    "check_wording",
    "load_wordings",
    "original",
    "paraphrase",
    "protected_terms",
    "sample_identity",
    "wording_fields",
]
