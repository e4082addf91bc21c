"""``silicolab view RUN_DIR``: write a run directory's self-contained ``report.html`` and
optionally open it in a browser or serve it on 127.0.0.1 (Ctrl-C stops the server).

The page works from ``file://`` and makes no network request; ``--serve`` is only for
machines where a browser cannot read the file (a remote shell with a forwarded port).
The pages are built by :mod:`silicolab.report.html`.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Annotated, Any

import typer

from silicolab.core.errors import InputError
from silicolab.core.files import dumps


def view(
    run_dir: Annotated[
        Path, typer.Argument(metavar="RUN_DIR", help="A run directory, e.g. runs/2025…-study-mug.")
    ],
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the report in the default web browser.")
    ] = False,
    serve: Annotated[
        bool, typer.Option("--serve", help="Serve the run directory on 127.0.0.1 until Ctrl-C.")
    ] = False,
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="Port of --serve (0: any free one).")
    ] = 8765,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the page here instead of RUN_DIR.")
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print one JSON object on stdout instead of text.")
    ] = False,
) -> None:
    """Write RUN_DIR's report.html (one offline page: graphs, plots, transcripts) and its
    figures (PNG and SVG under RUN_DIR/figures), or with --out only that page, elsewhere
    (a read-only run needs it); --open shows it, --serve serves it.

    Examples: 'silicolab view runs/20250101-120000-study-mug --open',
    'silicolab view runs/… --serve --port 8000'.
    """
    from silicolab.cli.flow import shown_run_dir
    from silicolab.runs import Run

    # a bad RUN_DIR: one line naming the problem (exit 2); every event is read, so a
    # damaged line is named (with the unit a --resume redoes) even when the page needs none
    Run.open(run_dir).events()
    if out is not None and out.is_dir():
        raise InputError(f"--out {out} is a folder; pass a file name such as {out / 'report.html'}")
    page = _write_page(run_dir, out)
    if serve:
        _serve(page, port, open_browser=open_browser, json_out=json_out)
        return
    uri = page.resolve().as_uri()
    if json_out:
        typer.echo(dumps({"run_dir": str(shown_run_dir(run_dir)), "report": str(page), "uri": uri}))
    else:
        typer.echo(f"report: {page}  (open {uri})")
    if open_browser:
        _open(uri)


def _write_page(run_dir: Path, out: Path | None) -> Path:
    """Write the page (into ``run_dir``, or only to ``out``); a folder that cannot be
    written (a read-only run, a bad ``--out``) is one line naming it and the fix."""
    from silicolab.report.html import write_report

    try:
        return write_report(run_dir, out=out)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        where = f" ({exc.filename})" if exc.filename else ""
        if out is None:
            raise InputError(
                f"cannot write the page into {run_dir}{where}: {reason}; pass --out FILE to "
                "write it elsewhere (the run is left as it is), or make the folder writable"
            ) from None
        raise InputError(f"cannot write --out {out}{where}: {reason}; pass another --out") from None


def _open(url: str) -> None:
    import webbrowser

    if not webbrowser.open(url):
        typer.echo(f"note: no web browser found; open {url} yourself", err=True)


def _serve(page: Path, port: int, *, open_browser: bool, json_out: bool) -> None:
    """Serve the folder of ``page`` (the run directory: the figures' links work) on
    127.0.0.1:``port`` until Ctrl-C."""
    import functools
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class QuietHandler(SimpleHTTPRequestHandler):
        """Static files, no log line per request."""

        def log_message(self, format: str, *args: Any) -> None:
            return

    handler = functools.partial(QuietHandler, directory=str(page.parent.resolve()))
    try:
        server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise InputError(
            f"cannot serve on 127.0.0.1:{port} ({exc.strerror or exc}); pass another --port "
            "(or --port 0 for any free one)"
        ) from exc
    url = f"http://127.0.0.1:{server.server_address[1]}/{page.name}"
    if json_out:
        typer.echo(dumps({"report": str(page), "url": url}))
    else:
        typer.echo(f"serving {url}  (Ctrl-C stops)")
    if open_browser:
        _open(url)
    # SIGTERM stops the server as Ctrl-C does (a plain stop, not an interrupted run)
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        typer.echo("stopped", err=True)
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.server_close()


def _stop(signum: int, frame: Any) -> None:
    del signum, frame
    raise KeyboardInterrupt
