"""Strict JSON: :func:`silicolab.core.files.finite` / :func:`dumps` turn every value JSON
cannot carry into ``null``, the checker of ``tests/support/cli.py`` finds a planted
``NaN``/``±Infinity`` and names it, and the conftest hooks fail a pytest run that writes one
(run in a child pytest on a planted test)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from silicolab.core.files import append_jsonl, atomic_write_json, dumps, finite
from tests.support.cli import NonStrictJSONError, cli_env, json_problems, strict_json

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, np.float64("nan")])
def test_finite_turns_non_finite_floats_into_none(value: float) -> None:
    assert finite(value) is None


def test_finite_numpy_scalars_and_arrays() -> None:
    out = finite(
        {
            "f32": np.float32(1.5),
            "f32_nan": np.float32("nan"),
            "f64_inf": np.float64("-inf"),
            "int": np.int64(7),
            "bool": np.bool_(True),
            "array": np.array([1.0, np.nan, np.inf]),
            "matrix": np.array([[np.nan, 2.0], [3.0, -np.inf]]),
        }
    )
    assert out == {
        "f32": 1.5,
        "f32_nan": None,
        "f64_inf": None,
        "int": 7,
        "bool": True,
        "array": [1.0, None, None],
        "matrix": [[None, 2.0], [3.0, None]],
    }
    # Python types, not NumPy's: what the json module writes without a default
    assert [type(out[k]) for k in ("f32", "int", "bool")] == [float, int, bool]
    assert type(out["array"][0]) is float


def test_finite_pandas_missing_values_and_records() -> None:
    frame = pd.DataFrame(
        {
            "x": [1.0, np.nan],
            "n": pd.array([1, pd.NA], dtype="Int64"),
            "t": [pd.Timestamp("2024-01-01"), pd.NaT],
        }
    )
    records = finite(frame.to_dict("records"))
    assert records[1]["x"] is None and records[1]["n"] is None and records[1]["t"] is None
    assert finite(pd.NA) is None and finite(pd.NaT) is None
    assert records[0]["x"] == 1.0 and records[0]["n"] == 1
    # the Timestamp is left to dumps' default (its text), the missing ones become null
    back = strict_json(dumps(records))
    assert back[0]["t"].startswith("2024-01-01") and back[1] == {"x": None, "n": None, "t": None}


def test_finite_nested_and_keys() -> None:
    nested = {"a": [1, (2.0, math.nan)], "b": {"c": {"d": -math.inf, "e": "NaN"}}}
    assert finite(nested) == {"a": [1, [2.0, None]], "b": {"c": {"d": None, "e": "NaN"}}}
    assert finite({np.int64(3): 1.0}) == {3: 1.0}
    assert type(next(iter(finite({np.int64(3): 1.0})))) is int


def test_dumps_is_strict_and_keeps_json_options() -> None:
    record = {"r2": -math.inf, "p": [0.5, math.nan], "name": "deal", "est": np.float64(1e-16)}
    text = dumps(record, indent=2, sort_keys=True)
    assert "Infinity" not in text and "NaN" not in text
    assert strict_json(text) == {"est": 1e-16, "name": "deal", "p": [0.5, None], "r2": None}
    assert text.startswith('{\n  "est"')  # indent and sort_keys were passed on
    # json.dumps itself would have written the non-strict tokens
    assert "-Infinity" in json.dumps(record, default=str)


def test_file_writers_are_strict(tmp_path: Path) -> None:
    atomic_write_json(tmp_path / "a.json", {"r2": -math.inf, "x": np.array([np.nan])})
    append_jsonl(tmp_path / "e.jsonl", {"v": math.nan})
    assert strict_json((tmp_path / "a.json").read_text()) == {"r2": None, "x": [None]}
    assert strict_json((tmp_path / "e.jsonl").read_text()) == {"v": None}
    assert json_problems(tmp_path) == []


def test_strict_json_names_the_token_and_where() -> None:
    text = '{"study": "mug",\n "r2": -Infinity, "note": "NaN in a string is text"}'
    with pytest.raises(NonStrictJSONError) as caught:
        strict_json(text, source="study run --json")
    assert caught.value.token == "-Infinity"
    assert caught.value.where.startswith("line 2, column 8")
    assert "study run --json is not strict JSON: -Infinity" in str(caught.value)
    assert strict_json('{"note": "NaN and -Infinity inside strings are fine"}')["note"]


@pytest.mark.nonstrict_json
def test_checker_finds_planted_files(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "x-study-mug"
    run.mkdir(parents=True)
    (run / "record.json").write_text(json.dumps({"estimation": {"r2": -math.inf}}))
    (run / "events.jsonl").write_text('{"ok": 1}\n{"unit": "c1", "value": NaN}\n{"torn": ')
    (run / "broken.json").write_text("not json at all")  # a test's deliberately bad file
    (run / "fine.json").write_text('{"text": "-Infinity"}')
    problems = json_problems(tmp_path)
    assert len(problems) == 2
    events, record = problems  # sorted by path
    assert events.startswith(f"{run / 'events.jsonl'} line 2: NaN at column 25: ...")
    assert record.startswith(f"{run / 'record.json'}: -Infinity at line 1, column 23")
    assert json_problems(tmp_path, skip=[run]) == []


def _child_pytest(
    folder: Path, test_source: str, *options: str
) -> subprocess.CompletedProcess[str]:
    """Run ``test_source`` in a child pytest whose conftest loads this suite's hooks."""
    folder.mkdir()
    (folder / "conftest.py").write_text('pytest_plugins = ["tests.conftest"]\n')
    (folder / "test_planted.py").write_text(textwrap.dedent(test_source))
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:asyncio"]
    command += options
    command += [f"--basetemp={folder / 'tmp'}", f"--rootdir={folder}", str(folder)]
    env = cli_env({"PYTHONPATH": f"{REPO}"})
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.nonstrict_json
def test_hook_fails_the_test_that_wrote_the_file(tmp_path: Path) -> None:
    done = _child_pytest(
        tmp_path / "child",
        """
        def test_writes_infinity(tmp_path):
            (tmp_path / "record.json").write_text('{"r2": -Infinity}')

        def test_writes_strict(tmp_path):
            (tmp_path / "record.json").write_text('{"r2": null}')
        """,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2 passed, 1 error" in done.stdout  # the test passed, its teardown check failed
    assert "ERROR at teardown of test_writes_infinity" in done.stdout
    assert "record.json: -Infinity at line 1, column 8" in done.stdout


#: ``make test``'s way (two xdist workers, see ``tests/conftest.py``) and a serial run.
XDIST = pytest.param(("-n", "2", "--dist", "loadgroup"), id="xdist")


@pytest.mark.nonstrict_json
@pytest.mark.parametrize("options", [pytest.param((), id="serial"), XDIST])
def test_hook_checks_the_whole_base_temp_at_session_end(
    tmp_path: Path, options: tuple[str, ...]
) -> None:
    done = _child_pytest(
        tmp_path / "child",
        """
        import pytest

        @pytest.fixture(scope="module")
        def shared(tmp_path_factory):
            return tmp_path_factory.mktemp("shared")

        def test_writes_nan_outside_its_tmp_path(shared):
            (shared / "events.jsonl").write_text('{"a": 1}\\n{"b": NaN}\\n')

        @pytest.mark.nonstrict_json
        def test_exempt(tmp_path):
            (tmp_path / "planted.json").write_text("Infinity")
        """,
        *options,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2 passed" in done.stdout
    assert "strict JSON: files the suite wrote with NaN/Infinity" in done.stdout
    assert "events.jsonl line 2: NaN at column 7" in done.stdout
    assert "planted.json" not in done.stdout  # the marked test's folder is left out


@pytest.mark.parametrize("options", [pytest.param((), id="serial"), XDIST])
def test_hook_passes_a_clean_run(tmp_path: Path, options: tuple[str, ...]) -> None:
    done = _child_pytest(
        tmp_path / "child",
        """
        def test_clean(tmp_path):
            (tmp_path / "record.json").write_text('{"r2": null, "note": "NaN is text here"}')

        def test_clean_too(tmp_path):
            (tmp_path / "record.json").write_text('{"r2": 0.5}')
        """,
        *options,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "strict JSON" not in done.stdout


def test_bench_rows_are_strict_and_say_why_a_figure_is_null() -> None:
    from silicolab.cli.bench._run import table_rows

    table = pd.DataFrame(
        [
            {"method": "pc", "dataset": "a", "shd": 3, "f1": 0.5, "published_shd": np.nan,
             "error": ""},
            {"method": "pc", "dataset": "b", "shd": None, "f1": np.nan, "published_shd": 4.0,
             "error": "ValueError: singular matrix"},
            {"suite": "3nodes", "episodes": 0, "errors": 2, "accuracy": np.inf},
            {"suite": "4nodes", "episodes": 3, "errors": 0, "accuracy": -np.inf},
        ]
    )  # fmt: skip
    rows = table_rows(table)
    assert strict_json(dumps(rows)) == rows
    assert rows[0]["shd"] == 3 and rows[0]["published_shd"] is None
    assert (
        rows[0]["null_reasons"]["published_shd"]
        == "the published tables have no value for this row"
    )
    assert rows[1]["f1"] is None and rows[1]["shd"] is None
    assert rows[1]["null_reasons"]["f1"] == "the unit failed: ValueError: singular matrix"
    assert rows[2]["null_reasons"]["accuracy"] == "every unit of this row failed (2 errors)"
    assert rows[3]["null_reasons"]["accuracy"].startswith("no finite value to summarize")
    # the columns of other rows (NaN in a mixed table) are explained too, never left bare
    for row in rows:
        nulls = {k for k, v in row.items() if v is None and k != "error"}  # no error text
        assert nulls == set(row.get("null_reasons", {}))
