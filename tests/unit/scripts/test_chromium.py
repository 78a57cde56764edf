"""Finding a browser for the book's browser test (scripts/chromium.py) on
any machine, and saying how to install one where there is none."""

import stat

import pytest

from scripts import chromium


def _executable(folder, name):
    path = folder / name
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.fixture
def bare_machine(tmp_path, monkeypatch):
    """A Linux machine whose PATH is one empty folder."""
    monkeypatch.setenv("PATH", str(tmp_path))
    for name in (chromium.BROWSER_VARIABLE, chromium.DRIVER_VARIABLE,
                 chromium.REQUIRED_VARIABLE):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(chromium.platform, "system", lambda: "Linux")
    monkeypatch.setattr(chromium, "machine_kind", lambda: "fedora")
    return tmp_path


def test_chrome_and_its_driver_are_found_on_path(bare_machine):
    browser = _executable(bare_machine, "google-chrome")
    driver = _executable(bare_machine, "chromedriver")
    assert chromium.find() == (browser, driver)


def test_debians_chromium_comes_before_chrome(bare_machine):
    _executable(bare_machine, "google-chrome")
    browser = _executable(bare_machine, "chromium")
    _executable(bare_machine, "chromedriver")
    assert chromium.find()[0] == browser


def test_a_missing_driver_is_named_with_this_machines_install_command(
        bare_machine):
    _executable(bare_machine, "chromium")
    with pytest.raises(chromium.Missing) as missing:
        chromium.find()
    message = str(missing.value)
    assert "No ChromeDriver" in message and "Chromium (or" not in message
    assert "dnf install chromium chromedriver" in message
    assert chromium.DRIVER_VARIABLE in message


def test_the_variables_name_a_browser_anywhere(bare_machine, tmp_path_factory,
                                              monkeypatch):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    browser = _executable(elsewhere, "my-chrome")
    driver = _executable(elsewhere, "my-driver")
    monkeypatch.setenv(chromium.BROWSER_VARIABLE, browser)
    monkeypatch.setenv(chromium.DRIVER_VARIABLE, driver)
    assert chromium.find() == (browser, driver)
    monkeypatch.setenv(chromium.DRIVER_VARIABLE, str(elsewhere / "gone"))
    with pytest.raises(chromium.Missing, match="BOOK_CHROMEDRIVER is .*"
                       "not a file"):
        chromium.find()


def test_each_kind_of_machine_gets_its_own_command():
    assert "apt-get install chromium chromium-driver" in \
        chromium.install_hint("debian")
    assert "brew install" in chromium.install_hint("darwin")
    assert "chrome-for-testing" in chromium.install_hint("windows")
    with pytest.raises(ValueError, match="kind must be one of"):
        chromium.install_hint("plan9")


def test_ci_requires_the_browser(monkeypatch):
    monkeypatch.delenv(chromium.REQUIRED_VARIABLE, raising=False)
    assert not chromium.required()
    monkeypatch.setenv(chromium.REQUIRED_VARIABLE, "1")
    assert chromium.required()
