"""A spending limit that holds (issue 24, "Money").

Each test first reproduces the old failure: ``--max-cost 0 --yes`` with an unknown price
started paid calls, and a limit the plan fitted under was never checked against the
actual spend. Now an unknown price is refused up front (exit 2, one line, no request, no
run directory), the run stops issuing paid calls once its actual spend reaches the limit
(``interrupted`` with the reason, exit 4), ``--resume`` with a higher limit finishes it
with every unit once, and a model of the built-in table shows a dated dollar range.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from silicolab.core.errors import BudgetReached
from silicolab.llm.ledger import Prices
from silicolab.runs import Run
from silicolab.runtime import AsyncExecutor
from silicolab.studies import read_hypothesis
from silicolab.studies.cost import plan_cost
from silicolab.studies.world import HiddenWorld
from tests.reliability.support import cli, ok_units, one_line, only_run, use_server
from tests.support.cli import EXE, cli_env
from tests.support.openai_server import FakeLLMServer, count_prompt_tokens

#: A small study: one cause, six conditions, two statements each.
HYPOTHESIS = """\
name: spending
scenario: A customer asks a shop assistant about the price of a coat.
agents:
  - name: customer
    role: customer
    goal: You want a good price.
  - name: assistant
    role: shop assistant
    goal: You want to sell the coat.
variables:
  - name: satisfaction
    role: outcome
    type: continuous
    units: points
    description: How satisfied the customer is with the offer.
    questions:
      - addressee: customer
        text: How satisfied are you with the offer, from 0 to 10?
    causes: [discount]
  - name: discount
    role: cause
    type: continuous
    units: percent
    values: ["0", "10", "20", "30", "40", "50"]
    agent: assistant
    attribute: the discount you offer in percent
protocol: ordered
order: [customer, assistant]
max_statements: 2
"""
LLM = ["--subjects", "llm", "--model", "openai:fake"]
#: Conditions run at once: each makes its calls one after another, so at most this many
#: calls are in flight.
JOBS = 2


def _study(folder: Path, server: FakeLLMServer) -> list[str]:
    """``folder`` set up for the small study at ``server``; the study's arguments."""
    use_server(folder, server.base_url)
    (folder / "h.yaml").write_text(HYPOTHESIS)
    return ["study", "run", "--hypothesis", "h.yaml", *LLM, "--base-url", server.base_url,
            "--jobs", str(JOBS), "--yes"]  # fmt: skip


def test_max_cost_with_an_unknown_price_is_refused_before_any_request(tmp_path: Path) -> None:
    # before: the limit compared only a known planned cost, so an unknown price ran anyway
    with FakeLLMServer(reply="fine") as server:
        args = _study(tmp_path, server)
        out = cli([*args, "--max-cost", "0"], tmp_path)
        requests = server.stats.requests
    assert out.returncode == 2, out.stderr
    line = one_line(out.stderr)
    assert line.startswith("error: --max-cost needs the price of subject model openai:fake")
    assert "--price-in/--price-out" in line and "models.subject" in line
    assert requests == 0
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def _world_reply(hypothesis: Any) -> Any:
    """The hidden world over HTTP, its statements padded with 200 words: each reply costs
    about three times what the plan expects, so the plan fits under a limit the actual
    spend passes mid-run."""
    world = HiddenWorld(hypothesis, {"discount": 0.05}, intercept=4.0, noise_sd=0.5)

    def reply(body: dict[str, Any]) -> str:
        text = world(SimpleNamespace(messages=body["messages"]))
        if "Write what you say next" in json.dumps(body["messages"][-1]):
            return "well " * 200 + text
        return text

    return reply


def test_the_limit_holds_during_the_run_and_resume_finishes_it(tmp_path: Path) -> None:
    (tmp_path / "spending.yaml").write_text(HYPOTHESIS)
    hypothesis = read_hypothesis(tmp_path / "spending.yaml")
    price_in, price_out = 1.0, 100.0
    planned = plan_cost(hypothesis, 6, Prices(price_in, price_out)).cost_usd
    assert planned is not None
    limit = round(planned[1] * 1.05, 4)  # the plan fits; the padded replies do not
    prices = ["--price-in", str(price_in), "--price-out", str(price_out)]
    with FakeLLMServer(reply=_world_reply(hypothesis)) as server:
        args = _study(tmp_path, server)
        out = cli([*args, *prices, "--max-cost", str(limit)], tmp_path)
        stats = server.stats
        spent = (stats.prompt_tokens * price_in + stats.completion_tokens * price_out) / 1e6
        costs = [_cost(body, price_in, price_out) for body in stats.requests_log]
        # before: nothing watched the actual spend, so all 36 calls were made
        assert out.returncode == 4, out.stderr
        plan, line = out.stderr.splitlines()
        assert plan.startswith("plan: 6 conditions") and "(prices: --price-in/--price-out)" in plan
        assert line.startswith(f"error: spending limit ${limit:g} reached (")
        assert "--resume and a higher --max-cost" in line
        assert stats.requests < 36
        # at most the limit plus the calls that were in flight when it was reached
        assert spent <= limit + JOBS * max(costs)
        assert spent >= limit
        run = only_run(tmp_path / "runs")
        assert run.status == "interrupted"
        assert run.info["reason"].startswith(f"spending limit ${limit:g} reached (")
        done = ok_units(run)
        assert 0 < len(done) < 6
        before = stats.requests
        resume = ["study", "run", "--resume", *LLM, "--base-url", server.base_url, "--yes"]
        again = cli([*resume, *prices, "--max-cost", "100"], tmp_path)
        after = server.stats.requests
    assert again.returncode == 0, again.stderr
    assert after > before
    resumed = only_run(tmp_path / "runs")
    assert resumed.status == "finished" and "reason" not in resumed.info
    units = ok_units(resumed)
    assert len(units) == len(set(units)) == 6 and set(done) <= set(units)
    assert units[: len(done)] == done  # the finished ones were not redone


def _cost(body: dict[str, Any], price_in: float, price_out: float) -> float:
    """The most a request can cost: its prompt words in, its ``max_tokens`` out."""
    out = body.get("max_tokens") or body.get("max_completion_tokens") or 300
    return (count_prompt_tokens(body["messages"]) * price_in + out * price_out) / 1e6


def test_a_built_in_price_shows_a_dated_dollar_range(tmp_path: Path) -> None:
    # before: no model had a built-in price, so every plan said "price unknown"
    (tmp_path / "h.yaml").write_text(HYPOTHESIS)
    out = subprocess.run(
        [*EXE, "study", "run", "--hypothesis", "h.yaml", "--model", "openai:gpt-4o-mini"],
        cwd=tmp_path, env=cli_env({"OPENAI_API_KEY": "sk-test-not-used"}),
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert out.returncode == 2, out.stderr
    plan = out.stderr.splitlines()[0]
    assert plan.startswith("plan: 6 conditions, 36-36 LLM calls"), plan
    assert "(prices: built-in, as of 20" in plan and "price unknown" not in plan
    assert "add --yes" in out.stderr and not (tmp_path / "runs").exists()


def test_a_unit_stopped_by_the_limit_is_not_recorded_and_the_run_is_interrupted(
    tmp_path: Path,
) -> None:
    # before: on_error="record" carried on past a failing unit and the run ended failed
    async def unit(x: int) -> int:
        if x >= 2:
            raise BudgetReached(1.0, 1.25)
        return x

    run = Run.create(tmp_path / "runs", kind="study")
    with pytest.raises(BudgetReached), run:
        AsyncExecutor(concurrency=1).map(unit, range(5), run=run, on_error="record")
    assert [(e["unit"], e["status"]) for e in run.events()] == [("0", "ok"), ("1", "ok")]
    stored = Run.open(run.path)
    assert stored.status == "interrupted"
    assert stored.info["reason"] == "spending limit $1 reached ($1.2500 spent)"
