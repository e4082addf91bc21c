"""How a study's respondents answer their survey questions (``survey=``): ``"at_once"``
(the default) sends a respondent's questions concurrently, each from its state after the
conversation; ``"in_turn"`` one after another. Against the local test server: the
requests in flight show which, and a stateless world gives the same values either way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import silicolab as sl
from silicolab.core.errors import InputError
from silicolab.studies import load_example
from silicolab.studies.hypothesis import Hypothesis
from silicolab.studies.offline import default_effects
from silicolab.studies.pipeline import StudyOptions
from silicolab.studies.world import HiddenWorld
from tests.support.world_server import world_server

SECOND = "Did the two of them shake on a price for the mug by the end?"


def _two_questions() -> Hypothesis:
    """The mug study whose outcome the coordinator is asked about twice."""
    data = load_example("mug").to_dict()
    deal = data["variables"][0]
    deal["questions"].append({"addressee": "coordinator", "text": SECOND})
    deal["aggregation"] = "max"
    return Hypothesis.model_validate(data)


def _study(tmp_path: Path, survey: str | None) -> tuple[sl.StudyResult, dict[str, int]]:
    hypothesis = _two_questions()
    world = HiddenWorld(hypothesis, default_effects(hypothesis))
    server = world_server(world, latency_s=0.3)
    config = tmp_path / f"{survey}.yaml"
    config.write_text(f"cache_path: {tmp_path / str(survey)}.sqlite\n", encoding="utf-8")
    extra = {} if survey is None else {"survey": survey}
    with server:
        result = sl.run_study(
            hypothesis, model="openai:fake", base_url=server.base_url, conditions=1, jobs=1,
            runs_dir=tmp_path / str(survey), config=config, notify=lambda line: None, **extra,
        )  # fmt: skip
        stats = server.stats
    return result, {"in_flight": stats.max_in_flight, "requests": stats.requests}


def test_a_respondents_questions_go_at_once_by_default_or_in_turn(tmp_path: Path) -> None:
    at_once, concurrent = _study(tmp_path, None)  # the default
    in_turn, sequential = _study(tmp_path, "in_turn")
    # one condition with one conversation: only the survey can have two requests in flight
    assert concurrent["in_flight"] == 2 and sequential["in_flight"] == 1
    assert concurrent["requests"] == sequential["requests"]
    stored = [json.loads((r.run_dir / "run.json").read_text()) for r in (at_once, in_turn)]
    assert [s["config"]["survey"] for s in stored] == ["at_once", "in_turn"]
    # a stateless world answers each question alike either way
    answers = [[a["value"] for a in r.record["runs"][0]["survey"]] for r in (at_once, in_turn)]
    assert answers[0] == answers[1] and len(answers[0]) == 2
    assert at_once.record["runs"][0]["values"] == in_turn.record["runs"][0]["values"]


def test_a_run_stored_before_the_option_resumes_in_turn() -> None:
    assert StudyOptions().survey == "at_once"
    assert StudyOptions.from_dict({"subjects": "llm"}).survey == "in_turn"
    assert StudyOptions.from_dict({"survey": "at_once"}).survey == "at_once"


def test_a_survey_order_is_refused_where_it_cannot_apply(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="survey="):
        sl.run_study("mug", subjects="world", survey="shuffled", runs_dir=tmp_path)
    with pytest.raises(InputError, match="survey"):
        sl.run_study("auction", subjects="rule", survey="in_turn", runs_dir=tmp_path)
    assert not any(tmp_path.iterdir())
