"""``sl.run_bench``: the Python front door of ``silicolab bench``, checked against the
command (a real subprocess) and against the run's own events."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import typer

import silicolab as sl
from silicolab.core.errors import InputError
from tests.cli.test_cli import run
from tests.support.cli import strict_json

TIMING = ("runtime_s",)  # wall-clock columns: the only ones two runs may differ in


def _numbers(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in row.items() if k not in TIMING} for row in rows]


def _settings(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())["config"]


def test_run_bench_in_a_running_loop_gives_the_commands_numbers(tmp_path: Path) -> None:
    args = ["bench", "causalab", "--suite", "3nodes", "--episodes", "3", "--jobs", "1"]
    out = run([*args, "--runs-dir", "cli", "--json"], tmp_path)
    assert out.returncode == 0, out.stderr
    summary = strict_json(out.stdout)

    async def cell() -> sl.BenchResult:  # a notebook cell: an event loop is running
        return sl.run_bench("causalab", suites="3nodes", episodes=3, runs_dir=tmp_path / "py")

    result = asyncio.run(cell())
    assert result.status == summary["status"] == "finished"
    assert _numbers(result.rows) == _numbers(summary["rows"])
    assert _numbers(result.table.to_dict("records"))[0]["accuracy"] == 100.0
    cli_dir = Path(summary["run_dir"])
    assert _settings(result.run_dir) == _settings(cli_dir)  # the same stored experiment
    for run_dir in (cli_dir, result.run_dir):
        assert (run_dir / "report.html").is_file() and (run_dir / "record.json").is_file()
    # accuracy and SHD from the run's own events, independently of the bench's table
    events = [json.loads(x) for x in (result.run_dir / "events.jsonl").read_text().splitlines()]
    scores = [e["data"]["episode"]["scores"] for e in events]
    assert len(scores) == 3
    (row,) = result.rows
    assert row["accuracy"] == pytest.approx(100 * sum(s["success"] for s in scores) / 3)
    assert row["shd"] == pytest.approx(sum(s["shd"] for s in scores) / 3)
    assert list(result.anchors.columns[:2]) == ["suite", "published_model"]
    assert result.anchors["published_accuracy"].tolist() == [row["published_accuracy"]]


def test_a_bench_result_reads_back_and_shows_itself(tmp_path: Path) -> None:
    result = sl.run_bench("episodes", envs=["causalab"], seeds=2, runs_dir=tmp_path)
    again = sl.BenchResult.from_run(result.run_dir)
    assert again.family == "episodes" and again.status == result.status == "finished"
    assert _numbers(again.table.to_dict("records")) == _numbers(result.rows)
    assert again.to_dict()["rows"] == result.to_dict()["rows"]
    json.dumps(result.to_dict(), allow_nan=False)  # JSON-safe
    text = repr(result)
    assert len(text) < 300 and text.startswith("BenchResult(family='episodes'")
    page = result._repr_html_()
    assert "<table" in page and "score_success" in page and "causalab" in page
    figure = sorted((result.run_dir / "figures").glob("*.png"))
    assert figure and "data:image/png;base64," in page  # the run's figure, inline


def test_resume_true_on_a_finished_run_returns_it_as_it_is(tmp_path: Path) -> None:
    first = sl.run_bench("episodes", seeds=1, runs_dir=tmp_path)
    again = sl.run_bench("episodes", resume=True, runs_dir=tmp_path)
    assert again.reopened and again.run_dir == first.run_dir and again.rows == first.rows
    assert len(list(tmp_path.iterdir())) == 1
    with pytest.raises(InputError, match=r"seeds=2 \(stored: 1\)") as err:
        sl.run_bench("episodes", seeds=2, resume=True, runs_dir=tmp_path)
    assert "without resume=" in str(err.value) and "--" not in str(err.value)


def test_python_errors_name_python_parameters(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="family='quidditch': use one of causalab") as err:
        sl.run_bench("quidditch", runs_dir=tmp_path)
    assert err.value.params == ("family",)
    cases = [
        ({"family": "causalab", "suites": "9nodes"}, "suites='9nodes': unknown suite", "suites"),
        ({"family": "causalab", "scientist": "llm"}, "scientist=llm needs model=", "scientist"),
        ({"family": "causalab", "verify": "sometimes"}, "verify='sometimes'", "verify"),
        ({"family": "boxinggym", "goals": ["dugongs", "oops"]}, "goals='dugongs,oops'", "goals"),
        ({"family": "discovery", "episodes": 3}, "takes no episodes=", "episodes"),
        ({"family": "discovery", "datasets": ["sachs", "x"]}, "datasets='sachs,x'", "datasets"),
        ({"family": "episodes", "executor": "cloud"}, "executor='cloud': use one of", "executor"),
        ({"family": "causalab", "jobs": 100_000}, "jobs=100000 is above its bound", "jobs"),
    ]
    for options, fragment, param in cases:
        family = options.pop("family")
        with pytest.raises(InputError) as err:
            sl.run_bench(family, runs_dir=tmp_path, **options)
        assert fragment in str(err.value) and param in err.value.params, str(err.value)
        assert "--" not in str(err.value)
    assert not any(tmp_path.iterdir())  # refused before any run directory


def test_a_large_run_asks_confirm_and_stops_on_no(tmp_path: Path) -> None:
    asked = []

    def confirm(units: int, plan: str) -> bool:
        asked.append((units, plan))
        return False

    with pytest.raises(InputError, match="cancelled; nothing was run"):
        sl.run_bench("episodes", seeds=2000, runs_dir=tmp_path, confirm=confirm)
    assert asked == [(2000, "1 environment x 2,000 seeds = 2,000 episodes")]
    assert not any(tmp_path.iterdir())


def test_a_degraded_run_is_returned_not_raised(tmp_path: Path) -> None:
    result = sl.run_bench(
        "causalab", scientist="llm", model="scripted", suites="3nodes", episodes=1,
        runs_dir=tmp_path,
    )  # fmt: skip
    assert result.status == "degraded" and result.health.degraded
    assert result.to_dict()["health"]["totals"]["failed_units"] == 1
    assert json.loads((result.run_dir / "run.json").read_text())["status"] == "degraded"


def test_the_commands_defaults_are_the_facades() -> None:
    from silicolab.api.bench import family_spec
    from silicolab.cli.bench._app import bench_app

    group = typer.main.get_command(bench_app)
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        defaults = family_spec(name).defaults
        declared = {p.name: p.default for p in command.params if p.name in defaults}
        assert declared == dict(defaults), name
