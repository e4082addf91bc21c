"""Groups of options that several commands declare together, declared once.

Every run command takes the same model options (``--model``, ``--base-url``,
``--api-key-env``) and the same run options (``--resume``, ``--retry-failed``,
``--runs-dir``, ``--config``, ``--json``). A command names such a group with one
placeholder parameter, e.g. ``models: ModelGroup = None``, and is decorated with
:func:`with_groups`: typer then sees the group's options, in the group's order, at the
placeholder's place (the same ``--help`` as if they were written out), and the command
receives their values gathered in a dict under the placeholder's name.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar, get_args, get_origin

from silicolab.cli.common import (
    BaseUrlOpt,
    ConfigOpt,
    ExecutorOpt,
    JsonOpt,
    KeyEnvOpt,
    LatestResumeOpt,
    ModelOpt,
    RayAddressOpt,
    ResumeOpt,
    RetryFailedOpt,
    RunsDirOpt,
)

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class OptionGroup:
    """Options declared together: ``(python name, Annotated option alias, default)``."""

    options: tuple[tuple[str, Any, Any], ...]


def _run_group(resume: Any) -> Any:
    """The run options of a command whose ``--resume`` reads ``resume``'s help."""
    group = OptionGroup(
        (
            ("resume", resume, False),
            ("retry_failed", RetryFailedOpt, False),
            ("runs_dir", RunsDirOpt, None),
            ("config", ConfigOpt, None),
            ("json_out", JsonOpt, False),
        )
    )
    return Annotated[dict[str, Any] | None, group]


def model_group(model: Any = ModelOpt) -> Any:
    """``--model`` (``model``: its option alias), ``--base-url``, ``--api-key-env``."""
    options = (("model", model, None), ("base_url", BaseUrlOpt, None))
    group = OptionGroup((*options, ("api_key_env", KeyEnvOpt, None)))
    return Annotated[dict[str, Any] | None, group]


#: ``--model``, ``--base-url``, ``--api-key-env``: the model of a command's LLM methods.
ModelGroup = model_group()
#: ``--executor``, ``--ray-address``: where a command's units run.
ExecutorGroup = Annotated[
    dict[str, Any] | None,
    OptionGroup((("executor", ExecutorOpt, "local"), ("ray_address", RayAddressOpt, None))),
]
#: ``--resume`` (the latest unfinished run of this command), ``--retry-failed``,
#: ``--runs-dir``, ``--config``, ``--json``.
RunGroup = _run_group(ResumeOpt)
#: The same with the bench commands' ``--resume``, which shows a finished run's results.
LatestRunGroup = _run_group(LatestResumeOpt)


def _group_of(annotation: Any) -> OptionGroup | None:
    if get_origin(annotation) is not Annotated:
        return None
    return next((m for m in get_args(annotation)[1:] if isinstance(m, OptionGroup)), None)


def with_groups(func: F) -> F:
    """``func`` with each parameter annotated by an option group replaced, for typer, by
    the group's options; called, it receives those options' values as one dict under the
    group parameter's name. Put it below ``@app.command(...)``."""
    signature = inspect.signature(func, eval_str=True)
    params: list[inspect.Parameter] = []
    groups: dict[str, tuple[str, ...]] = {}
    for param in signature.parameters.values():
        group = _group_of(param.annotation)
        if group is None:
            params.append(param)
            continue
        groups[param.name] = tuple(name for name, _, _ in group.options)
        kind = param.kind
        params += [inspect.Parameter(n, kind, default=d, annotation=a) for n, a, d in group.options]

    @functools.wraps(func)
    def command(*args: Any, **kwargs: Any) -> Any:
        for name, members in groups.items():
            kwargs[name] = {member: kwargs.pop(member) for member in members}
        return func(*args, **kwargs)

    command.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    return command  # type: ignore[return-value]


__all__ = [
    "ExecutorGroup",
    "LatestRunGroup",
    "ModelGroup",
    "OptionGroup",
    "RunGroup",
    "model_group",
    "with_groups",
]
