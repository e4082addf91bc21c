"""Every plausible damaged or unusual file: one line on stderr naming the file and the fix,
exit 2, never a traceback; or, where silicolab repairs the damage (a damaged line of
``events.jsonl``, a damaged LLM cache, a run folder with a damaged ``run.json`` met while
looking for the run to resume), exactly one warning line and the command carries on.

Each case was a Python traceback with exit 1 before (issue 24). The runs are made once
per module by the CLI (``study run auction --subjects rule --conditions 8``: about 3 s)
and copied for each test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from silicolab.llm.cache import SQLiteCache
from silicolab.llm.types import Completion, Usage
from silicolab.runs import Run
from tests.reliability.support import cli, one_line, only_run
from tests.support.cli import EXE, cli_env, strict_json

STUDY = ["study", "run", "auction", "--subjects", "rule", "--conditions", "8", "-y"]


@pytest.fixture(scope="module")
def finished_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished study run (8 conditions, rule-based subjects) made by the CLI."""
    folder = tmp_path_factory.mktemp("study")
    out = cli([*STUDY, "--json"], folder)
    assert out.returncode == 0, out.stderr
    return only_run(folder / "runs").path


@pytest.fixture
def run_copy(finished_study: Path, tmp_path: Path) -> Path:
    """A copy of the finished study run under ``tmp_path/runs``, for one test to damage."""
    target = tmp_path / "runs" / finished_study.name
    shutil.copytree(finished_study, target)
    return target


def _error(out: subprocess.CompletedProcess[str], *fragments: str) -> str:
    """The one ``error:`` line of a refused command (exit 2, no traceback), holding every
    fragment."""
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    line = one_line(out.stderr)
    assert line.startswith("error: "), line
    for fragment in fragments:
        assert fragment in line, (fragment, line)
    return line


def _warnings(out: subprocess.CompletedProcess[str]) -> list[str]:
    """The ``warning:`` lines of a command that succeeded (exit 0, no traceback, no error)."""
    assert out.returncode == 0, (out.returncode, out.stdout, out.stderr)
    assert "Traceback" not in out.stderr and "error:" not in out.stderr, out.stderr
    return [line for line in out.stderr.splitlines() if line.startswith("warning: ")]


# -- 1. files that are not UTF-8 -------------------------------------------------------------


def test_a_hypothesis_file_that_is_not_utf8_is_one_line_exit_2(tmp_path: Path) -> None:
    assert cli(["study", "list-examples", "--write", "ex"], tmp_path).returncode == 0
    example = (tmp_path / "ex" / "auction.yaml").read_bytes()
    (tmp_path / "bad.yaml").write_bytes(b"\xff\xfe" + example)  # a UTF-16 byte-order mark
    hypothesis = ["study", "run", "--hypothesis", "bad.yaml", "--subjects", "rule", "-y"]
    _error(
        cli(hypothesis, tmp_path),
        "hypothesis file bad.yaml is not UTF-8 text (byte 0xff at offset 0): save it as UTF-8",
    )
    assert not (tmp_path / "runs").exists()  # refused before any run directory


@pytest.mark.parametrize(
    "command", [STUDY, ["cache", "stats"], ["demo", "--conditions", "20"]], ids=" ".join
)
def test_a_config_file_that_is_not_utf8_is_one_line_exit_2(
    tmp_path: Path, command: list[str]
) -> None:
    (tmp_path / "silicolab.yaml").write_bytes(b"models:\n  default: \xff\xfe\n")
    _error(
        cli([*command, "--config", "silicolab.yaml"], tmp_path),
        "config file silicolab.yaml is not UTF-8 text (byte 0xff at offset 19)",
        "save it as UTF-8",
    )


def test_a_data_csv_that_is_not_text_is_one_line_exit_2(tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_bytes(b"PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00\xb5")
    _error(
        cli(["discover", "--data", "data.csv", "--method", "pc"], tmp_path),
        "data file data.csv is not UTF-8 text (byte 0xb5 at offset 14)",
    )


# -- 2. files that cannot be read ------------------------------------------------------------


def _unreadable_file(folder: Path) -> Path:
    """A file this process cannot read: mode 000 for a normal user; as root (which
    ignores permission bits), ``/proc/1/environ``, which a container's root may not read."""
    if os.geteuid() != 0:
        path = folder / "secret.yaml"
        path.write_text("scenario: x\n")
        path.chmod(0)
        return path
    path = Path("/proc/1/environ")
    try:
        path.read_bytes()
    except PermissionError:
        return path
    pytest.skip("root can read /proc/1/environ here: no unreadable file to try")


@pytest.mark.parametrize("case", ["unreadable", "folder", "missing"])
def test_a_hypothesis_file_that_cannot_be_read_is_one_line_exit_2(
    tmp_path: Path, case: str
) -> None:
    (tmp_path / "a_folder").mkdir()
    path, problem = {
        "unreadable": (lambda: _unreadable_file(tmp_path), "(permission denied)"),
        "folder": (lambda: Path("a_folder"), "is a folder; pass the file itself"),
        "missing": (lambda: Path("nope.yaml"), "does not exist"),
    }[case]
    file = path()
    out = cli(["study", "run", "--hypothesis", str(file), "--subjects", "rule", "-y"], tmp_path)
    _error(out, f"hypothesis file {file}", problem)


# -- 3. a damaged line in events.jsonl -------------------------------------------------------


def _damage_line(events: Path, number: int) -> str:
    """Put bytes that are not UTF-8 into line ``number`` of ``events`` (after its unit
    key, as a flipped byte would); returns that line's unit."""
    lines = events.read_bytes().split(b"\n")
    unit = json.loads(lines[number - 1])["unit"]
    lines[number - 1] = lines[number - 1][:60] + b"\xff\xfe" + lines[number - 1][62:]
    events.write_bytes(b"\n".join(lines))
    return unit


def test_a_damaged_event_line_is_skipped_with_one_warning_and_resume_redoes_its_unit(
    run_copy: Path, tmp_path: Path
) -> None:
    events = run_copy / "events.jsonl"
    before = events.read_bytes().count(b"\n")
    unit = _damage_line(events, 3)
    (warning,) = _warnings(cli(["view", str(run_copy)], tmp_path))
    assert f"{events} line 3 is damaged (not UTF-8 text)" in warning
    assert repr(unit) in warning and "--resume" in warning
    # the run was stopped after its units: --resume runs that one unit again, and only it
    info = json.loads((run_copy / "run.json").read_text())
    (run_copy / "run.json").write_text(json.dumps({**info, "status": "interrupted"}))
    out = cli([*STUDY[:2], "--resume", "-y", "--json"], tmp_path)
    (warning,) = _warnings(out)
    assert f"{events.relative_to(tmp_path)} line 3 is damaged" in warning
    lines = events.read_bytes().splitlines()
    assert len(lines) == before + 1 and json.loads(lines[-1])["unit"] == unit
    assert Run.open(run_copy).status == "finished"
    assert len(json.loads((run_copy / "record.json").read_text())["runs"]) == 8
    assert _warnings(cli(["view", str(run_copy)], tmp_path)) == []  # redone: nothing lost


def test_a_garbage_event_line_without_a_unit_still_warns_once(
    run_copy: Path, tmp_path: Path
) -> None:
    events = run_copy / "events.jsonl"
    lines = events.read_bytes().split(b"\n")
    events.write_bytes(b"\n".join([*lines[:2], b"\x00\xff garbage", *lines[2:]]))
    (warning,) = _warnings(cli(["view", str(run_copy)], tmp_path))
    assert f"{events} line 3 is damaged" in warning and "the unit it recorded" in warning


def test_a_torn_last_event_line_is_ignored_without_a_word(run_copy: Path, tmp_path: Path) -> None:
    events = run_copy / "events.jsonl"
    with events.open("ab") as handle:
        handle.write(b'{"unit":"c-torn","status":"ok","data":{"x":\xe2\x82')  # a kill mid-write
    assert _warnings(cli(["view", str(run_copy)], tmp_path)) == []


# -- 4. a damaged record.json or run.json ----------------------------------------------------


@pytest.mark.parametrize(
    "command", [["view"], ["study", "fit"], ["study", "predict"]], ids=" ".join
)
def test_a_truncated_record_is_one_line_exit_2(
    run_copy: Path, tmp_path: Path, command: list[str]
) -> None:
    record = run_copy / "record.json"
    text = record.read_text()
    record.write_text(text[: text.index("\n", 200)])  # cut short, as by a full disk
    line_count = text[: text.index("\n", 200)].count("\n") + 1
    _error(
        cli([*command, str(run_copy)], tmp_path),
        f"{record} is damaged (JSON ends at line {line_count})",
        "restore it from a backup, or rerun the command that made the run",
    )


def test_a_damaged_run_json_is_one_line_exit_2(run_copy: Path, tmp_path: Path) -> None:
    info = run_copy / "run.json"
    info.write_bytes(info.read_bytes()[:40])
    _error(cli(["view", str(run_copy)], tmp_path), f"{info} is damaged (JSON ends at line")


def test_resume_skips_a_folder_whose_run_json_is_damaged_with_one_warning(
    run_copy: Path, tmp_path: Path
) -> None:
    damaged = run_copy.with_name("20000101-000000-study-damaged")
    shutil.copytree(run_copy, damaged)
    (damaged / "run.json").write_bytes(b"\x00" * 64)  # a file system that lost its blocks
    info = json.loads((run_copy / "run.json").read_text())
    (run_copy / "run.json").write_text(json.dumps({**info, "status": "interrupted"}))
    out = cli([*STUDY[:2], "--resume", "-y", "--json"], tmp_path)
    (warning,) = _warnings(out)
    assert f"skipped {Path('runs') / damaged.name}" in warning and "run.json" in warning
    assert strict_json(out.stdout)["run_dir"] == str(run_copy.resolve())


# -- 5. a read-only finished run -------------------------------------------------------------


def _respecting_permissions() -> list[str]:
    """A command prefix under which permission bits hold. Root ignores them (the
    DAC-override capabilities), so as root the CLI runs with those two capabilities
    dropped (``setpriv``): still root, files stay readable as their owner, but a folder
    without write permission cannot be written. Skips where that cannot be arranged."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: cannot make a folder read-only")
    prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"setpriv cannot drop capabilities here: {probe.stderr!r}")
    return prefix


def _snapshot(folder: Path) -> dict[str, tuple[int, bytes]]:
    """Every file under ``folder`` with its modification time and content."""
    return {
        str(p.relative_to(folder)): (p.stat().st_mtime_ns, p.read_bytes())
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def read_only_run(run_copy: Path) -> object:
    """``run_copy`` with write permission removed everywhere, restored afterwards."""
    folders = [run_copy, *(p for p in run_copy.rglob("*") if p.is_dir())]
    files = [p for p in run_copy.rglob("*") if p.is_file()]
    for path in files + folders:
        path.chmod(path.stat().st_mode & ~0o222)
    yield run_copy
    for path in folders + files:
        path.chmod(path.stat().st_mode | 0o200)


def test_a_read_only_run_is_never_written_into(read_only_run: Path, tmp_path: Path) -> None:
    prefix = _respecting_permissions()
    run = read_only_run

    def silicolab(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*prefix, *EXE, *args], cwd=tmp_path, env=cli_env(), capture_output=True,
            text=True, timeout=120,
        )  # fmt: skip

    before = _snapshot(run)
    _error(silicolab("study", "fit", str(run)), f"into {run}", "--out", "make the folder writable")
    _error(silicolab("view", str(run)), f"cannot write the page into {run}", "--out FILE")
    _error(silicolab("study", "predict", str(run)), f"cannot write into {run}", "writable")
    (tmp_path / "locked").mkdir(mode=0o555)
    follow = silicolab("study", "follow-on", str(run), "--out", "locked/next.yaml")
    _error(follow, f"cannot write into {Path('locked')}", "--out")
    fitted = silicolab("study", "fit", str(run), "--out", "fit.json", "--json")
    assert fitted.returncode == 0, fitted.stderr
    assert strict_json((tmp_path / "fit.json").read_text())["main"]
    page = tmp_path / "paper" / "elsewhere.html"
    viewed = silicolab("view", str(run), "--out", str(page))
    assert viewed.returncode == 0 and viewed.stderr == "", viewed.stderr
    assert "<!DOCTYPE html>" in page.read_text()
    assert _snapshot(run) == before  # not one byte, not one time stamp changed


def test_view_out_leaves_even_a_writable_run_as_it_is(run_copy: Path, tmp_path: Path) -> None:
    before = _snapshot(run_copy)
    page = tmp_path / "paper" / "elsewhere.html"
    out = cli(["view", str(run_copy), "--out", str(page)], tmp_path)
    assert out.returncode == 0, out.stderr
    assert 'href="../runs/' in page.read_text()  # the run's figure files are linked
    assert _snapshot(run_copy) == before


# -- 6. a damaged LLM cache ------------------------------------------------------------------


def _real_cache(path: Path, entries: int = 400) -> None:
    """A real SQLite cache file holding ``entries`` answers (several pages of them)."""
    cache = SQLiteCache(path)
    for i in range(entries):
        reply = Completion(text=f"answer {i} " * 40, usage=Usage(10, 20), model="m")
        cache.put(f"key-{i:04d}", reply)
    cache.close()


def _damage_pages(path: Path) -> bytes:
    """Overwrite pages 3 to 6 of the SQLite file ``path`` with garbage; returns the
    damaged bytes (what the moved-aside copy must hold)."""
    page = 4096
    data = bytearray(path.read_bytes())
    assert len(data) > 8 * page, len(data)
    data[2 * page : 6 * page] = bytes(range(256)) * (4 * page // 256)
    path.write_bytes(bytes(data))
    return bytes(data)


def _moved_aside(warning: str, cache: Path, cwd: Path, content: bytes) -> None:
    """The warning names ``cache`` (as the command knows it, relative to ``cwd`` or not)
    and the damaged copy beside it, which holds ``content``."""
    (aside,) = (cwd / cache).parent.glob(f"{cache.name}.damaged-*")
    assert aside.read_bytes() == content  # kept, as it was
    shown = cache.parent / aside.name
    assert f"the LLM cache {cache} was damaged" in warning and f"moved it to {shown}" in warning


def test_a_cache_with_damaged_pages_is_moved_aside_and_rebuilt(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    _real_cache(cache)
    damaged = _damage_pages(cache)
    out = cli(["cache", "stats", "--path", str(cache), "--json"], tmp_path)
    (warning,) = _warnings(out)
    _moved_aside(warning, cache, tmp_path, damaged)
    assert strict_json(out.stdout)["entries"] == 0
    assert _warnings(cli(["cache", "stats", "--path", str(cache)], tmp_path)) == []


def test_a_cache_file_that_is_not_sqlite_is_moved_aside_and_rebuilt(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    cache.write_text("these are my notes, not a database\n" * 50)
    out = cli(["cache", "stats", "--path", str(cache), "--json"], tmp_path)
    (warning,) = _warnings(out)
    _moved_aside(warning, cache, tmp_path, b"these are my notes, not a database\n" * 50)
    assert "file is not a database" in warning
    assert strict_json(out.stdout)["entries"] == 0


def test_the_demo_runs_on_a_damaged_cache_after_one_warning(tmp_path: Path) -> None:
    cache = tmp_path / ".silicolab" / "llm-cache.sqlite"  # the default cache_path
    cache.parent.mkdir()
    _real_cache(cache)
    damaged = _damage_pages(cache)
    (warning,) = _warnings(cli(["demo", "--conditions", "20", "--json"], tmp_path))
    _moved_aside(warning, Path(".silicolab/llm-cache.sqlite"), tmp_path, damaged)
    assert only_run(tmp_path / "runs").status == "finished"
    assert SQLiteCache(cache).stats()["entries"] > 0  # the new cache filled up
