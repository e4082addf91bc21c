"""Worked simulations: bargaining, market, the registry and the ``sim run`` backend."""

from __future__ import annotations

import json

import pytest

from silicolab.core.errors import InputError
from silicolab.sim.examples.bargaining import run_bargaining
from silicolab.sim.examples.market import BUYERS, SELLERS, make_game_master, run_market
from silicolab.sim.examples.registry import EXAMPLES
from silicolab.sim.game_master import Attempt
from tests.support.cli import strict_json


@pytest.mark.parametrize("protocol", ["ordered", "random", "coordinator_after"])
@pytest.mark.parametrize(("v_s", "v_b"), [(4.0, 10.0), (30.0, 45.0), (9.5, 10.0)])
def test_bargaining_deal_within_values(protocol: str, v_s: float, v_b: float) -> None:
    result = run_bargaining(seller_value=v_s, buyer_value=v_b, protocol=protocol, seed=1)
    assert result.deal is True
    assert result.price is not None and v_s <= result.price <= v_b
    assert result.transcript[-1]["text"] == f"Deal at ${result.price:.2f}."
    values = {(a.addressee, a.variable): a.value for a in result.survey}
    assert values[("Seller", "deal")] == values[("Buyer", "deal")] == 1
    assert values[("Seller", "price")] == values[("Buyer", "price")] == result.price
    assert len(result.transcript) <= 12


@pytest.mark.parametrize(("v_s", "v_b"), [(12.0, 10.0), (10.0, 9.99)])
def test_bargaining_no_deal_when_values_do_not_overlap(v_s: float, v_b: float) -> None:
    result = run_bargaining(seller_value=v_s, buyer_value=v_b)
    assert result.deal is False and result.price is None
    assert len(result.transcript) == 12
    assert result.transcript[-1]["text"].startswith("No deal")
    assert [a.value for a in result.survey] == [0, None, 0, None]
    assert any(s.kind == "survey" for s in result.log.steps)


def test_bargaining_rejects_unknown_protocol() -> None:
    with pytest.raises(InputError, match="unknown protocol"):
        run_bargaining(protocol="shouting")


def test_market_conserves_money_and_goods() -> None:
    result = run_market(rounds=5)
    state = result.final_state
    money = sum(v for k, v in state.items() if k.startswith("money:"))
    goods = sum(v for k, v in state.items() if k.startswith("goods:"))
    assert money == pytest.approx(sum(m for _, m, _ in BUYERS.values()))
    assert goods == sum(g for _, g in SELLERS.values())
    assert all(v >= 0 for k, v in state.items() if k.startswith(("money:", "goods:")))
    assert result.trades and all(t["price"] > 0 for t in result.trades)
    for name, (_, _, wants) in BUYERS.items():
        assert state[f"goods:{name}"] == sum(t["buyer"] == name for t in result.trades) <= wants
    reasons = " ".join(r["reason"] for r in result.rejected)
    assert "B2's money cannot go below 0" in reasons
    assert "goods cannot go below 0" in reasons
    assert json.loads(json.dumps(result.to_dict()))["trades"] == result.trades


def test_market_impossible_trade_is_rejected_and_changes_nothing() -> None:
    gm = make_game_master({"B": 5.0}, {"S": 1})
    gm.begin([])
    before = gm.state.snapshot()
    assert not gm.resolve(Attempt("S", "post(price=8.0)")).rejected
    poor = gm.resolve(Attempt("B", "trade(counterparty='S', item='widget', price=8.0)"))
    assert poor.rejected and "B's money cannot go below 0" in poor.event
    assert gm.resolve(Attempt("S", "post(price=4.0)")).event == "S asks 4.00 per widget."
    assert not gm.resolve(Attempt("B", "trade(counterparty='S', item='widget', price=4)")).rejected
    assert gm.resolve(Attempt("S", "post(price=1.0)")).event == "S asks 1.00 per widget."
    empty = gm.resolve(Attempt("B", "trade(counterparty='S', item='widget', price=1)"))
    assert empty.rejected and "S's goods cannot go below 0" in empty.event
    assert gm.state["money:B"] == 1.0 and gm.state["goods:S"] == 0 and gm.state["goods:B"] == 1
    assert gm.state["money:B"] + gm.state["money:S"] == before["money:B"] + before["money:S"]


def test_registry_lists_three_json_ready_examples() -> None:
    assert sorted(EXAMPLES) == ["auction", "bargaining", "market"]
    for name, runner in EXAMPLES.items():
        summary = runner(None, 0)
        assert summary["example"] == name and isinstance(summary["log"], list)
        json.dumps(summary)


def test_run_sim_writes_run_directory(tmp_path, capsys) -> None:
    from pathlib import Path

    from silicolab.cli.sim._run import run_sim

    out = run_sim(
        "bargaining",
        model=None,
        base_url=None,
        api_key_env=None,
        seed=0,
        runs_dir=tmp_path,
        config=None,
        json_out=True,
    )
    run_dir = Path(out["run_dir"])
    assert run_dir.parent == tmp_path and out["deal"] is True
    printed = strict_json(capsys.readouterr().out)
    assert printed["run_dir"] == out["run_dir"]
    record = json.loads((run_dir / "record.json").read_text(encoding="utf-8"))
    assert record["example"] == "bargaining" and record["log"]
    assert "Deal at $" in (run_dir / "report.md").read_text(encoding="utf-8")
    page = (run_dir / "transcript.html").read_text(encoding="utf-8")
    assert "<script" not in page and "Deal at $" in page


def test_run_sim_escapes_html_and_rejects_unknown_names(tmp_path) -> None:
    from pathlib import Path

    from silicolab.cli.sim._run import run_sim

    options = dict(model=None, base_url=None, api_key_env=None, seed=0, runs_dir=tmp_path)
    with pytest.raises(InputError, match="unknown simulation 'nope'") as err:
        run_sim("nope", config=None, json_out=True, **options)  # type: ignore[arg-type]
    assert all(name in str(err.value) for name in ("election", "public_goods", "phone"))
    out = run_sim("market", config=None, json_out=False, **options)  # type: ignore[arg-type]
    page = (Path(out["run_dir"]) / "transcript.html").read_text(encoding="utf-8")
    assert "trade(counterparty=&#x27;S1&#x27;" in page
    assert "counterparty='S1'" not in page
