"""The error an environment returns to an agent for an action it cannot carry out.

Kept in its own tiny module so ``silicolab.envs`` can export it without importing any
environment (and the SCM stack behind it).
"""

from __future__ import annotations

from silicolab.core.errors import SilicolabError


class InvalidAction(SilicolabError):
    """An action the environment refuses: ``message`` is the text the agent sees.

    Raising it never consumes the intervention budget (the state is left unchanged).
    """

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ContractError(SilicolabError, ValueError):
    """An environment or a scientist family that breaks its contract, raised by
    :func:`silicolab.envs.check_env` and :func:`silicolab.scientists.check_family`.

    The message is one line: the checker and what it checked, the ``rule`` broken (first
    one found: the checks stop there), what was seen, and how to fix it.
    """

    exit_code = 2

    def __init__(self, checker: str, subject: str, rule: str, problem: str, fix: str) -> None:
        super().__init__(f"{checker}({subject}) breaks rule {rule!r}: {problem}; fix: {fix}")
        self.checker, self.subject, self.rule = checker, subject, rule
        self.problem, self.fix = problem, fix
