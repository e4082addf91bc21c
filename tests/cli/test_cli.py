"""The command line, run as a real subprocess: exit codes, one-line errors, the demo."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.cli import strict_json

EXE = [sys.executable, "-m", "silicolab.cli.app"]


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 120):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("SILICOLAB_")}
    full_env.update(env or {})
    return subprocess.run(
        [*EXE, *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout
    )


def test_help_lists_commands_and_imports_no_heavy_library(tmp_path: Path) -> None:
    out = run(["--help"], tmp_path)
    assert out.returncode == 0
    for command in ("demo", "models", "cache", "ask"):
        assert command in out.stdout
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, silicolab.cli.app as a; "
            "print(sorted(m for m in ('numpy','pandas','openai','statsmodels','causallearn',"
            "'scipy','anthropic') if m in sys.modules))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("args", "env", "yaml", "fragment"),
    [
        (["ask", "hi", "--model", "gpt-4o"], {}, None, "unknown model spec 'gpt-4o'"),
        (
            ["ask", "hi"],
            {"SILICOLAB_MODEL": "openai:gpt-4o-mini", "OPENAI_API_KEY": ""},
            None,
            "OPENAI_API_KEY is not set",
        ),
        (["models"], {}, "models:\n  default: [\n", "silicolab.yaml line"),
        (["ask", "hi", "--role", "wizard"], {}, None, "unknown model role 'wizard'"),
        (["demo", "--resume"], {}, None, "no demo run"),
    ],
)
def test_bad_input_gives_one_line_and_exit_2(tmp_path, args, env, yaml, fragment) -> None:
    if yaml is not None:
        (tmp_path / "silicolab.yaml").write_text(yaml)
    out = run(args, tmp_path, env)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0]
    assert "Traceback" not in out.stderr


def test_models_json_shows_key_status_but_never_the_key(tmp_path: Path) -> None:
    secret = "sk-cli-secret-0123456789"
    (tmp_path / "silicolab.yaml").write_text(
        "models:\n  default: openai:gpt-4o-mini\n  judge:\n    spec: anthropic:claude-x\n"
        "    api_key_env: MY_JUDGE_KEY\n"
    )
    out = run(["models", "--json"], tmp_path, {"OPENAI_API_KEY": secret, "MY_JUDGE_KEY": ""})
    assert out.returncode == 0, out.stderr
    roles = {r["role"]: r for r in strict_json(out.stdout)["roles"]}
    assert roles["default"]["key_set"] is True and roles["judge"]["key_set"] is False
    assert roles["judge"]["api_key_env"] == "MY_JUDGE_KEY"
    assert secret not in out.stdout + out.stderr
