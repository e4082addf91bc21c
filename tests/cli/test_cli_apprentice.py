"""``silicolab bench boxinggym --agent apprentice|statistician``: inputs and the PPL extra."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from tests.cli.test_cli import run

from silicolab.core.errors import InputError
from silicolab.scientists.boxinggym.apprentice import require_ppl


def test_the_apprentice_needs_a_model(tmp_path: Path) -> None:
    out = run(["bench", "boxinggym", "--agent", "apprentice", "--env", "dugongs"], tmp_path)
    assert out.returncode == 2, out.stderr
    assert "--scientist apprentice needs --model" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_without_pymc_the_agents_say_install_the_ppl_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from silicolab.cli.app import main

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pymc" else real(name, *a)
    )
    with pytest.raises(InputError, match=r"install silicolab\[ppl\]"):
        require_ppl()
    args = ["bench", "boxinggym", "--agent", "statistician", "--env", "dugongs", "--seeds", "1"]
    with pytest.raises(SystemExit) as stop:
        main([*args, "--runs-dir", str(tmp_path / "runs")])
    assert stop.value.code == 2
    assert "install silicolab[ppl]" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()  # refused before a run directory exists
