"""silicolab.yaml and environment overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from silicolab.core.config import ROLES, load_settings
from silicolab.core.errors import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "silicolab.yaml"
    path.write_text(text)
    return path


def test_roles_fall_back_to_default_then_builtin(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "models:\n  default: openai:gpt-4o-mini\n"
        "  judge:\n    spec: anthropic:claude-x\n    max_concurrency: 2\n",
    )
    settings = load_settings(path, env={})
    assert settings.model_settings("judge").spec == "anthropic:claude-x"
    assert settings.model_settings("judge").options() == {"max_concurrency": 2}
    assert settings.model_settings("subject").spec == "openai:gpt-4o-mini"
    assert settings.role_source("subject") == "default role"
    empty = load_settings(write(tmp_path, "runs_dir: out\n"), env={})
    assert {empty.model_settings(r).spec for r in ROLES} == {"scripted"}
    assert empty.runs_dir == "out"


def test_environment_overrides_file(tmp_path: Path) -> None:
    path = write(tmp_path, "models:\n  scientist:\n    spec: openai:a\n    timeout_s: 5\n")
    env = {
        "SILICOLAB_MODEL_SCIENTIST": "openai:b",
        "SILICOLAB_MODEL": "ollama:c",
        "SILICOLAB_CACHE": "off",
        "SILICOLAB_RUNS_DIR": "elsewhere",
    }
    settings = load_settings(path, env=env)
    assert settings.model_settings("scientist").spec == "openai:b"
    assert settings.model_settings("scientist").timeout_s == 5
    assert settings.model_settings("parser").spec == "ollama:c"
    assert settings.role_source("scientist") == "env SILICOLAB_MODEL_SCIENTIST"
    assert settings.resolved_cache_path is None and settings.runs_dir == "elsewhere"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("models:\n  default: openai:x\n bad indent: [\n", "line"),
        ("models:\n  wizard: openai:x\n", "unknown role"),
        ("models:\n  default:\n    spec: openai:x\n    base_ur: http://x\n", "unknown setting"),
        (
            "models:\n  default:\n    spec: openai:x\n    api_key_env: sk-abcdef123\n",
            "environment variable",
        ),
        ("- just\n- a list\n", "top level must be a mapping"),
        ("models:\n  default:\n    spec: openai:x\n    max_concurrency: 0\n", "max_concurrency"),
    ],
)
def test_malformed_config_names_the_problem(tmp_path: Path, text: str, fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment) as info:
        load_settings(write(tmp_path, text), env={})
    assert "silicolab.yaml" in str(info.value)


def test_missing_explicit_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "nope.yaml", env={})
