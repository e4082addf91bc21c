"""Durable writes, seeding from identity, and secret redaction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from silicolab.core.errors import InputError
from silicolab.core.files import (
    append_jsonl,
    atomic_write_json,
    canonical_json,
    read_json_file,
    read_jsonl,
    read_user_text,
)
from silicolab.core.secrets import redact, scrub_text
from silicolab.core.seeding import child_seed, rng


def test_atomic_write_leaves_no_temp_files_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "record.json"
    atomic_write_json(target, {"a": 1})
    atomic_write_json(target, {"a": 2})
    assert json.loads(target.read_text()) == {"a": 2}
    assert [p.name for p in target.parent.iterdir()] == ["record.json"]


def test_jsonl_append_and_torn_last_line_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    append_jsonl(path, {"unit": "a"})
    append_jsonl(path, {"unit": "b"})
    with open(path, "a") as handle:
        handle.write('{"unit": "c", "trunc')
    assert [row["unit"] for row in read_jsonl(path)] == ["a", "b"]


def test_jsonl_reports_a_damaged_line_before_the_last_and_skips_it(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"unit": "a"}\n{"unit": "b\xff"}\nnot json\n\n{"unit": "c"}\n{"unit"')
    damaged: list[tuple[int, bytes, str]] = []
    rows = read_jsonl(path, on_damaged=lambda *line: damaged.append(line))
    assert [row["unit"] for row in rows] == ["a", "c"]
    assert damaged == [
        (2, b'{"unit": "b\xff"}\n', "not UTF-8 text"),
        (3, b"not json\n", "not valid JSON"),
    ]  # the torn last line is no damage


def test_user_text_names_the_file_the_byte_and_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "h.yaml"
    path.write_bytes(b"\xef\xbb\xbfname: x\n")  # a UTF-8 byte-order mark is dropped
    assert read_user_text(path) == "name: x\n"
    path.write_bytes(b"name: caf\xe9\n")  # Latin-1
    with pytest.raises(InputError, match=r"^hypothesis file .*h.yaml is not UTF-8 text "
                       r"\(byte 0xe9 at offset 9\): save it as UTF-8$"):  # fmt: skip
        read_user_text(path, what="hypothesis file")
    with pytest.raises(InputError, match="is a folder; pass the file itself"):
        read_user_text(tmp_path)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{\n  "a": 1,\n  "b": [1,', "JSON ends at line 3"),
        ('{\n  "a": "cut sho', "JSON ends at line 2"),
        ("", "it is empty"),
        ('{"a": 1} x', "invalid JSON at line 1 column 10: Extra data"),
    ],
)
def test_a_damaged_json_file_says_how(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "record.json"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_json_file(path, fix="rerun it")
    assert str(caught.value) == f"{path} is damaged ({problem}): rerun it"


def test_canonical_json_is_order_independent() -> None:
    assert canonical_json({"b": 1, "a": [1, {"y": 2, "x": 1}]}) == canonical_json(
        {"a": [1, {"x": 1, "y": 2}], "b": 1}
    )


def test_seeds_depend_on_identity_not_order() -> None:
    a = [rng(7, "unit", i).random() for i in range(5)]
    b = [rng(7, "unit", i).random() for i in reversed(range(5))][::-1]
    assert a == b
    assert rng(7, "unit", 1).random() != rng(8, "unit", 1).random()
    assert child_seed(None, "x") is None and child_seed(1, "x") == child_seed(1, "x")


def test_redact_nested_credentials_but_keep_token_counts() -> None:
    config = {
        "api_key": "sk-1",
        "nested": [{"Authorization": "Bearer x"}],
        "api_key_env": "OPENAI_API_KEY",
        "max_tokens": 5,
        "password": "",
    }
    out = redact(config)
    assert out["api_key"] == "***" and out["nested"][0]["Authorization"] == "***"
    assert out["api_key_env"] == "OPENAI_API_KEY" and out["max_tokens"] == 5
    assert config["api_key"] == "sk-1"  # input untouched


def test_scrub_text_uses_environment_secrets(monkeypatch) -> None:
    monkeypatch.setenv("MY_SERVICE_API_KEY", "s3cr3t-value-xyz")
    assert scrub_text("error with s3cr3t-value-xyz inside") == "error with *** inside"
