"""Grounded state round-trips through strict JSON: a non-finite number (an opening ask of
``inf``) comes back from a checkpoint as it was, not as ``null``."""

from __future__ import annotations

import json
import math

from silicolab.core.files import dumps
from silicolab.sim.grounded import decode_value, encode_value


def test_non_finite_floats_survive_a_strict_json_round_trip() -> None:
    state = {"ask": math.inf, "bid": -math.inf, "gap": math.nan, "seen": {1.5, 2.5}, "k": 3.0}
    text = dumps(encode_value(state))
    back = decode_value(json.loads(text, parse_constant=lambda t: (_ for _ in ()).throw(
        AssertionError(f"non-strict token {t}"))))  # fmt: skip
    assert back["ask"] == math.inf and back["bid"] == -math.inf and math.isnan(back["gap"])
    assert back["seen"] == {1.5, 2.5} and back["k"] == 3.0
