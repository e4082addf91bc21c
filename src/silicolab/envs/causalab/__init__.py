"""The CausaLab crystal lab: interactive causal discovery on hidden linear/quadratic SCMs.

>>> from silicolab.envs.causalab import load_suite, CrystalLab
>>> lab = CrystalLab(load_suite("4nodes")[0], fidelity="faithful")
>>> lab.prior_records[0]
{'density': 14, 'moisture': 3, 'resonanceFreq': 42.0, 'quantumSize': 95}

* :mod:`.suite` - graph configs: the 22 bundled suites (released data, Apache-2.0) and the
  structural equations;
* :mod:`.generator` - new suites with the released suites' statistics;
* :mod:`.lab` - the episode (typed tools ``observe/intervene/open_reactor/submit``);
* :mod:`.text_ui` - the same episode as menus and panels for text agents.
"""

from silicolab.envs.causalab.generator import generate_config, generate_suite, write_suite
from silicolab.envs.causalab.lab import CrystalLab, SubmitResult, make_lab
from silicolab.envs.causalab.suite import (
    TARGET,
    GoldenStep,
    GraphConfig,
    HiddenSpec,
    load_suite,
    load_suite_file,
    suite_names,
)
from silicolab.envs.errors import InvalidAction

__all__ = [
    "TARGET",
    "CrystalLab",
    "GoldenStep",
    "GraphConfig",
    "HiddenSpec",
    "InvalidAction",
    "SubmitResult",
    "generate_config",
    "generate_suite",
    "load_suite",
    "load_suite_file",
    "make_lab",
    "suite_names",
    "write_suite",
]
