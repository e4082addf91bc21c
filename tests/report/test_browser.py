"""The reports in a real browser (headless Chromium from ``file://``): key elements
visible, every figure decoded, no console error, no network request, search and folding
work, untrusted text never runs. Screenshots: ``build/screenshots/``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.report.browser import screenshot, visit

#: run -> elements that must be visible on its page.
EXPECTED: dict[str, list[str]] = {
    "study": ["#hypothesis figure img", "#conditions input.search", "#fit table",
              "#predictions figure img", "#follow-on figure img", "#cost table"],
    "sim_bargaining": ["#outcome ol.chat", "#log input.search"],
    "sim_market": ["#grounded figure img", "#log details"],
    "discover": ["#graphs figure img", "#graphs table", "#scores dl"],
    "debate": ["#debates details"],
    "causalab": ["#results td.anchor", "#metrics figure img", "#trajectories details"],
    "boxinggym": ["#results td.anchor", "#budgets figure img", "#episodes details"],
    "bench_discovery": ["#results td.anchor", "#results figure img"],
    "episodes": ["#results table", "#results figure img"],
    "causalab_llm": ["#results table", "#trajectories details"],
}  # fmt: skip


def _url(run_dir: Path, fragment: str = "") -> str:
    return (run_dir / "report.html").resolve().as_uri() + fragment


def _clean(seen: Any) -> None:
    assert seen.console_errors == [] and seen.page_errors == []
    assert seen.network == [], seen.network
    assert seen.dialogs == []


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_page_in_the_browser(browser: Any, run_dirs: dict[str, Path], name: str) -> None:
    with visit(browser, _url(run_dirs[name])) as seen:
        page = seen.page
        assert page.locator("h1#title").is_visible()
        for selector in EXPECTED[name]:
            assert page.locator(selector).first.is_visible(), selector
        broken = page.evaluate(
            "Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).length"
        )
        assert broken == 0
        folds = page.locator("main details")
        if folds.count():  # a fold opens on a click
            was_open = folds.first.get_attribute("open") is not None
            folds.first.locator("> summary").click()
            assert (folds.first.get_attribute("open") is not None) != was_open
        screenshot(seen, name)
        _clean(seen)


def test_search_hides_conditions_that_do_not_match(browser: Any, run_dirs: dict[str, Path]) -> None:
    record = json.loads((run_dirs["study"] / "record.json").read_text())
    value = str(record["runs"][0]["treatments"]["buyer_budget"])
    expected = sum(value in json.dumps(r["treatments"]) for r in record["runs"])
    with visit(browser, _url(run_dirs["study"])) as seen:
        page = seen.page
        count = page.locator("#conditions .count")
        assert count.inner_text() == f"8 of {len(record['runs'])}"
        page.locator("#conditions input.search").fill(f"buyer_budget: {value};")
        shown = page.locator("#conditions .items > details:not(.hidden)")
        assert 1 <= shown.count() == expected < len(record["runs"])
        assert count.inner_text() == f"{expected} of {len(record['runs'])}"
        page.locator("#conditions input.search").fill("no such words anywhere")
        assert shown.count() == 0
        _clean(seen)


def test_a_link_to_a_condition_opens_it(browser: Any, run_dirs: dict[str, Path]) -> None:
    record = json.loads((run_dirs["study"] / "record.json").read_text())
    target = f"condition-{record['runs'][3]['condition_id']}"
    with visit(browser, _url(run_dirs["study"], f"#{target}")) as seen:
        details = seen.page.locator(f"#{target}")
        assert details.get_attribute("open") is not None
        assert details.locator("ol.chat").is_visible()
        _clean(seen)


def test_a_missing_browser_skips_locally_and_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.report.browser import skip_or_fail

    monkeypatch.delenv("SILICOLAB_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no Chromium"):
        skip_or_fail("no Chromium found")
    monkeypatch.setenv("SILICOLAB_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="SILICOLAB_REQUIRE_BROWSER=1 but no Chromium"):
        skip_or_fail("no Chromium found")
