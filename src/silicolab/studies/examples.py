"""The paper's four studies as built-in hypotheses, runnable without the hypothesis step.

Mug bargaining (9 x 9 x 5 = 405 conditions), bail hearing (7 x 7 x 5 = 245), lawyer
interview (2 x 5 x 8 = 80) and art auction (7^3 = 343), with the treatment values of
Manning, Zhu & Horton (2024), Tables 1-4, in our own wording. Each is a YAML file beside
this module: copy one with ``silicolab study list-examples --write DIR`` and edit it.
"""

from __future__ import annotations

from importlib import resources

from silicolab.core.errors import InputError
from silicolab.studies.hypothesis import Hypothesis

#: Example name -> conditions of its full factorial design (checked by the tests).
EXAMPLES = {"mug": 405, "bail": 245, "lawyer": 80, "auction": 343}


def example_text(name: str) -> str:
    """The YAML text of the built-in example ``name``."""
    if name not in EXAMPLES:
        raise InputError(f"unknown example study {name!r}; choose one of {', '.join(EXAMPLES)}")
    return (
        resources.files("silicolab.studies")
        .joinpath(f"examples/{name}.yaml")
        .read_text(encoding="utf-8")
    )


def load_example(name: str) -> Hypothesis:
    """The built-in example ``name`` as a validated :class:`Hypothesis`."""
    import yaml

    from silicolab.studies.files import hypothesis_from_data

    return hypothesis_from_data(yaml.safe_load(example_text(name)), source=f"example {name}")


__all__ = ["EXAMPLES", "example_text", "load_example"]
