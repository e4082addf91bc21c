"""A fake LLM server in a child process, for benchmarks: the client under measurement
then does not share its interpreter (and GIL) with the server.

The child runs a small script that starts the server, prints its base URL on one line and
then answers one line per command read from stdin (``"ok"`` or a JSON value); closing
stdin stops it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any


class ServerProcess:
    """``python -c script *args`` as the server; :meth:`command` talks to it."""

    def __init__(self, script: str, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", script, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.base_url = self._readline()

    def _readline(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the fake LLM server process exited early")
        return line.strip()

    def command(self, command: str) -> Any:
        """Send one command; its one-line answer, parsed as JSON when it is JSON."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        line = self._readline()
        return line if line == "ok" else json.loads(line)

    def stats(self) -> dict[str, Any]:
        """The server's counters since the last :meth:`reset`."""
        return self.command("stats")

    def reset(self) -> None:
        """Zero the server's counters."""
        self.command("reset")

    def close(self) -> None:
        """Stop the server process."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


__all__ = ["ServerProcess"]
