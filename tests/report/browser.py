"""Headless Chromium for the report tests, through Playwright (the system's browser; no
``playwright install``).

Without a browser (or without Playwright) the browser tests skip with one line, unless
``SILICOLAB_REQUIRE_BROWSER=1`` (CI), where a missing browser fails them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Where the browser tests leave a screenshot of every page (``build/`` is git-ignored).
SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"


def chromium() -> str | None:
    """The Chromium executable: ``$SILICOLAB_CHROMIUM``, else ``chromium`` on the PATH,
    else Debian's ``/usr/bin/chromium``; ``None`` when there is none."""
    for candidate in (os.environ.get("SILICOLAB_CHROMIUM"), shutil.which("chromium")):
        if candidate and Path(candidate).is_file():
            return candidate
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None


def unavailable() -> str | None:
    """Why the browser tests cannot run here, or ``None``."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[dev]')"
    if chromium() is None:
        return "no Chromium found (apt-get install chromium, or set SILICOLAB_CHROMIUM)"
    return None


def skip_or_fail(reason: str) -> None:
    """Skip with ``reason`` locally; fail under ``SILICOLAB_REQUIRE_BROWSER=1``."""
    if os.environ.get("SILICOLAB_REQUIRE_BROWSER") == "1":
        pytest.fail(f"SILICOLAB_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


@dataclass
class Visit:
    """One page load: what the page did besides rendering."""

    page: Any
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    @property
    def network(self) -> list[str]:
        """Requests to anything but the file itself and inline data."""
        return [u for u in self.requests if not u.startswith(("file://", "data:"))]


@contextmanager
def launched(user_data: Path) -> Iterator[Any]:
    """A headless Chromium context with a fresh profile in ``user_data``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(user_data),
            executable_path=chromium(),
            headless=True,
            args=ARGS,
            viewport={"width": 1200, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


@contextmanager
def visit(context: Any, url: str) -> Iterator[Visit]:
    """Open ``url`` in a new tab, recording console errors, page errors, every request and
    every dialog (dismissed)."""
    page = context.new_page()
    page.set_default_timeout(10_000)
    seen = Visit(page)
    page.on("console", lambda m: seen.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen.page_errors.append(str(e)))
    page.on("request", lambda r: seen.requests.append(r.url))

    def on_dialog(dialog: Any) -> None:
        seen.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    try:
        page.goto(url, wait_until="load")
        yield seen
    finally:
        page.close()


def screenshot(seen: Visit, name: str) -> Path:
    """Save a full-page screenshot as ``build/screenshots/<name>.png``."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    seen.page.screenshot(path=str(path), full_page=True)
    return path
