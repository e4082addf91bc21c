"""The sandbox runs real child interpreters: nothing here is mocked.

Network tests only ever talk to a server on 127.0.0.1 that the test itself starts.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from silicolab.core.errors import InputError
from silicolab.runtime.sandbox import SandboxResult, arun_python, run_python
from silicolab.runtime.sandbox import _support as sandbox_support


@pytest.fixture
def server() -> Iterator[socket.socket]:
    """A listening TCP socket on 127.0.0.1 (the child may connect to it; nobody accepts
    until the test checks)."""
    srv = socket.create_server(("127.0.0.1", 0))
    srv.settimeout(0.3)
    yield srv
    srv.close()


def _saw_connection(srv: socket.socket) -> bytes | None:
    """What the first client sent, or None when no client connected."""
    try:
        conn, _ = srv.accept()
    except TimeoutError:
        return None
    with conn:
        conn.settimeout(1.0)
        return conn.recv(100)


def _live_session_members(sid: int) -> list[int]:
    """Live processes whose session id is ``sid`` (scanned from /proc, no psutil)."""
    return sandbox_support.session_members(sid)


def test_ok_run_reads_inputs_and_returns_collected_files():
    code = (
        "import pandas as pd\n"
        "df = pd.read_csv('data.csv')\n"
        "print('rows', len(df))\n"
        "df.sum().to_json('result.json')\n"
        "open('notes.md', 'w').write('not collected')\n"
    )
    res = run_python(code, inputs={"data.csv": "a,b\n1,2\n3,4\n"}, timeout_s=30)
    assert isinstance(res, SandboxResult)
    assert res.ok, res.report()
    assert (res.returncode, res.violation) == (0, None)
    assert res.stdout == "rows 2\n"
    assert json.loads(res.files["result.json"]) == {"a": 4, "b": 6}
    assert set(res.files) == {"result.json"}  # unchanged input and *.md are not returned
    assert "Finished successfully" in res.message
    assert 0 < res.elapsed_s < 30


def test_long_output_keeps_head_and_tail():
    res = run_python("for i in range(50000):\n    print(f'line {i}')\n", max_output_chars=1000)
    assert res.ok
    assert res.stdout.startswith("line 0\n")
    assert res.stdout.rstrip().endswith("line 49999")
    assert "characters omitted ..." in res.stdout
    assert len(res.stdout) < 1200


def test_syntax_error_and_exception_are_reported():
    res = run_python("def f(:\n    pass\n")
    assert not res.ok and res.violation is None and res.returncode == 1
    assert "SyntaxError" in res.stderr and "SyntaxError" in res.message
    assert "agent_code.py, line 1" in res.message

    res = run_python("x = 1\ny = x / 0\n")
    assert not res.ok and res.violation is None and res.returncode == 1
    assert 'File "agent_code.py", line 2' in res.stderr
    assert "_boot.py" not in res.stderr  # the bootstrap's frames are hidden
    assert "ZeroDivisionError: division by zero" in res.message
    assert "\n" not in res.message


@pytest.mark.parametrize("netns", [True, False], ids=["default", "audit-hook-only"])
def test_socket_to_local_server_is_blocked(server, monkeypatch, netns):
    if not netns:
        monkeypatch.setattr(sandbox_support, "netns_available", lambda: False)
    port = server.getsockname()[1]
    code = f"import socket\ns = socket.create_connection(('127.0.0.1', {port}))\ns.sendall(b'x')\n"
    res = run_python(code, timeout_s=10)
    assert not res.ok and res.violation == "network"
    assert "network access is not allowed" in res.message
    assert "PermissionError: [sandbox]" in res.stderr
    assert _saw_connection(server) is None


def test_blocked_socket_is_reported_even_when_the_code_catches_it():
    code = (
        "import socket\ntry:\n    socket.socket()\nexcept PermissionError:\n    print('caught')\n"
    )
    res = run_python(code)
    assert res.returncode == 0 and res.stdout == "caught\n"
    assert not res.ok and res.violation == "network"


def test_network_namespace_stops_a_raw_libc_connect(server):
    """Second layer: even a connect() the audit hook cannot see (ctypes) goes nowhere."""
    if not sandbox_support.netns_available():
        pytest.skip("unshare --net is not available here")
    port = server.getsockname()[1]
    code = (
        "import ctypes, socket, struct\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "fd = libc.socket(2, 1, 0)\n"
        f"addr = struct.pack('=H', 2) + struct.pack('>H', {port}) + bytes([127, 0, 0, 1])\n"
        "addr += bytes(8)\n"
        "print(libc.connect(fd, addr, 16))\n"
    )
    res = run_python(code, timeout_s=10)
    assert res.stdout.strip() == "-1", res.report()
    assert _saw_connection(server) is None


def test_allow_network_connects_to_local_server(server):
    port = server.getsockname()[1]
    code = f"import socket\ns = socket.create_connection(('127.0.0.1', {port}))\ns.sendall(b'hi')\n"
    res = run_python(code, allow_network=True, timeout_s=10)
    assert res.ok, res.report()
    assert _saw_connection(server) == b"hi"


def test_writes_outside_the_workdir_are_blocked(tmp_path):
    outside = tmp_path / "outside.txt"
    res = run_python(f"open({str(outside)!r}, 'w').write('x')\n")
    assert not res.ok and res.violation == "filesystem"
    assert "outside the working directory" in res.message
    assert not outside.exists()

    res = run_python(f"import os\nos.chdir({str(tmp_path)!r})\nopen('rel.txt', 'a')\n")
    assert res.violation == "filesystem"
    assert not (tmp_path / "rel.txt").exists()


def test_deleting_or_renaming_outside_is_blocked(tmp_path):
    victim = tmp_path / "keep.txt"
    victim.write_text("precious")
    for code in (
        f"import os\nos.remove({str(victim)!r})\n",
        f"import os\nos.rename({str(victim)!r}, 'stolen.txt')\n",
        f"import shutil\nshutil.rmtree({str(tmp_path)!r})\n",
    ):
        res = run_python(code)
        assert res.violation == "filesystem", (code, res.report())
    assert victim.read_text() == "precious"


def test_writes_inside_the_workdir_work():
    code = (
        "import os, tempfile\n"
        "os.makedirs('out/sub')\n"
        "open('out/sub/a.txt', 'w').write('A')\n"
        "os.rename('out/sub/a.txt', 'b.txt')\n"
        "with tempfile.NamedTemporaryFile() as f:\n    f.write(b'scratch')\n"
        "open('/dev/null', 'w').write('ignored')\n"
    )
    res = run_python(code, collect=["*.txt", "**/*.txt"])
    assert res.ok, res.report()
    assert res.files == {"b.txt": b"A"}


def test_infinite_loop_is_stopped_at_the_timeout():
    res = run_python("print('started')\nwhile True:\n    pass\n", timeout_s=1.5)
    assert not res.ok and res.violation == "timeout" and res.returncode is None
    assert 1.5 <= res.elapsed_s < 2.5
    assert res.stdout == "started\n"  # output printed before the kill is kept
    assert "time limit" in res.message


def test_unbounded_allocation_is_stopped():
    code = "x = []\nwhile True:\n    x.append(bytearray(10**7))\n"
    res = run_python(code, memory_mb=300, timeout_s=20)
    assert not res.ok and res.violation == "memory"
    assert "300 MB memory limit" in res.message
    assert "MemoryError" in res.stderr


def test_fork_bomb_is_blocked_and_leaves_no_process():
    code = "import os\nprint(os.getpid(), flush=True)\nwhile True:\n    os.fork()\n"
    res = run_python(code, timeout_s=10)
    assert not res.ok and res.violation == "subprocess"
    assert "not allowed" in res.message
    child_pid = int(res.stdout.split()[0])
    assert _live_session_members(child_pid) == []


def test_subprocess_is_blocked():
    res = run_python("import subprocess\nsubprocess.run(['ls'])\n")
    assert not res.ok and res.violation == "subprocess"
    assert "ls" in res.message


def test_allowed_subprocess_runs_and_is_cleaned_up():
    code = (
        "import os, subprocess\n"
        "print(os.getpid(), subprocess.run(['echo', 'hi'], capture_output=True).stdout)\n"
        "subprocess.Popen(['sleep', '30'])\n"
    )
    res = run_python(code, allow_subprocess=True, timeout_s=10)
    assert res.ok, res.report()
    pid, output = res.stdout.split(maxsplit=1)
    assert output.strip() == "b'hi\\n'"
    time.sleep(0.1)
    assert _live_session_members(int(pid)) == []  # the background sleep was killed


def test_environment_does_not_leak_secrets(monkeypatch):
    secret = "sk-sandbox-leak-check-5b1e9f"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    code = (
        "import json, os, sys\nprint(json.dumps(dict(os.environ)))\nprint(sys.flags.no_user_site)\n"
    )
    res = run_python(code, env={"EXTRA_SETTING": "yes"})
    assert res.ok, res.report()
    env_line, user_site = res.stdout.splitlines()
    child_env = json.loads(env_line)
    assert "OPENAI_API_KEY" not in child_env and secret not in res.stdout
    assert child_env["EXTRA_SETTING"] == "yes"
    assert child_env["OPENBLAS_NUM_THREADS"] == "1" and child_env["PYTHONHASHSEED"] == "0"
    assert user_site == "1"


def test_causal_learn_pc_runs_inside_the_sandbox():
    rng = np.random.default_rng(0)
    x = rng.normal(size=400)
    y = 0.8 * x + rng.normal(size=400)
    z = 0.8 * y + rng.normal(size=400)
    data = "x,y,z\n" + "\n".join(
        f"{a:.6f},{b:.6f},{c:.6f}" for a, b, c in zip(x, y, z, strict=True)
    )
    code = (
        "import json\nimport pandas as pd\n"
        "from causallearn.search.ConstraintBased.PC import pc\n"
        "df = pd.read_csv('data.csv')\n"
        "cg = pc(df.to_numpy(), 0.01, 'fisherz', show_progress=False)\n"
        "json.dump(cg.G.graph.tolist(), open('graph.json', 'w'))\n"
    )
    res = run_python(code, inputs={"data.csv": data}, timeout_s=30)
    assert res.ok, res.report()
    graph = np.array(json.loads(res.files["graph.json"]))
    adjacent = graph != 0
    assert adjacent[0, 1] and adjacent[1, 2] and not adjacent[0, 2]


async def test_arun_python_runs_concurrently():
    code = "import time\ntime.sleep(1.0)\nprint('done')\n"
    start = time.monotonic()
    first, second = await asyncio.gather(arun_python(code), arun_python(code))
    assert first.ok and second.ok and first.stdout == second.stdout == "done\n"
    assert time.monotonic() - start < 1.9


async def test_cancelling_arun_python_kills_the_child():
    code = "import os\nprint(os.getpid(), flush=True)\nwhile True:\n    pass\n"
    task = asyncio.ensure_future(arun_python(code, timeout_s=30))
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.3)
    leftovers = [pid for pid in os.listdir("/proc") if pid.isdigit() and _is_sandbox_busy_loop(pid)]
    assert leftovers == []


def _is_sandbox_busy_loop(pid: str) -> bool:
    """A live sandbox child of this test process (other processes' sandboxes, e.g. another
    test run on the machine, are not ours to count)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        state, ppid = Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[:2]
    except (OSError, ValueError):
        return False
    booted = b"sandbox/_boot.py" in cmdline and b"silicolab-sandbox-" in cmdline
    return booted and int(ppid) == os.getpid() and state != b"Z"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"inputs": {"../escape.csv": "x"}},
        {"inputs": {"/etc/passwd": "x"}},
        {"timeout_s": 0},
        {"memory_mb": 10},
        {"collect": "*.json"},
        {"python": "/nonexistent/python"},
    ],
)
def test_invalid_arguments_raise_input_error(kwargs):
    with pytest.raises(InputError):
        run_python("print(1)", **kwargs)
