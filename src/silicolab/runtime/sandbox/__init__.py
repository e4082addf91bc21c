"""The code sandbox: run untrusted Python in a separate, limited process (docs/sandbox.md).

:func:`run_python` / :func:`arun_python` run a program with time and memory limits, no
network, its own temporary folder and confined reads, and return a :class:`SandboxResult`.
The private modules hold the parts: ``_run`` (the parent side: options, the child's command,
classifying how it ended), ``_boot`` (the child's bootstrap script, stdlib only, run by
path), ``_reads`` (the read policy, loaded by the bootstrap by path) and ``_support``
(process sessions, the network namespace, output capture).
"""

from __future__ import annotations

from silicolab.runtime.sandbox._run import VIOLATIONS, SandboxResult, arun_python, run_python

__all__ = ["VIOLATIONS", "SandboxResult", "arun_python", "run_python"]
