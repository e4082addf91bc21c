"""A model that answers badly never looks like a successful run.

An echoing model and a garbage model end degraded (exit 3, one line naming the worst unit
and a sample reply, counts in run.json and record.json); a model that times out ends the
run failed with one line naming the agent and its act, and keeps the transcript so far;
it exits 3 as well: "the model kept failing", whether it answered badly or not at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.support import cli, one_line, only_run, record, use_server
from tests.support.cli import strict_json
from tests.support.openai_server import FakeLLMServer, Fault

SIM = ["sim", "run", "bargaining", "--model", "openai:fake"]


@pytest.mark.parametrize(("reply", "sample"), [(None, "echo: "), ("%%% zzz", "%%% zzz")])
def test_sim_with_an_echoing_or_garbage_model_ends_degraded(
    tmp_path: Path, reply: str | None, sample: str
) -> None:
    with FakeLLMServer(reply=reply) as server:
        use_server(tmp_path, server.base_url)
        out = cli([*SIM, "--json"], tmp_path)
    assert out.returncode == 3, out.stderr
    line = one_line(out.stderr)
    assert line.startswith("DEGRADED: 2 of 2 units failed every step"), line
    assert "worst unit Seller" in line and sample in line
    summary = strict_json(out.stdout)
    assert summary["status"] == "degraded"
    assert summary["health"]["totals"]["parse_failures"] == 4
    run = only_run(tmp_path / "runs")
    assert run.status == "degraded" and run.info["health"]["failed_units"] == 2
    answers = record(run)["survey"]
    assert all(a["parse_failed"] and a["value"] is None for a in answers)
    assert all("act" in a["explanation"] and "last reply" in a["explanation"] for a in answers)


def test_sim_with_a_model_that_times_out_fails_naming_agent_and_act(tmp_path: Path) -> None:
    with FakeLLMServer(faults=[Fault("timeout")] * 50, timeout_hang_s=5) as server:
        use_server(tmp_path, server.base_url, timeout_s=0.3)
        out = cli(SIM, tmp_path)
    assert out.returncode == 3, out.stderr  # LLMError: the model kept failing
    line = one_line(out.stderr)
    assert line.startswith("error: Seller, act 0 (statement): ") and "timed out" in line, line
    run = only_run(tmp_path / "runs")
    assert run.status == "failed" and "Seller, act 0" in run.info["error"]
    assert (run.path / "transcript.html").is_file()
    assert f"runs/{run.path.name}/transcript.html" in line
    assert [e["status"] for e in run.events()] == ["error"]


def test_sim_failure_mid_talk_keeps_the_transcript_so_far(tmp_path: Path) -> None:
    from tests.reliability.support import bargainer_reply

    with FakeLLMServer(reply=bargainer_reply) as server:
        use_server(tmp_path, server.base_url, timeout_s=0.3)
        calls = {"n": 0}

        def reply(body: dict) -> str:
            calls["n"] += 1
            if calls["n"] > 2:
                raise RuntimeError("the server broke")
            return bargainer_reply(body)

        server.reply = reply
        out = cli(SIM, tmp_path)
    assert out.returncode == 3, out.stderr  # LLMError: the model kept failing
    line = one_line(out.stderr)
    assert "act 1 (statement)" in line, line
    run = only_run(tmp_path / "runs")
    log = run.events()[-1]["data"]["log"]
    assert [step["who"] for step in log if step["kind"] == "statement"] == ["Seller", "Buyer"]
    assert "I can let it go for" in (run.path / "transcript.html").read_text()


def test_discover_mac_with_an_echoing_model_ends_degraded(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        use_server(tmp_path, server.base_url)
        out = cli(
            [
                "discover",
                "--dataset",
                "auto_mpg",
                "--method",
                "mac_meta_debate",
                "--model",
                "openai:fake",
                "--json",
            ],
            tmp_path,
        )
    assert out.returncode == 3, out.stderr
    line = one_line(out.stderr)
    assert line.startswith("DEGRADED: 20 of 20 units failed every step"), line
    assert "sample reply 'echo: " in line
    summary = strict_json(out.stdout)
    assert summary["status"] == "degraded"
    assert summary["health"]["totals"]["parse_failures"] >= 20
    run = only_run(tmp_path / "runs")
    assert run.status == "degraded"
    assert record(run)["health"]["degraded"] is True
