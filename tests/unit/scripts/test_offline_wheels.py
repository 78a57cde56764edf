"""The offline route to a GPU host: which wheels go, which stay."""

from pathlib import Path

import pytest

from scripts import offline_wheels as ow


def _folder(tmp_path, names):
    for name in names:
        (tmp_path / name).write_bytes(b"")
    return tmp_path


def test_only_projects_the_host_lacks_are_installed(tmp_path):
    folder = _folder(tmp_path, [
        "numpy-2.1.0-cp312-cp312-manylinux_2_17_x86_64.whl",
        "jupyter_client-8.10.0-py3-none-any.whl",
        "PyYAML-6.0.3-cp312-cp312-manylinux2014_x86_64.whl"])
    # names compare canonically: jupyter_client is jupyter-client
    chosen = ow.wheels_to_install(folder, {"numpy", "jupyter-client"})
    assert [w.name for w in chosen] == [
        "PyYAML-6.0.3-cp312-cp312-manylinux2014_x86_64.whl"]


def test_an_empty_folder_says_how_to_fill_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="offline_wheels.py "
                                                "download"):
        ow.wheels_to_install(tmp_path, set())


def test_nothing_to_install_prints_the_export_line(tmp_path):
    # this interpreter has numpy: its wheel is skipped, pip is not run
    folder = _folder(tmp_path, ["numpy-2.1.0-py3-none-any.whl"])
    line = ow.install(folder, tmp_path / "site")
    assert line.startswith(f"export PYTHONPATH={tmp_path / 'site'}")
    assert not (tmp_path / "site").exists()


def test_download_asks_for_binary_wheels_for_the_hosts_python():
    command = ow.download_command(Path("w"), "3.12")
    assert command[command.index("--python-version") + 1] == "3.12"
    assert ":all:" in command and "--platform" in command
    assert set(ow.TOOLS) <= set(command)
    with pytest.raises(ValueError, match="looks like '3.12'"):
        ow.download_command(Path("w"), "py3")


def _wheel(folder, name, members):
    import zipfile
    with zipfile.ZipFile(folder / name, "w") as zf:
        for member in members:
            zf.writestr(member, b"")
    return folder / name


def test_prune_drops_what_the_host_has_and_refuses_windows_wheels(tmp_path):
    _wheel(tmp_path, "numpy-2.1.0-cp312-cp312-manylinux_2_17_x86_64.whl",
           ["numpy/_core.so"])
    _wheel(tmp_path, "nbval-0.11.0-py2.py3-none-any.whl", ["nbval/a.py"])
    freeze = tmp_path / "host.txt"
    freeze.write_text("# the host\nnumpy==2.5.2\nPyYAML==6.0.3\n")
    _wheel(tmp_path, "duckdb-2.0.1-cp312-abi3-manylinux_2_27_x86_64.whl",
           ["duckdb/a.so"])
    removed = ow.prune(tmp_path, ow.read_names(freeze))
    assert [w.name for w in removed] == [
        "duckdb-2.0.1-cp312-abi3-manylinux_2_27_x86_64.whl",
        "numpy-2.1.0-cp312-cp312-manylinux_2_17_x86_64.whl"]
    assert [w.name for w in tmp_path.glob("*.whl")] == [
        "nbval-0.11.0-py2.py3-none-any.whl"]
    # xprof 2.22.1's platform-free cp312 wheel: Windows binaries only
    _wheel(tmp_path, "xprof-2.22.1-cp312-none-any.whl",
           ["xprof/convert/_pywrap_profiler_plugin.pyd"])
    with pytest.raises(ValueError, match="Windows binaries only"):
        ow.prune(tmp_path, set())


def test_the_download_names_the_tag_xprof_needs():
    command = ow.download_command(Path(".whl"), "3.12")
    assert "manylinux_2_27_x86_64" in command
