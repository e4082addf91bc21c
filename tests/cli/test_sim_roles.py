"""``sim run`` loads its agents' model by role: the bargainers are simulated people, so
``--model`` (and a configured model) is the ``subject`` role's, never the scientist's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from silicolab.cli.sim._run import run_sim
from silicolab.sim.examples.bargaining import scripted_model


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[dict[str, Any]]:
    """Record every role model ``sim run`` loads (answered by the offline bargainers)."""
    calls: list[dict[str, Any]] = []

    def role_model(role: str, settings: Any = None, **overrides: Any) -> Any:
        calls.append({"role": role, **overrides})
        return scripted_model()

    monkeypatch.setattr("silicolab.llm.roles.role_model", role_model)
    for name in [n for n in os.environ if n.startswith("SILICOLAB_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return calls


def _run(tmp_path: Path, config: Path | None = None, **kw: Any) -> dict[str, Any]:
    options: dict[str, Any] = dict(model=None, base_url=None, api_key_env=None, seed=0)
    options.update(kw)
    return run_sim(
        "bargaining", runs_dir=tmp_path / "runs", config=config, json_out=True, **options
    )


def test_model_option_sets_the_subject_role(loads, tmp_path, capsys) -> None:
    out = _run(tmp_path, model="openai:gpt-4o-mini", base_url="http://localhost:1/v1")
    assert loads == [
        {
            "role": "subject",
            "spec": "openai:gpt-4o-mini",
            "base_url": "http://localhost:1/v1",
            "api_key_env": None,
        }
    ]
    assert out["deal"] is True and out["model"] != "scripted (offline)"


def test_a_configured_subject_role_is_used_without_model_option(loads, tmp_path) -> None:
    config = tmp_path / "silicolab.yaml"
    config.write_text("models:\n  subject: openai:gpt-4o-mini\n")
    _run(tmp_path, config=config)
    assert [c["role"] for c in loads] == ["subject"]


def test_the_scientist_model_never_plays_the_subjects(loads, tmp_path) -> None:
    config = tmp_path / "silicolab.yaml"
    config.write_text("models:\n  scientist: openai:gpt-4o-mini\n")
    out = _run(tmp_path, config=config)
    assert loads == [] and out["model"] == "scripted (offline)"  # offline bargainers
