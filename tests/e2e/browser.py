"""Chromium under Playwright for the e2e tests that look at a page: the docs page, a
report's HTML. Required in CI (``make browser`` installs it); elsewhere a missing browser
skips the test."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, NoReturn

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def unavailable(message: str) -> NoReturn:
    """Fails in CI, skips elsewhere."""
    if os.environ.get("CI"):
        pytest.fail(f"{message} (the browser test is required in CI; run make browser)")
    pytest.skip(message)


@contextlib.contextmanager
def chromium(args: Sequence[str] = ()) -> Iterator[Browser]:
    """A headless Chromium, closed after."""
    if not os.path.exists(CHROMIUM):
        unavailable(f"Chromium not found at {CHROMIUM} (make browser installs it)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        unavailable(f"Playwright is not installed: {exc}")
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *args], timeout=15_000
            )
        except Exception as exc:  # playwright raises its own Error types
            unavailable(f"Chromium at {CHROMIUM} could not be launched: {exc}")
        try:
            yield browser
        finally:
            browser.close()
