"""The book's widgets on ipywidgets 7.7.1, which Colab images have long
shipped: each displays its live view and the static HTML beside it,
instead of failing for want of ipywidgets 8's `_repr_mimebundle_`.

ipywidgets 7.7.1 is pure Python: its wheel (and ipython_genutils, which it
imports) is fetched from the package index into a folder that a child
process puts first on its path, so the suite's own ipywidgets is untouched.
"""

import subprocess
import sys
import textwrap
import zipfile

import pytest

from book_paths import ROOT

pytestmark = pytest.mark.slow

WHEELS = ("ipywidgets==7.7.1", "ipython_genutils==0.2.0")

CHILD = textwrap.dedent("""
    import IPython.display
    import ipywidgets
    import pandas as pd

    assert ipywidgets.__version__ == "7.7.1", ipywidgets.__version__
    shown = []
    IPython.display.display = lambda *args, **kwargs: shown.append(args[0])

    from helpers.page import widgets
    from helpers.workbook.ch00_how_to_use import exercises

    table = pd.DataFrame({"K": [25, 35], "ms": [3.0, 1.0]})
    views = {"explore": widgets.explore(table, ["K"], ["ms"]),
             "hint panel": exercises.root_mean_square.check(
                 lambda x: x.mean()).panel()}
    for name, view in views.items():
        view._ipython_display_()
        bundle = shown.pop()
        assert "text/html" in bundle, (name, sorted(bundle))
        assert "application/vnd.jupyter.widget-view+json" in bundle, name
        print(name, "ok")
""")


@pytest.fixture(scope="module")
def ipywidgets_7(tmp_path_factory):
    """A folder holding ipywidgets 7.7.1 and ipython_genutils, unpacked."""
    wheels = tmp_path_factory.mktemp("wheels")
    fetched = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q",
         "-d", str(wheels), *WHEELS], capture_output=True, text=True)
    if fetched.returncode != 0:
        pytest.skip("the package index is out of reach: "
                    + fetched.stderr.strip().splitlines()[-1])
    folder = tmp_path_factory.mktemp("ipywidgets7")
    for wheel in wheels.glob("*.whl"):
        zipfile.ZipFile(wheel).extractall(folder)
    return folder


def test_every_widget_shows_its_static_view_on_ipywidgets_7(ipywidgets_7):
    root = ROOT
    ran = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=root, capture_output=True,
        text=True, timeout=300,
        env={"PYTHONPATH": f"{ipywidgets_7}:{root}", "PATH": "/usr/bin:/bin",
             "JAX_PLATFORMS": "cpu", "HOME": str(ipywidgets_7)})
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.split() == ["explore", "ok", "hint", "panel", "ok"]
