"""The scientist chain keeps every accepted step: a reply that stays invalid at step N
keeps steps 1..N-1 on disk, and a resume continues from step N without asking again for
any accepted step (in process, and through the CLI against a real HTTP server)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from silicolab.core.errors import InputError, ParseFailure
from silicolab.llm import load_model
from silicolab.studies import load_example, read_hypothesis
from silicolab.studies.scientist import agenerate_hypothesis
from silicolab.studies.scientist._journal import (
    StepJournal,
    ajournaled_hypothesis,
    journal_path,
    open_chain,
)
from silicolab.studies.scripted import scripted_scientist, step_of
from tests.support.cli import EXE, strict_json
from tests.support.cli import private_cache_env as _env
from tests.support.openai_server import FakeLLMServer

FAILING = ("units", "seller_min_price")  # a step in the middle of the mug chain
BAD_REPLY = "Units? I could not say."


def _ident(step_subject: tuple[str, str]) -> str:
    step, subject = step_subject
    return f"{subject}.{step}" if subject else step


def _scripts(target):
    script = scripted_scientist(target)

    def failing(request):
        if step_of(request)[:2] == FAILING:
            return BAD_REPLY
        return script(request)

    return script, failing


async def test_a_failed_step_keeps_the_accepted_ones_and_resume_asks_only_the_rest(tmp_path):
    target = load_example("mug")
    script, failing = _scripts(target)
    out = tmp_path / "mug.yaml"
    asked: list[tuple[str, str]] = []

    def first(request):
        asked.append(step_of(request)[:2])
        return failing(request)

    journal = open_chain(out, resume=None, model="scripted", scenario=target.scenario)
    with pytest.raises(ParseFailure) as failure:
        await ajournaled_hypothesis(journal, load_model("scripted", fn=first))
    message = str(failure.value)
    assert "'seller_min_price.units'" in message  # the step
    assert BAD_REPLY in message  # a sample reply
    assert f"silicolab study hypothesis --resume {out}" in message  # how to continue
    kept = StepJournal.open(out)
    accepted = [_ident(s) for s in dict.fromkeys(asked) if s != FAILING]
    assert list(kept.replies) == accepted and len(accepted) > 10
    assert kept.failures == {"seller_min_price.units": 1}
    assert f"the {len(accepted)} accepted steps are kept" in message
    assert not out.exists()

    again: list[tuple[str, str]] = []

    def second(request):
        again.append(step_of(request)[:2])
        return script(request)

    resumed = open_chain(out, resume=out, model="scripted")
    hypothesis = await ajournaled_hypothesis(resumed, load_model("scripted", fn=second))
    assert again[0] == FAILING
    assert not {_ident(s) for s in again} & set(accepted)  # no accepted step asked again
    # the same hypothesis, decisions included, as a chain that never failed
    fresh = await agenerate_hypothesis(
        target.scenario, load_model("scripted", fn=script), n_causes=3, seed=0
    )
    assert hypothesis.model_dump() == fresh.model_dump()
    assert len(again) == len(fresh.decisions) - len(accepted)


async def test_a_failed_step_is_asked_again_with_a_fresh_sample_identity(tmp_path):
    target = load_example("mug")
    script, failing = _scripts(target)
    indexes: list[int] = []

    def watch(fn):
        def reply(request):
            if step_of(request)[:2] == FAILING:
                indexes.append(request.sample_index)
            return fn(request)

        return reply

    out = tmp_path / "mug.yaml"
    journal = open_chain(out, resume=None, model="scripted", scenario=target.scenario)
    cache = tmp_path / "cache.sqlite"
    with pytest.raises(ParseFailure):
        await ajournaled_hypothesis(journal, load_model("scripted", fn=watch(failing),
                                                        cache_path=cache))  # fmt: skip
    first = set(indexes)
    indexes.clear()
    resumed = open_chain(out, resume=out, model="scripted")
    await ajournaled_hypothesis(resumed, load_model("scripted", fn=watch(script), cache_path=cache))
    assert indexes and not set(indexes) & first  # not the cached bad draw


def test_resume_refuses_settings_that_contradict_the_journal(tmp_path):
    target = load_example("mug")
    out = tmp_path / "mug.yaml"
    open_chain(out, resume=None, model="scripted", scenario=target.scenario, seed=2)
    assert journal_path(out) == tmp_path / "mug.steps.jsonl"
    with pytest.raises(InputError, match=r"seed=5 \(journal: 2\)"):
        open_chain(out, resume=out, model="scripted", seed=5)
    with pytest.raises(InputError, match="no scientist journal"):
        open_chain(tmp_path / "other.yaml", resume=tmp_path / "other.yaml", model="scripted")


def _cli(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*EXE, "study", "hypothesis", *args], cwd=tmp_path, env=_env(tmp_path),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _server(fn) -> FakeLLMServer:
    return FakeLLMServer(
        reply=lambda body: fn(SimpleNamespace(messages=body["messages"])), log_limit=10_000
    )


def _steps(server: FakeLLMServer) -> list[str]:
    requests = [SimpleNamespace(messages=b["messages"]) for b in server.stats.requests_log]
    return [_ident(step_of(r)[:2]) for r in requests]


def test_cli_keeps_the_steps_and_resume_continues_without_repeating_a_call(tmp_path):
    target = load_example("mug")
    script, failing = _scripts(target)
    model = ["--model", "openai:fake-scientist", "--base-url"]
    with _server(failing) as bad:
        out = _cli([target.scenario, "-o", "rent.yaml", "--scientist-temperature", "0.7",
                    *model, bad.base_url], tmp_path)  # fmt: skip
        first = _steps(bad)
    assert out.returncode == 3, out.stderr  # ParseFailure: the model kept failing
    error = out.stderr.strip()
    assert len(error.splitlines()) == 1 and "Traceback" not in out.stderr
    assert "'seller_min_price.units'" in error and BAD_REPLY in error
    assert "silicolab study hypothesis --resume rent.yaml" in error
    journal = tmp_path / "rent.steps.jsonl"
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    assert lines[0]["temperature"] == 0.7 and lines[0]["model"] == "openai:fake-scientist"
    accepted = [line["step"] for line in lines if "reply" in line]
    assert accepted == list(dict.fromkeys(s for s in first if s != "seller_min_price.units"))
    with _server(script) as good:
        out = _cli(["--resume", "rent.yaml", "--json", *model, good.base_url], tmp_path)
        second = _steps(good)
    assert out.returncode == 0, out.stderr
    summary = strict_json(out.stdout)
    assert summary["scientist_temperature"] == 0.7 and summary["seed"] == 0
    assert second[0] == "seller_min_price.units"
    assert not set(second) & set(accepted)
    written = read_hypothesis(tmp_path / "rent.yaml")
    assert [v.name for v in written.treatments] == [v.name for v in target.treatments]
    assert len(written.decisions) == len(accepted) + len(second)
    assert not journal.exists()
