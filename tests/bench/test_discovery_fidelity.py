"""``bench discovery`` passes the faithful/fixed switch to MAC's debaters (issue 25): the
library's ``fidelity=`` and the CLI's ``--fidelity`` reach every method with debaters, the
rows and the run's settings record it, and the default stays the paper's debaters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli.test_cli import run
from tests.discovery.mac_fakes import Oracle
from tests.support.cli import strict_json

from silicolab.bench.discovery import DiscoveryBench, run_discovery_bench
from silicolab.core.errors import InputError
from silicolab.discovery import load
from silicolab.llm import load_model

DISAGREE = "always disagree with their view"  # the paper's instruction to both debaters


def _debater_systems(oracle: Oracle) -> list[str]:
    return [m[0]["content"] for role, m in oracle.seen if role in ("affirmative", "negative")]


def _bench(fidelity: str | None) -> tuple[object, Oracle]:
    auto = load("auto_mpg")
    oracle = Oracle(auto.truth.edges)
    model = load_model("scripted", fn=oracle.scripted)
    options = {} if fidelity is None else {"fidelity": fidelity}
    table = run_discovery_bench(
        ["mac_meta_debate", "mac_single_agent"], ["auto_mpg"], model=model, **options
    )
    return table, oracle


def test_fixed_fidelity_reaches_the_meta_debaters_and_the_row_records_it() -> None:
    # before: run_discovery_bench had no fidelity, the debaters always got the paper's text
    table, oracle = _bench("fixed")
    rows = {r["method"]: r for r in table.to_dict("records")}
    assert rows["mac_meta_debate"]["fidelity"] == "fixed"
    assert rows["mac_single_agent"].get("fidelity") != "fixed"  # no debaters, no switch
    systems = _debater_systems(oracle)
    assert systems and not any(DISAGREE in s for s in systems)
    assert any("you speak first" in s for s in systems)


def test_the_default_is_the_papers_debaters() -> None:
    table, oracle = _bench(None)
    assert table.to_dict("records")[0]["fidelity"] == "faithful"
    assert all(DISAGREE in s for s in _debater_systems(oracle))


def test_bad_fidelity_settings_are_refused() -> None:
    with pytest.raises(InputError, match="fidelity must be one of"):
        DiscoveryBench.build(["mac_meta_debate"], fidelity="exact")
    with pytest.raises(InputError, match="give it once as fidelity=") as caught:
        DiscoveryBench.build(
            ["mac_meta_debate"], method_params={"mac_meta_debate": {"fidelity": "fixed"}}
        )
    assert "method_params" in caught.value.params


def test_cli_fidelity_is_stored_in_the_run_settings(llm_server_factory, tmp_path: Path) -> None:
    oracle = Oracle(load("auto_mpg").truth.edges)
    server = llm_server_factory(reply=oracle.http)
    args = ["bench", "discovery", "--methods", "mac_meta_debate", "--datasets", "auto_mpg"]
    args += ["--model", "openai:oracle", "--base-url", server.base_url, "--fidelity", "fixed"]
    out = run([*args, "--json"], tmp_path)
    assert out.returncode == 0, out.stderr
    summary = strict_json(out.stdout)
    (row,) = summary["rows"]
    assert row["fidelity"] == "fixed" and row["shd"] == 0
    stored = json.loads((tmp_path / summary["run_dir"] / "run.json").read_text())
    assert stored["config"]["fidelity"] == "fixed"
    assert not any(DISAGREE in s for s in _debater_systems(oracle))
    bad = run([*args[:-1], "exact"], tmp_path)
    assert bad.returncode == 2 and "fidelity must be one of" in bad.stderr
