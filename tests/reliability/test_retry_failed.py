"""``--retry-failed``: a degraded run reruns only the units that failed, with fresh model
calls (their failed replies are in the cache), keeps the others from ``events.jsonl`` and
ends finished when the retries succeed. A plain ``--resume`` of the same run, the case
reproduced first, replays the cached failures and stays degraded."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from silicolab.core.fresh import fresh_calls
from silicolab.llm import load_model
from silicolab.llm.base import run_sync
from silicolab.runs import Run
from silicolab.runtime import AsyncExecutor
from silicolab.studies import make_design, read_hypothesis
from silicolab.studies.conduct import arun_condition
from silicolab.studies.world import HiddenWorld
from tests.reliability.support import bargainer_reply, cli, one_line, only_run, record, use_server
from tests.support.cli import strict_json
from tests.support.openai_server import FakeLLMServer

#: Six conditions, two agents, four statements each: a study that fits in seconds.
HYPOTHESIS = """\
name: offer
scenario: A person is interviewing for a job as a lawyer.
agents:
  - {name: applicant, role: job applicant, goal: You want to be offered the job.}
  - {name: employer, role: employer, goal: You want to hire a capable lawyer for your firm.}
variables:
  - name: offer
    role: outcome
    type: continuous
    units: thousand dollars
    description: The yearly salary the employer offers.
    questions:
      - addressee: employer
        text: What yearly salary, in thousands of dollars, do you offer the applicant?
    causes: [passed_bar, height_cm]
  - name: passed_bar
    role: cause
    type: binary
    units: status
    levels: [not passed, passed]
    values: [not passed, passed]
    agent: applicant
    attribute: your bar exam status
    visibility: public
    public_name: the applicant's bar exam status
  - name: height_cm
    role: cause
    type: continuous
    units: centimeters
    values: ["160", "175", "190"]
    agent: applicant
    attribute: your height in centimeters
protocol: ordered
order: [employer, applicant]
max_statements: 4
"""
GARBAGE = "zq zq zq"


def _texts(messages: Any) -> str:
    return json.dumps(messages, sort_keys=True)


class Replies:
    """The server's replies: the hidden world, except, while ``failing``, garbage for the
    requests only the ``bad`` conditions make and for every request after a garbage
    reply (its transcript carries it), so exactly those conditions become unusable.
    ``seen`` lists every request's messages."""

    def __init__(self, world: HiddenWorld, bad_requests: set[str]):
        self.world, self.bad, self.failing, self.seen = world, bad_requests, True, []

    def __call__(self, body: dict[str, Any]) -> str:
        text = _texts(body["messages"])
        self.seen.append(text)
        if self.failing and (text in self.bad or GARBAGE in text):
            return GARBAGE
        return self.world(SimpleNamespace(messages=body["messages"]))


def _requests_by_condition(hypothesis: Any, world: HiddenWorld) -> dict[str, list[str]]:
    """The requests each condition makes with a well-behaved model (in-process)."""
    made: dict[str, list[str]] = {}
    for condition in make_design(hypothesis).conditions:
        seen: list[str] = []

        def fn(request: Any, seen: list[str] = seen) -> str:
            seen.append(_texts(request.messages))
            return world(request)

        model = load_model("scripted", fn=fn)
        run_sync(
            arun_condition(hypothesis, condition, subject_model=model, coordinator_model=model)
        )
        made[condition.unit_id] = seen
    return made


def _nothing_failed(run: Run) -> str:
    return f"nothing failed in runs/{run.path.name}: it finished, and its record is kept as it is"


def test_retry_failed_reruns_only_the_failed_conditions_with_fresh_calls(tmp_path: Path) -> None:
    (tmp_path / "offer.yaml").write_text(HYPOTHESIS)
    hypothesis = read_hypothesis(tmp_path / "offer.yaml")
    world = HiddenWorld(hypothesis, {"passed_bar": 10.0, "height_cm": 0.2}, intercept=50.0)
    made = _requests_by_condition(hypothesis, world)
    units = list(made)
    bad = {units[1], units[4]}
    shared = set().union(*(set(made[u]) for u in units if u not in bad))
    replies = Replies(world, set().union(*(set(made[u]) for u in bad)) - shared)
    with FakeLLMServer(reply=replies) as server:
        args = ["study", "run", "--hypothesis", "offer.yaml", "--yes", "--json",
                "--model", "openai:fake-model", "--base-url", server.base_url]  # fmt: skip
        first = cli(args, tmp_path)
        assert first.returncode == 3, first.stderr
        run = only_run(tmp_path / "runs")
        assert run.status == "degraded" and "2 of 6 conditions unusable" in first.stderr
        before = {e["unit"]: e for e in run.events()}

        replies.failing = False  # the model behaves from now on
        replies.seen.clear()
        plain = cli([*args, "--resume"], tmp_path)  # the case: the cache replays the failures
        assert plain.returncode == 3, plain.stderr
        assert replies.seen == [] and Run.open(run.path).status == "degraded"

        retried = cli([*args, "--retry-failed"], tmp_path)
        assert retried.returncode == 0, retried.stderr
        assert f"rerunning 2 failed unit(s) of runs/{run.path.name}" in retried.stderr
        # only the failed conditions' requests reached the server, each as often as a
        # well-behaved run of those conditions makes it
        assert Counter(replies.seen) == Counter(made[units[1]] + made[units[4]])
        summary = strict_json(retried.stdout)
        assert summary["status"] == "finished" and summary["health"]["failed_units"] == 0

        again = cli([*args, "--retry-failed"], tmp_path)
    run = Run.open(run.path)
    assert run.status == "finished"
    events = run.events()
    final = {e["unit"]: e for e in events if e["status"] in ("ok", "error", "retry")}
    assert set(final) == set(units) and all(e["status"] == "ok" for e in final.values())
    for unit in set(units) - bad:  # untouched: one event, the first run's
        assert [e for e in events if e["unit"] == unit] == [before[unit]]
    for unit in bad:
        assert [e["status"] for e in events if e["unit"] == unit] == ["ok", "retry", "ok"]
        assert not final[unit]["data"]["health"]["unusable"]
    assert [r["condition_id"] for r in record(run)["runs"]] == units

    assert again.returncode == 0, again.stderr  # a finished run: nothing to retry
    assert one_line(again.stderr) == _nothing_failed(run)
    assert Run.open(run.path).events() == events


def test_retry_failed_without_any_run_is_one_line_exit_2(tmp_path: Path) -> None:
    out = cli(["sim", "run", "bargaining", "--retry-failed"], tmp_path)
    assert out.returncode == 2
    assert one_line(out.stderr).startswith("error: no sim run under runs to resume")


def test_retry_failed_on_a_finished_bench_says_nothing_failed(tmp_path: Path) -> None:
    args = ["bench", "causalab", "--suite", "3nodes", "--episodes", "2", "--json"]
    assert cli(args, tmp_path).returncode == 0
    run = only_run(tmp_path / "runs")
    kept = (run.path / "record.json").read_bytes()
    out = cli([*args, "--retry-failed"], tmp_path)
    assert out.returncode == 0 and out.stdout == ""
    assert one_line(out.stderr) == _nothing_failed(run)
    assert (run.path / "record.json").read_bytes() == kept


def test_retry_failed_sim_episode_runs_again_with_fresh_calls(tmp_path: Path) -> None:
    args = ["sim", "run", "bargaining", "--model", "openai:fake", "--json"]
    with FakeLLMServer(reply=GARBAGE) as server:
        use_server(tmp_path, server.base_url)
        first = cli(args, tmp_path)
        assert first.returncode == 3, first.stderr
        server.reply, served = bargainer_reply, server.stats.ok
        plain = cli([*args, "--resume"], tmp_path)  # the episode comes back from its event
        assert plain.returncode == 3 and server.stats.ok == served
        retried = cli([*args, "--retry-failed"], tmp_path)
        assert server.stats.ok > served
    assert retried.returncode == 0, retried.stderr
    run = only_run(tmp_path / "runs")
    assert run.status == "finished" and record(run)["health"]["degraded"] is False
    assert [e["status"] for e in run.events()] == ["ok", "retry", "ok"]


def test_a_retried_unit_calls_the_model_and_replaces_its_cached_reply(tmp_path: Path) -> None:
    answers = iter(["bad", "good", "never"])
    model = load_model("scripted", fn=lambda request: next(answers),
                       cache_path=tmp_path / "cache.sqlite")  # fmt: skip

    async def ask(unit: str) -> str:
        return (await model.agenerate(f"question {unit}", temperature=0)).text

    run = Run.create(tmp_path / "runs", kind="t")
    assert [r.value for r in AsyncExecutor(1).map(ask, ["a"], run=run)] == ["bad"]
    run.retry(["a"])  # as --retry-failed does, before the unit reruns
    reopened = Run.open(run.path)  # a later process: the mark is in events.jsonl
    assert reopened.retried_units() == {"a"} and reopened.finished_units() == set()
    assert [r.value for r in AsyncExecutor(1).map(ask, ["a"], run=reopened)] == ["good"]
    assert reopened.retried_units() == set() and reopened.finished_units() == {"a"}
    assert run_sync(model.agenerate("question a", temperature=0)).text == "good"  # cached
    with fresh_calls():
        assert run_sync(model.agenerate("question a", temperature=0)).text == "never"


def test_retry_failed_discover_asks_the_debate_anew(tmp_path: Path) -> None:
    from silicolab.discovery import datasets
    from tests.discovery.mac_fakes import Oracle

    args = ["discover", "--dataset", "auto_mpg", "--method", "mac_meta_debate",
            "--model", "openai:fake", "--json"]  # fmt: skip
    with FakeLLMServer() as server:  # an echoing model: every judge's reply unusable
        use_server(tmp_path, server.base_url)
        assert cli(args, tmp_path).returncode == 3
        server.reply = Oracle(datasets.load("auto_mpg").truth.edges).http
        served = server.stats.ok
        plain = cli([*args, "--resume"], tmp_path)  # the cache replays the echoes
        assert plain.returncode == 3 and server.stats.ok == served
        retried = cli([*args, "--retry-failed"], tmp_path)
        assert retried.returncode == 0, retried.stderr
        assert server.stats.ok > served
    run = only_run(tmp_path / "runs")
    assert run.status == "finished" and record(run)["health"]["degraded"] is False
    assert [e["status"] for e in run.events()] == ["ok", "ok", "retry", "ok"]


def test_on_a_ray_cluster_a_fresh_call_skips_the_shared_cache(tmp_path: Path) -> None:
    """The cluster's cache lives in the driver's LLM service: a worker's begin marked
    fresh (the 5th field a retried unit's call sends) gets a slot, not the cached reply,
    and its answer replaces the cached one. The service is used in-process here."""
    import asyncio

    from silicolab.llm.ledger import Prices
    from silicolab.llm.ray._service import LLMService
    from silicolab.llm.types import Completion, Usage

    async def scenario() -> None:
        limits = {"max_concurrency": 2, "requests_per_minute": None, "tokens_per_minute": None}
        service = LLMService(cache_path=str(tmp_path / "c.sqlite"), prices=Prices(), **limits)
        _, lease = await service.begin("k", "t", 0)
        service.end("k", "t", lease, 0, Completion("bad", Usage(1, 1)), None)
        [(_, hit, _, _)] = await service.exchange("w:1", [(1, "k", "t", 0)], [], True)
        assert hit is not None and hit.text == "bad"
        [(_, hit, lease, _)] = await service.exchange("w:1", [(2, "k", "t", 0, True)], [], True)
        assert hit is None and lease is not None
        service.end("k", "t", lease, 0, Completion("good", Usage(1, 1)), None)
        assert (await service.begin("k", "t", 0))[0].text == "good"

    asyncio.run(scenario())
