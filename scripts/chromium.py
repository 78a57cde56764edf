"""Find a headless Chromium (or Chrome) and its ChromeDriver, on Linux,
macOS or Windows, for the browser test of the built book
(`scripts/browse_book.py`).

Nothing here installs anything: where the browser or its driver is
missing, `find` raises `Missing`, whose message names the command that
installs them on this kind of machine. The suite then skips its browser
tests with that message, unless ``BOOK_REQUIRE_BROWSER`` is set (CI sets
it, after installing them itself), in which case they fail.
"""

from __future__ import annotations

import os
import platform
import shutil
from pathlib import Path

# Set to a path to use that browser or driver instead of searching.
BROWSER_VARIABLE = "BOOK_CHROMIUM"
DRIVER_VARIABLE = "BOOK_CHROMEDRIVER"
# Set (to anything) where a missing browser must fail the tests, not
# skip them: in CI.
REQUIRED_VARIABLE = "BOOK_REQUIRE_BROWSER"

# The names the browser goes by on PATH: Debian's and Fedora's Chromium,
# Ubuntu's older package, Google's Chrome on Linux and Windows.
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome",
                 "google-chrome-stable", "chrome")
# Where macOS and Windows keep the browsers, which are not on PATH there.
INSTALLED_BROWSERS = {
    "Darwin": ("/Applications/Chromium.app/Contents/MacOS/Chromium",
               "/Applications/Google Chrome.app/Contents/MacOS/"
               "Google Chrome"),
    "Windows": (r"C:\Program Files\Google\Chrome\Application\chrome.exe",
                r"C:\Program Files (x86)\Google\Chrome\Application"
                r"\chrome.exe"),
}
# How to install both, by the machine's kind; ChromeDriver must match
# the browser's major version, which each of these takes care of.
INSTALL = {
    "debian": "sudo apt-get install chromium chromium-driver "
              "(Debian and Ubuntu; `make browser` runs it)",
    "fedora": "sudo dnf install chromium chromedriver (Fedora; on RHEL "
              "and its rebuilds, from EPEL)",
    "darwin": "brew install --cask google-chrome chromedriver (macOS "
              "with Homebrew; the first time, allow chromedriver in "
              "System Settings, Privacy & Security)",
    "windows": "install Google Chrome, download the ChromeDriver of the "
               "same version from "
               "https://googlechromelabs.github.io/chrome-for-testing/ "
               f"and set {DRIVER_VARIABLE} to its path (and "
               f"{BROWSER_VARIABLE} to chrome.exe's if it is not in "
               "Program Files)",
}


class Missing(RuntimeError):
    """No browser or no driver on this machine; the message says how to
    install them."""


def machine_kind() -> str:
    """``'darwin'``, ``'windows'``, ``'fedora'`` (Fedora, RHEL and their
    rebuilds) or ``'debian'``: any other Linux is given Debian's command,
    whose package names its own package manager may spell differently."""
    system = platform.system().lower()
    if system in ("darwin", "windows"):
        return system
    release = Path("/etc/os-release")
    text = release.read_text() if release.exists() else ""
    fedora_like = any(name in text.lower()
                      for name in ("fedora", "rhel", "centos"))
    return "fedora" if fedora_like else "debian"


def install_hint(kind: str | None = None) -> str:
    """The command that installs Chromium and ChromeDriver on a machine of
    ``kind`` (default: this one's), in words."""
    kind = kind or machine_kind()
    if kind not in INSTALL:
        raise ValueError(f"kind must be one of {sorted(INSTALL)}; "
                         f"got {kind!r}.")
    return INSTALL[kind]


def _chosen(variable: str) -> str | None:
    """The path ``variable`` names, or None where it is not set.

    Raises:
        Missing: it names no file.
    """
    chosen = os.environ.get(variable)
    if chosen and not Path(chosen).is_file():
        raise Missing(f"{variable} is {chosen!r}, which is not a file: set "
                      "it to the path of the program, or unset it to "
                      "search PATH.")
    return chosen or None


def _browser() -> str | None:
    chosen = _chosen(BROWSER_VARIABLE)
    if chosen:
        return chosen
    on_path = (shutil.which(name) for name in BROWSER_NAMES)
    found = next((path for path in on_path if path), None)
    installed = INSTALLED_BROWSERS.get(platform.system(), ())
    return found or next((p for p in installed if Path(p).is_file()), None)


def _driver() -> str | None:
    return _chosen(DRIVER_VARIABLE) or shutil.which("chromedriver")


def find() -> tuple[str, str]:
    """``(browser, driver)``: the paths of a Chromium or Chrome and of
    ChromeDriver.

    ``BOOK_CHROMIUM`` and ``BOOK_CHROMEDRIVER`` name them outright;
    otherwise they are looked for on PATH (and, for the browser, in
    macOS's Applications folder).

    Raises:
        Missing: either is not found; the message says which, and the
            command that installs both here.
    """
    browser, driver = _browser(), _driver()
    if browser is None or driver is None:
        missing = [name for name, path in (("Chromium (or Chrome)", browser),
                                           ("ChromeDriver", driver))
                   if path is None]
        raise Missing(f"No {' and no '.join(missing)} on this machine, so "
                      f"the built book cannot be read in a browser. To "
                      f"install them: {install_hint()}. Or set "
                      f"{BROWSER_VARIABLE} and {DRIVER_VARIABLE} to their "
                      f"paths.")
    return browser, driver


def required() -> bool:
    """Whether a missing browser fails the tests instead of skipping them
    (``BOOK_REQUIRE_BROWSER`` is set, as in CI)."""
    return bool(os.environ.get(REQUIRED_VARIABLE))
