"""``silicolab view RUN_DIR`` as a user runs it, and the rule that drawing a page never
fails a run."""

from __future__ import annotations

import logging
import re
import subprocess
import urllib.request
from pathlib import Path

import pytest

from silicolab.cli.flow import write_html_report
from silicolab.report.html import write_report_safely
from silicolab.runs import Run
from tests.report.runs import EXE, cli, env
from tests.support.cli import strict_json


def test_view_rewrites_the_report_and_writes_elsewhere_with_out(
    run_dirs: dict[str, Path], tmp_path: Path
) -> None:
    run_dir = run_dirs["sim_bargaining"]
    (run_dir / "report.html").unlink()
    out = cli(["view", str(run_dir), "--json"], tmp_path)
    assert out.returncode == 0, out.stderr
    summary = strict_json(out.stdout)
    assert Path(summary["report"]) == run_dir / "report.html"
    assert (run_dir / "report.html").read_text().startswith("<!DOCTYPE html>")
    assert summary["uri"].startswith("file://")
    target = tmp_path / "paper" / "elsewhere.html"
    out = cli(["view", str(run_dirs["sim_market"]), "--out", str(target)], tmp_path)
    assert out.returncode == 0, out.stderr
    html = target.read_text()
    assert "Simulation: market" in html
    # the figure files' links still lead to the run directory
    (link,) = re.findall(r'href="([^"]*grounded\.png)"', html)
    assert (target.parent / link).resolve() == run_dirs["sim_market"] / "figures" / "grounded.png"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["view", "no/such/run"], "run directory no/such/run does not exist"),
        (["view", "."], "is not a run directory (it has no run.json)"),
        (["view"], "Missing argument"),
    ],
)
def test_view_bad_run_dir_is_one_line_and_exit_2(
    tmp_path: Path, args: list[str], fragment: str
) -> None:
    out = cli(args, tmp_path)
    assert out.returncode == 2
    assert fragment in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_view_serves_the_run_directory_on_localhost(
    run_dirs: dict[str, Path], tmp_path: Path
) -> None:
    run_dir = run_dirs["discover"]
    proc = subprocess.Popen(
        [*EXE, "view", str(run_dir), "--serve", "--port", "0", "--json"],
        cwd=tmp_path,
        env=env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = strict_json(proc.stdout.readline())["url"]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/report.html")
        with urllib.request.urlopen(url, timeout=10) as response:
            assert b"Causal discovery: pc on auto_mpg" in response.read()
        figure = url.rsplit("/", 1)[0] + "/figures/graphs.png"
        with urllib.request.urlopen(figure, timeout=10) as response:
            assert response.read()[:4] == b"\x89PNG"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert proc.returncode == 0  # SIGTERM stops the server: a plain stop
    assert proc.stderr.read().strip() == "stopped"


def _broken_run(root: Path) -> Run:
    run = Run.create(root, kind="study", slug="broken")
    run.write_record({"study": "broken", "runs": 5})  # not a list: the page cannot be drawn
    run.write_report("# broken\n")
    run.finish()
    return run


def test_a_page_that_cannot_be_drawn_never_fails_the_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _broken_run(tmp_path)
    with caplog.at_level(logging.WARNING):
        assert write_report_safely(run.path) is None
    assert "report.html of" in caplog.text and "TypeError" in caplog.text
    write_html_report(run)  # what every command calls when its run ends
    assert "warning: report.html of" in capsys.readouterr().err
    assert not (run.path / "report.html").exists()
    assert Run.open(run.path).status == "finished"
    assert (run.path / "report.md").read_text() == "# broken\n"
