"""Untrusted text (agent statements, LLM explanations, variable names, survey answers) is
shown as text and never runs: in the HTML and in a real browser."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from silicolab.report.html import write_report
from silicolab.runs import Run
from tests.report.browser import screenshot, visit

PAYLOADS = (
    "<script>window.__xss = 1; alert('xss')</script>",
    '"><img src=x onerror="window.__xss = 2; alert(2)">',
    '\'><svg onload="window.__xss = 3"></svg>',
    "</textarea></pre><script>window.__xss = 4</script>",
)
HOSTILE = " ".join(PAYLOADS)


def _sim_run(root: Path) -> Path:
    run = Run.create(root, kind="sim", slug="xss")
    step = {"step": 0, "who": HOSTILE, "kind": "statement", "output": HOSTILE,
            "context": {HOSTILE: HOSTILE, "nested": HOSTILE}, "event": HOSTILE}  # fmt: skip
    run.write_record(
        {
            "kind": "sim",
            "example": HOSTILE,
            "transcript": [{"speaker": HOSTILE, "text": HOSTILE}],
            "survey": [
                {
                    "addressee": "a",
                    "question": HOSTILE,
                    "raw": HOSTILE,
                    "value": 1,
                    "explanation": HOSTILE,
                }
            ],
            "grounded_history": [[0, f"money:{HOSTILE}", 1.0, 2.0, HOSTILE]],
            "log": [step],
        }
    )
    run.finish()
    return run.path


def _study_run(root: Path) -> Path:
    run = Run.create(root, kind="study", slug="xss")
    variables = [
        {"name": HOSTILE, "role": "cause", "operationalization": HOSTILE, "values": [HOSTILE]},
        {"name": "y", "role": "outcome", "causes": [HOSTILE], "description": HOSTILE},
    ]
    run.write_record(
        {
            "study": HOSTILE,
            "scenario": HOSTILE,
            "hypothesis": {"name": HOSTILE, "scenario": HOSTILE, "variables": variables},
            "decisions": [{"step": HOSTILE, "value": HOSTILE, "explanation": HOSTILE}],
            "runs": [
                {
                    "condition_id": "c-1",
                    "index": 0,
                    "treatments": {HOSTILE: HOSTILE},
                    "statements": [{"speaker": HOSTILE, "text": HOSTILE}],
                    "survey": [{"raw": HOSTILE, "explanation": HOSTILE}],
                }
            ],
            "fit_error": HOSTILE,
        }
    )
    run.finish()
    return run.path


@pytest.fixture(scope="module")
def hostile_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("xss")
    runs = {"sim": _sim_run(root), "study": _study_run(root)}
    for path in runs.values():
        write_report(path)
    return runs


@pytest.mark.parametrize("kind", ["sim", "study"])
def test_untrusted_text_is_escaped_in_the_html(hostile_runs: dict[str, Path], kind: str) -> None:
    html = (hostile_runs[kind] / "report.html").read_text()
    for payload in PAYLOADS:
        assert payload not in html  # never verbatim
    assert "&lt;script&gt;window.__xss = 1" in html
    assert html.count("<script>") == 1  # the page's own script only
    # the only images are the page's own figures; no tag came from a record
    assert all(
        tag.startswith('<img src="data:image/svg+xml;base64,')
        for tag in re.findall(r"<img[^>]*>", html)
    )
    assert "<svg" not in html and "<textarea" not in html


@pytest.mark.parametrize("kind", ["sim", "study"])
def test_untrusted_text_never_runs_in_the_browser(
    browser: Any, hostile_runs: dict[str, Path], kind: str
) -> None:
    url = (hostile_runs[kind] / "report.html").resolve().as_uri()
    with visit(browser, url) as seen:
        page = seen.page
        for details in page.locator("details").all():  # open every fold: all text rendered
            page.evaluate("d => d.open = true", details.element_handle())
        page.wait_for_timeout(200)
        assert page.evaluate("typeof window.__xss") == "undefined"
        assert seen.dialogs == [] and seen.page_errors == []
        assert seen.network == []
        assert page.get_by_text("<script>window.__xss = 1", exact=False).first.is_visible()
        screenshot(seen, f"xss_{kind}")
