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
