"""``writable_dirs``: the sandbox may write into named directories outside its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from silicolab.core.errors import InputError
from silicolab.runtime.sandbox import run_python


def test_a_writable_directory_accepts_writes_and_others_stay_refused(tmp_path: Path) -> None:
    shared, other = tmp_path / "cache", tmp_path / "other"
    shared.mkdir()
    other.mkdir()
    code = (
        f"open({str(shared / 'a.txt')!r}, 'w').write('kept')\n"
        f"open({str(other / 'b.txt')!r}, 'w').write('refused')\n"
    )
    result = run_python(code, writable_dirs=[str(shared)], timeout_s=30)
    assert (shared / "a.txt").read_text() == "kept"
    assert result.violation == "filesystem" and not (other / "b.txt").exists()


def test_writable_dirs_must_exist(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="writable_dirs"):
        run_python("pass", writable_dirs=[str(tmp_path / "missing")])
    with pytest.raises(InputError, match="writable_dirs"):
        run_python("pass", writable_dirs="/tmp")
