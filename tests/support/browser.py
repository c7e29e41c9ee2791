"""A real headless Chromium (Debian's package, installed by ``make browser``) driven by Selenium,
fully offline: the driver is given explicitly, so Selenium Manager never runs or downloads.

The browser's log (``goog:loggingPrefs``) carries ``console.error`` calls, uncaught exceptions,
Content-Security-Policy violations and failed loads as ``SEVERE`` entries; :meth:`Browser.errors`
returns them so a test can assert that a page produced none.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

CHROMIUM = os.environ.get("MNEMO_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("MNEMO_CHROMEDRIVER", "/usr/bin/chromedriver")

FLAGS = (
    "--headless=new",
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-features=Translate,MediaRouter,OptimizationHints",
    "--no-first-run",
    "--no-default-browser-check",
    "--metrics-recording-only",
    "--password-store=basic",
    "--use-mock-keychain",
    "--force-device-scale-factor=1",
    "--lang=en-GB",
)

T = TypeVar("T")


def missing() -> str | None:
    """Why the browser cannot start here, or None."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            return f"{path} is missing: run `make browser` (Debian's chromium and chromium-driver)"
    return None


class Browser:
    """One Chromium for a test module; ``page`` is the Selenium driver."""

    def __init__(self, *, width: int = 1100, height: int = 800, downloads: Path | None = None) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        os.environ.setdefault("SE_OFFLINE", "true")  # a backstop: Selenium Manager is skipped anyway
        self.profile = Path(tempfile.mkdtemp(prefix="mnemo-chromium-"))
        self.downloads = downloads or self.profile / "downloads"
        self.downloads.mkdir(parents=True, exist_ok=True)
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in (*FLAGS, f"--window-size={width},{height}", f"--user-data-dir={self.profile / 'user'}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        options.add_experimental_option(
            "prefs",
            {
                "download.default_directory": str(self.downloads),
                "download.prompt_for_download": False,
                "safebrowsing.enabled": False,
            },
        )
        service = Service(executable_path=CHROMEDRIVER, log_output=str(self.profile / "chromedriver.log"))
        self.page = webdriver.Chrome(service=service, options=options)
        self.page.execute_cdp_cmd(
            "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(self.downloads)}
        )
        self._log: list[dict[str, Any]] = []

    def close(self) -> None:
        try:
            self.page.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)

    # -- the log ----------------------------------------------------------------------------

    def log(self) -> list[dict[str, Any]]:
        """Every browser log entry so far (Selenium hands each out once; they are kept here)."""
        self._log.extend(self.page.get_log("browser"))
        return self._log

    def errors(self, allow: Iterable[str] = ()) -> list[str]:
        """The SEVERE entries since the last :meth:`clear_log`, except those containing a string of
        ``allow`` (a test that provokes, say, a 409 names it)."""
        allowed = tuple(allow)
        return [
            entry["message"]
            for entry in self.log()
            if entry["level"] == "SEVERE" and not any(text in entry["message"] for text in allowed)
        ]

    def clear_log(self) -> None:
        self.log()
        self._log.clear()

    # -- waiting ----------------------------------------------------------------------------

    def wait(self, condition: Callable[[], T | None], timeout: float = 10, what: str = "the page") -> T:
        """``condition()``'s first truthy value, polled; fails with the page's errors on timeout."""
        from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException

        deadline = time.monotonic() + timeout
        while True:
            try:
                value = condition()
            except (NoSuchElementException, StaleElementReferenceException):
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; browser errors: {self.errors()}")
            time.sleep(0.05)

    def css(self, selector: str) -> Any:
        from selenium.webdriver.common.by import By

        return self.page.find_element(By.CSS_SELECTOR, selector)

    def all(self, selector: str) -> list[Any]:
        from selenium.webdriver.common.by import By

        return self.page.find_elements(By.CSS_SELECTOR, selector)

    def text(self, selector: str) -> str:
        return str(self.css(selector).text)

    def wait_css(self, selector: str, timeout: float = 10) -> Any:
        return self.wait(lambda: self.all(selector)[0] if self.all(selector) else None, timeout, selector)

    def wait_text(self, selector: str, needle: str, timeout: float = 10) -> str:
        def found() -> str | None:
            elements = self.all(selector)
            return elements[0].text if elements and needle in elements[0].text else None

        return self.wait(found, timeout, f"{needle!r} in {selector}")

    def type(self, selector: str, text: str, *, clear: bool = True) -> Any:
        element = self.css(selector)
        if clear:
            element.clear()
        element.send_keys(text)
        return element

    def js(self, script: str, *args: Any) -> Any:
        return self.page.execute_script(script, *args)
