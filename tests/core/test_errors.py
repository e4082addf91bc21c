"""SilicolabError.in_context: a caller frames an error's message with where it happened."""

from __future__ import annotations

import pickle

import pytest

from silicolab.core.errors import InputError, LLMError, ParseFailure


def test_a_parse_failure_keeps_its_raw_text_and_attempts() -> None:
    err = ParseFailure("not JSON", raw="{oops", attempts=3)
    framed = err.in_context("ann, act 2 (free)", "; last reply: '{oops'")
    assert type(framed) is ParseFailure
    assert str(framed) == "ann, act 2 (free): not JSON; last reply: '{oops'"
    assert (framed.raw, framed.attempts) == ("{oops", 3)
    assert str(err) == "not JSON"  # the original is untouched


def test_an_llm_error_keeps_its_status_and_survives_pickling() -> None:
    framed = LLMError("server down", attempts=2, status=503).in_context("bob, act 0 (choice)")
    back = pickle.loads(pickle.dumps(framed))
    assert (str(back), back.attempts, back.status) == ("bob, act 0 (choice): server down", 2, 503)


def test_an_input_error_keeps_its_params() -> None:
    framed = InputError("conditions=0 is too few", params=("conditions",)).in_context("study")
    assert framed.params == ("conditions",)
    with pytest.raises(InputError, match=r"^study: conditions=0 is too few$"):
        raise framed
