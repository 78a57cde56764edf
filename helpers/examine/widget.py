"""A workshop box for `examine`: paste a function of your own, press the
button, read what the checker finds and which section explains it.

The code in the box defines ``function`` and ``args`` (a tuple of example
arguments). `run_code` does the work, so it can be tested without a
front end; `examine_box` wraps it in ipywidgets, and in the static book
shows the sample's report instead.
"""

from __future__ import annotations

from typing import Any

from helpers.examine.checker import ExamineError, examine
from helpers.examine.findings import Report

SAMPLE = '''import jax
import jax.numpy as jnp


def function(x, steps):
    return jax.lax.fori_loop(0, steps, lambda i, c: jnp.sin(c) + 1.0, x)


args = (jnp.ones(256), 1000)
'''


def run_code(code: str, gpu: bool = True) -> Report:
    """Run ``code`` and examine the ``function`` it defines on its
    ``args``.

    Raises:
        ExamineError: the code raises, or does not define ``function``
            and a tuple ``args``; the message says which.
    """
    namespace: dict[str, Any] = {}
    try:
        exec(compile(code, "<your code>", "exec"), namespace)
    except Exception as error:  # a learner's code can raise anything
        raise ExamineError(f"your code raised {type(error).__name__}: "
                           f"{error}") from error
    function, args = namespace.get("function"), namespace.get("args")
    if not callable(function):
        raise ExamineError("define the function to examine as `function` "
                           "(def function(x): ...).")
    if not isinstance(args, tuple):
        raise ExamineError("define its example arguments as a tuple "
                           "`args`, e.g. args = (jnp.ones(8),).")
    return examine(function, *args, gpu=gpu)


def examine_box(code: str = SAMPLE) -> Any:
    """A text box holding ``code``, a button, and the report below them.

    Raises:
        ImportError: ipywidgets is not installed.
    """
    import ipywidgets as widgets
    from IPython.display import display

    from helpers.page.widgets import with_static_view

    box = widgets.Textarea(value=code, layout=widgets.Layout(
        width="100%", height="220px"))
    button = widgets.Button(description="examine", button_style="primary")
    output = widgets.Output()

    def on_click(_: Any) -> None:
        output.clear_output()
        with output:
            try:
                display(run_code(box.value))
            except ExamineError as error:
                print(f"examine: {error}")

    button.on_click(on_click)
    sample = run_code(code)
    return with_static_view(widgets.VBox([box, button, output]),
                            sample._repr_html_())
