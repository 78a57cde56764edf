"""MathJax served with the book, so formulas render without a network.

Sphinx loads MathJax from a CDN by default; a reader offline (a workshop
room, a laptop on a train) then sees raw ``\\(2n^3\\)``. The
``jupyter-server-mathjax`` package ships MathJax 2.7's files: this
extension copies them into the built book (``_static/mathjax``) and
points Sphinx at them, with MathJax 2's configuration for the inline and
display math MyST writes.
"""

import shutil
from pathlib import Path

import jupyter_server_mathjax

SOURCE = Path(jupyter_server_mathjax.__file__).parent / "static"
TARGET = "mathjax"  # under the build's _static
# MyST and MyST-NB mark the math MathJax should typeset with these classes.
MATHJAX2_CONFIG = {
    "tex2jax": {"inlineMath": [["\\(", "\\)"]],
                "displayMath": [["\\[", "\\]"]],
                "processRefs": False, "processEnvironments": False,
                # MyST-NB marks a notebook's page tex2jax_ignore, and its
                # math with these classes
                "processClass": "tex2jax_process|mathjax_process|math|"
                                "output_area"},
    "messageStyle": "none",
    # the package ships the STIX web fonts only
    "HTML-CSS": {"availableFonts": [], "preferredFont": None,
                 "webFont": "STIX-Web", "imageFont": None},
}


def _configure(app, config):
    config.mathjax_path = (f"{TARGET}/MathJax.js"
                          "?config=TeX-AMS-MML_HTMLorMML-full")
    config.mathjax2_config = MATHJAX2_CONFIG
    config.mathjax3_config = None


def _copy(app, exception):
    if exception is None and app.builder.format == "html":
        target = Path(app.outdir) / "_static" / TARGET
        if not (target / "MathJax.js").exists():
            shutil.copytree(SOURCE, target, dirs_exist_ok=True)


def setup(app):
    """Serve MathJax from the built book's own files."""
    app.connect("config-inited", _configure, priority=900)
    app.connect("build-finished", _copy)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
