"""A simulation with a nested game: the parent step links to the sub-game and back, in the
page's blocks and in the browser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from silicolab.report.html import write_report
from silicolab.report.html.blocks import Fold, Link
from silicolab.report.html.build import build_page
from silicolab.runs import Run
from tests.report.browser import visit
from tests.sim.test_nested import day


@pytest.fixture(scope="module")
def nested_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A market day in which alice bargains with bob in a nested game."""
    # called directly even while the sync Playwright session keeps an event loop running in
    # this thread: a synchronous silicolab call works inside a running loop
    gm, steps = day({"alice": 100.0, "bob": 10.0})
    run = Run.create(tmp_path_factory.mktemp("nested"), kind="sim", slug="market-day")
    run.write_record(
        {
            "kind": "sim",
            "example": "market day",
            "events": list(gm.events),
            "grounded_history": gm.state.state_dict()["history"],
            "log": [s.to_dict() for s in steps],
        }
    )
    run.finish()
    write_report(run.path)
    return run.path


def test_the_parent_step_and_the_nested_game_link_each_other(nested_run: Path) -> None:
    page = build_page(nested_run, save_figures=False)
    (section,) = [s for s in page.sections if s.anchor == "nested"]
    (game,) = section.blocks
    assert isinstance(game, Fold) and game.anchor == "nested-0"
    back = next(b for b in game.blocks if isinstance(b, Link))
    parent = back.href.removeprefix("#")
    (steps,) = next(s for s in page.sections if s.anchor == "log").blocks
    step = next(i for i in steps.items if i.anchor == parent)
    assert any(isinstance(b, Link) and b.href == "#nested-0" for b in step.blocks)
    inner = [b for b in game.blocks if isinstance(b, Fold)]
    assert inner and inner[0].anchor.startswith("nested-0-step-")
    assert any("agree on a price" in b.text for b in game.blocks if b.kind == "code")
    grounded = next(s for s in page.sections if s.anchor == "grounded")
    assert any(b.kind == "figure" for b in grounded.blocks)  # money and goods over steps


def test_following_the_link_opens_the_nested_game(browser: Any, nested_run: Path) -> None:
    with visit(browser, (nested_run / "report.html").resolve().as_uri()) as seen:
        page = seen.page
        game = page.locator("#nested-0")
        assert game.get_attribute("open") is None
        parent = page.locator("#log details:has(a[href='#nested-0'])")
        parent.locator("> summary").click()
        parent.locator("a[href='#nested-0']").click()
        page.wait_for_function("document.getElementById('nested-0').open")
        assert game.locator("details").first.is_visible()
        assert seen.console_errors == [] and seen.network == []
