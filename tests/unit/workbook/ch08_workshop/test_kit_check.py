"""The participant's kit check says "Ready" only when everything is in
place, and otherwise names each missing thing with the command that fixes
it; the workshop extra brings JupyterLab, which a laptop needs."""

from __future__ import annotations

import importlib.util
import tomllib

from helpers.workbook.ch08_workshop import ready

from book_paths import ROOT


def test_this_machine_is_ready():
    kit = ready.check()
    assert kit.ready, kit.text()
    assert kit.text().startswith("Ready: every check passed (device: ")


def test_a_missing_package_and_an_old_python_are_named_with_their_fix():
    kit = ready.check(packages={"no_such_module": "no-such-package"},
                      python=(3, 9, 1))
    assert not kit.ready
    text = kit.text()
    assert text.startswith("Not ready yet.")
    assert "- Python: 3.9.1 (the book needs 3.11 or newer)" in text
    assert "missing no-such-package. Run `pip install -e \".[workshop]\"`" \
        in text
    # what passed is not listed
    assert "JAX" not in text and "first compiled call" not in text


def test_a_laptop_without_jupyterlab_is_told_to_install_it(monkeypatch):
    real = importlib.util.find_spec

    def without_jupyterlab(name, *args):
        return None if name == "jupyterlab" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", without_jupyterlab)
    kit = ready.check()
    assert "- JupyterLab: missing. Run `pip install -e \".[workshop]\"`, " \
        "then `jupyter lab chapters`" in kit.text()


def test_colab_needs_no_jupyterlab(monkeypatch):
    monkeypatch.setenv("COLAB_RELEASE_TAG", "test")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None
                        if name == "jupyterlab" else real(name, *a))
    kit = ready.check()
    assert kit.ready, kit.text()


def test_the_workshop_extra_brings_jupyterlab_and_the_kit_checks_it():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extra = project["optional-dependencies"]["workshop"]
    assert any(req.startswith("jupyterlab") for req in extra)
    # every package the check looks for is one the extra installs
    installed = " ".join(project["dependencies"] + extra)
    for pip_name in ready.CHAPTER_PACKAGES.values():
        assert pip_name in installed, pip_name


def test_the_kit_checks_the_python_the_package_requires():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    needed = ".".join(map(str, ready.PYTHON_MINIMUM))
    assert project["requires-python"] == f">={needed}"


def test_the_device_note_says_which_checks_need_the_cuda_plugin(
        monkeypatch):
    from helpers.xla import crosscompile
    kit = ready.Kit((), "cpu")
    monkeypatch.setattr(crosscompile, "why_unavailable",
                        lambda: "the CUDA plugin is not in /x: pip install y")
    note = ready.device_note(kit)
    assert note.startswith("No GPU: every exercise runs")
    assert note.endswith("(exercises 6.1 and 6.2, and a criterion of 2.1) "
                         "say they are not graded here: the CUDA plugin is "
                         "not in /x: pip install y.")
    monkeypatch.setattr(crosscompile, "why_unavailable", lambda: None)
    assert "plugin" not in ready.device_note(ready.Kit((), "gpu"))
