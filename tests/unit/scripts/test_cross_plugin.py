"""`make install` keeps the cross-compiling plugin in step with jaxlib."""

from scripts import cross_plugin


def _fake_install(calls, works=True):
    def install(folder, version):
        calls.append(version)
        if works:
            (folder / f"jax_cuda12_plugin-{version}.dist-info").mkdir(
                parents=True)
        return works
    return install


def test_a_matching_plugin_is_kept(tmp_path):
    (tmp_path / "jax_cuda12_plugin-0.10.2.dist-info").mkdir()
    calls = []
    assert cross_plugin.ensure(tmp_path, "0.10.2",
                               _fake_install(calls)) == "kept"
    assert calls == []


def test_a_stale_plugin_is_replaced(tmp_path):
    folder = tmp_path / "cross"
    (folder / "jax_cuda12_plugin-0.10.2.dist-info").mkdir(parents=True)
    calls = []
    assert cross_plugin.ensure(folder, "0.12.0.1",
                               _fake_install(calls)) == "installed"
    assert calls == ["0.12.0.1"]
    assert cross_plugin.installed_version(folder) == "0.12.0.1"
    # the old version is gone, not left beside the new one
    assert len(list(folder.glob("jax_cuda12_plugin-*"))) == 1


def test_no_wheel_for_this_machine_leaves_no_folder(tmp_path):
    folder = tmp_path / "cross"
    (folder / "jax_cuda12_plugin-0.10.2.dist-info").mkdir(parents=True)
    assert cross_plugin.ensure(folder, "0.12.0.1",
                               _fake_install([], works=False)) \
        == "unavailable"
    assert not folder.exists()


def test_the_script_says_how_to_call_it(capsys):
    assert cross_plugin.main([]) == 2
    assert "Usage" in capsys.readouterr().err
