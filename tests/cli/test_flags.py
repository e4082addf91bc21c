"""One message for both front doors: a library error names Python parameters, and the
command line prints the same message with its flags (``silicolab.cli.flags``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.cli import EXE, private_cache_env

from silicolab.cli.flags import as_flags, flag_of


def test_each_listed_parameter_becomes_its_flag_with_its_value() -> None:
    message = (
        "conditions=0 must be at least 1; max_conditions=5 stays; use subjects='llm' or "
        "drop prior=False, then give max_cost= and hypothesis='x.yaml' (see resume=)"
    )
    params = ("conditions", "subjects", "prior", "max_cost", "hypothesis", "resume")
    assert as_flags(message, params) == (
        "--conditions 0 must be at least 1; max_conditions=5 stays; use --subjects llm or "
        "drop --no-prior, then give --max-cost and --hypothesis FILE (see --resume)"
    )


def test_only_listed_parameters_change_and_a_longer_name_is_not_a_shorter_ones() -> None:
    assert as_flags("seed=3 and max_jobs=2", ("jobs",)) == "seed=3 and max_jobs=2"
    assert as_flags("force=True", ("force",)) == "--force"
    assert flag_of("max_cost") == "--max-cost" and flag_of("suites") == "--suite"


def test_the_cli_prints_a_library_refusal_in_flags(tmp_path: Path) -> None:
    out = subprocess.run(
        [*EXE, "study", "run", "auction", "--subjects", "rule", "--follow-on"],
        cwd=tmp_path, env=private_cache_env(tmp_path), capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert out.returncode == 2
    assert "error: --follow-on needs language-model subjects" in out.stderr
    assert "follow_on=" not in out.stderr and "subjects=" not in out.stderr
