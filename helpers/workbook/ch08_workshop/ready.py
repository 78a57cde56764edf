"""A participant's kit check: one cell that says "ready" or exactly what is
missing, on Colab or on a laptop (Linux, macOS or Windows).

Each check is small and independent: the Python and JAX versions, the
packages the chapters import, JupyterLab where the notebooks are opened
locally, a first compiled call, and which device JAX found. A check that
fails says what to run; a GPU is reported, never required.

Example:
    >>> from helpers.workbook.ch08_workshop import ready
    >>> kit = ready.check()          # doctest: +SKIP
    >>> kit                          # doctest: +SKIP
    Ready: every check passed (device: cpu).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys

from helpers.measuring import machine

PYTHON_MINIMUM = (3, 11)  # pyproject.toml's requires-python
# The packages the chapters import, beyond jax (import name: pip name).
CHAPTER_PACKAGES = {"numpy": "numpy", "scipy": "scipy", "pandas": "pandas",
                    "matplotlib": "matplotlib", "ipywidgets": "ipywidgets",
                    "jupytext": "jupytext", "xprof": "xprof"}
INSTALL = "pip install -e \".[workshop]\""  # from the book's folder


@dataclasses.dataclass(frozen=True)
class Item:
    """One line of the kit check: what was checked, whether it is fine,
    what was found, and what to run when it is not."""

    what: str
    ok: bool
    found: str
    fix: str = ""


@dataclasses.dataclass(frozen=True)
class Kit:
    """Every item of the kit check; ``ready`` when all passed."""

    items: tuple[Item, ...]
    device: str

    @property
    def ready(self) -> bool:
        """True when every item passed."""
        return all(item.ok for item in self.items)

    def text(self) -> str:
        """"Ready" in one line, or each missing thing with its fix."""
        if self.ready:
            return f"Ready: every check passed (device: {self.device})."
        lines = ["Not ready yet. Fix these, then run this cell again:"]
        lines += [f"- {item.what}: {item.found}. {item.fix}"
                  for item in self.items if not item.ok]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        import html
        colour = "#1a7f37" if self.ready else "#b35900"
        return (f"<pre style='color:{colour}'>{html.escape(self.text())}"
                "</pre>")


def _python(version: tuple[int, ...]) -> Item:
    shown = ".".join(map(str, version[:3]))
    needed = ".".join(map(str, PYTHON_MINIMUM))
    return Item("Python", tuple(version[:2]) >= PYTHON_MINIMUM,
                f"{shown} (the book needs {needed} or newer)",
                f"Install Python {needed} or newer from python.org, make a "
                f"new environment with it and run `{INSTALL}` there.")


def _jax() -> Item:
    if importlib.util.find_spec("jax") is None:
        return Item("JAX", False, "not installed", f"Run `{INSTALL}`.")
    problem = machine.jax_version_problem()
    import jax
    return Item("JAX", problem is None, jax.__version__, problem or "")


def _packages(packages: dict[str, str]) -> Item:
    missing = machine.missing_packages(packages)
    return Item("the chapters' packages", not missing,
                "missing " + ", ".join(missing) if missing else "all found",
                f"Run `{INSTALL}`." if missing else "")


def _notebooks() -> Item:
    # Colab opens the notebooks itself; a laptop needs JupyterLab
    if machine.in_colab():
        return Item("a notebook app", True, "Colab")
    found = importlib.util.find_spec("jupyterlab") is not None
    return Item("JupyterLab", found, "installed" if found else "missing",
                "" if found else f"Run `{INSTALL}`, then "
                "`jupyter lab chapters` in the book's folder.")


def _first_call() -> tuple[Item, str]:
    try:
        import jax
        import jax.numpy as jnp
        value = jax.jit(lambda x: (x * x).sum())(jnp.arange(4.0))
        right = float(value) == 14.0
        device = jax.devices()[0].platform
    except Exception as err:  # whatever breaks is what to report
        return Item("a first compiled call", False,
                    f"{type(err).__name__}: {err}",
                    "Restart the kernel and run this cell again; if it "
                    "still fails, show this line to the facilitator."), "?"
    return Item("a first compiled call", right,
                "ran" if right else f"returned {value}, not 14",
                "" if right else "Show this line to the facilitator."), \
        device


def check(packages: dict[str, str] | None = None,
          python: tuple[int, ...] | None = None) -> Kit:
    """Run every check and return the `Kit`, which displays as "ready" or
    as the list of what is missing, each with the command that fixes it.

    Args:
        packages: ``{import name: pip name}`` to look for; by default
            `CHAPTER_PACKAGES`.
        python: the Python version to judge; by default the running one.
    """
    items = [_python(python or sys.version_info[:3]),
             _packages(CHAPTER_PACKAGES if packages is None else packages),
             _notebooks()]
    jax_item = _jax()
    items.append(jax_item)
    device = "?"
    if jax_item.ok:
        first, device = _first_call()
        items.append(first)
    return Kit(tuple(items), device)


def device_note(kit: Kit) -> str:
    """What the device means for the day: a GPU's timed criteria are
    graded; on a CPU they say what they need and everything else runs."""
    from helpers.xla import crosscompile
    if kit.device == "gpu":
        note = "A GPU: the time targets are graded on it."
    else:
        note = ("No GPU: every exercise runs; its time targets, where it "
                "has any, say they need a GPU instead of passing.")
    missing = crosscompile.why_unavailable()
    if missing:
        note += (" The checks that compile for an H100 (exercises 6.1 "
                 "and 6.2, and a criterion of 2.1) say they are not "
                 f"graded here: {missing}.")
    return note
