"""The rule-based English auction reproduces what auction theory implies, in every cell."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from silicolab.sim.examples.english_auction import make_game_master, run_english_auction
from silicolab.sim.game_master import Attempt

GRID = [50.0, 100.0, 150.0, 200.0, 250.0, 300.0, 350.0]
CELLS = list(itertools.product(GRID, repeat=3))


def theory_price(budgets: tuple[float, ...], delta: float, start: float, rule: str) -> float:
    """Second-highest budget on the clock grid (independent of the simulation code)."""
    b1, b2 = sorted(budgets, reverse=True)[:2]
    if b2 < start:
        return start
    last = start + math.floor((b2 - start) / delta) * delta  # last clock price <= b2
    if rule == "second_dropout":
        return last
    return last + delta if last + delta <= b1 else last


def winner_of(budgets: tuple[float, ...]) -> str:
    top = max(budgets)
    return f"Bidder {budgets.index(top) + 1}"  # ties: first in initiative order


def ols(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    design = np.column_stack([np.ones(len(x)), x])
    beta, *_ = np.linalg.lstsq(design, y, rcond=None)
    resid = y - design @ beta
    return beta, 1.0 - resid @ resid / ((y - y.mean()) @ (y - y.mean()))


def test_all_343_cells_clear_at_the_second_highest_budget() -> None:
    assert len(CELLS) == 343
    prices = []
    for budgets in CELLS:
        result = run_english_auction(budgets, increment=50, start_price=50)
        second = sorted(budgets)[-2]
        assert result.price == second, budgets  # Δ divides the grid: exactly b(2)
        assert abs(result.price - second) <= 50
        assert result.winner == winner_of(budgets), budgets
        prices.append(result.price)
    # The SCM price ~ budget_1 + budget_2 + budget_3 fitted to simulated and theory prices.
    x = np.array(CELLS)
    theory = np.array([theory_price(c, 50, 50, "second_dropout") for c in CELLS])
    beta_sim, r2_sim = ols(x, np.array(prices))
    beta_th, r2_th = ols(x, theory)
    assert np.allclose(beta_sim, beta_th, atol=1e-9, rtol=0)
    assert abs(r2_sim - r2_th) < 1e-9
    assert float(np.mean((np.array(prices) - theory) ** 2)) == 0.0


@pytest.mark.parametrize("rule", ["second_dropout", "next_increment"])
@pytest.mark.parametrize("delta", [50.0, 30.0, 20.0])
def test_price_rules_and_increments_match_theory(rule: str, delta: float) -> None:
    for budgets in CELLS[::3] if delta < 50 else CELLS:
        result = run_english_auction(budgets, increment=delta, start_price=50, price_rule=rule)
        assert result.price == theory_price(budgets, delta, 50, rule), (budgets, rule)
        assert abs(result.price - sorted(budgets)[-2]) <= delta
        assert result.price <= max(budgets)
        assert result.winner == winner_of(budgets)


def test_start_price_above_every_budget_means_no_sale() -> None:
    result = run_english_auction([40, 30], increment=10, start_price=50)
    assert result.winner is None and result.price is None
    assert result.events[-1] == "The auction closes without a sale."


def test_second_budget_below_start_price_sells_at_start() -> None:
    result = run_english_auction([200, 20, 10], increment=50, start_price=100)
    assert (result.winner, result.price) == ("Bidder 1", 100.0)


def test_grounded_variables_and_impossible_actions_are_rejected() -> None:
    gm = make_game_master(["A", "B"], increment=10, start_price=50)
    gm.begin([], seed=0)
    assert gm.state.text().startswith("price (current clock price): 50")
    close = gm.resolve(Attempt("Auctioneer", "close"))
    assert close.rejected and "two or more bidders" in close.event
    gm.resolve(Attempt("A", "drop"))
    again = gm.resolve(Attempt("A", "stay"))
    assert again.rejected and "already dropped out" in again.event
    raise_ = gm.resolve(Attempt("Auctioneer", "raise"))
    assert raise_.rejected and gm.state["price"] == 50.0
    assert gm.resolve(Attempt("Auctioneer", "close")).terminate
    assert (gm.state["winner"], gm.state["sale_price"]) == ("B", 50.0)


def test_transcript_is_logged() -> None:
    result = run_english_auction([100, 200], increment=50, start_price=50)
    kinds = {s.kind for s in result.log.steps}
    assert {"action", "observation"} <= kinds
    assert "Bidder 2 wins the item at 100." in result.events
    assert "wins the item" in result.log.to_html("auction")
