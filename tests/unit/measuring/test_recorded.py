import json

import numpy as np
import pytest

from helpers.measuring import machine, recorded, results
from helpers.measuring.bench import Timing

from book_paths import RECORDED
from made_up import H100_PROVENANCE as GPU


@pytest.fixture(autouse=True)
def tmp_recorded(tmp_path, monkeypatch):
    monkeypatch.setenv("BOOK_RECORDED_DIR", str(tmp_path))
    return tmp_path


def test_save_then_load_roundtrip(tmp_recorded):
    data = {"gbps": np.float32(3.5), "sizes": np.arange(3),
            "timing": Timing("t", (1.0, 2.0))}
    path = recorded.save("01_measuring/copy", data, provenance=GPU)
    assert path == tmp_recorded / "nvidia-h100-80gb-hbm3" / \
        "01_measuring" / "copy.json"
    record = recorded.load("01_measuring/copy")
    assert record["provenance"] == GPU
    assert record["data"]["sizes"] == [0, 1, 2]
    assert Timing.from_dict(record["data"]["timing"]).median == 1.5


def test_missing_recording_names_itself():
    with pytest.raises(recorded.MissingRecording,
                       match="no recording '01_measuring/nope'.*make record"):
        recorded.load("01_measuring/nope")


@pytest.mark.parametrize("name", ["copy", "1_x/copy", "01_measuring/Copy",
                                  "01_measuring/a/b", 3])
def test_bad_names_are_refused(name):
    with pytest.raises(ValueError, match="must look like"):
        recorded.path_for(name)


def test_provenance_is_required():
    with pytest.raises(ValueError, match="lacks"):
        recorded.save("01_measuring/x", {}, provenance={"device": "x"})


def test_unserialisable_data_is_refused():
    with pytest.raises(TypeError, match="cannot record a object"):
        recorded.save("01_measuring/x", {"a": object()}, provenance=GPU)


@pytest.mark.parametrize("content, message", [
    ("not json", "not valid JSON"),
    ('{"schema": 99}', "schema-1"),
    ('{"schema": 1, "name": "01_measuring/x"}', "lacks the key"),
    ('{"schema": 1, "name": "01_measuring/y", "provenance": {}, '
     '"data": 1}', "holds '01_measuring/y'"),
])
def test_corrupt_recordings_are_refused(tmp_recorded, content, message):
    path = recorded.path_for("01_measuring/x")
    path.parent.mkdir(parents=True)
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        recorded.load("01_measuring/x")


def test_live_or_recorded_on_cpu_loads_the_recording():
    recorded.save("01_measuring/copy", {"gbps": 3000.0}, provenance=GPU)
    calls = []
    result = results.live_or_recorded("01_measuring/copy",
                                       lambda: calls.append(1))
    assert calls == [], "must not measure without a GPU"
    assert result.source == "recorded" and result.available
    assert result.data == {"gbps": 3000.0}
    assert "recorded: NVIDIA H100 80GB HBM3" in result.label


def test_live_or_recorded_says_when_nothing_exists():
    result = results.live_or_recorded("01_measuring/none", lambda: 1)
    assert result.source == "missing" and not result.available
    assert result.data is None
    assert "no recording of '01_measuring/none' yet" in result.label


def test_live_or_recorded_measures_and_records_on_a_gpu(monkeypatch):
    monkeypatch.setattr(machine, "on_gpu", lambda: True)
    monkeypatch.setattr(machine, "describe", lambda: GPU)
    monkeypatch.setenv("BOOK_RECORD", "1")
    result = results.live_or_recorded(
        "01_measuring/live", lambda: {"t": Timing("t", (1.0,))})
    assert result.source == "live"
    assert result.data == {"t": {"name": "t", "times": [1.0],
                                 "compile_s": None}}
    assert recorded.load("01_measuring/live")["data"] == result.data


def test_live_without_record_flag_writes_nothing(monkeypatch, tmp_recorded):
    monkeypatch.setattr(machine, "on_gpu", lambda: True)
    monkeypatch.setattr(machine, "describe", lambda: GPU)
    monkeypatch.delenv("BOOK_RECORD", raising=False)
    results.live_or_recorded("01_measuring/live", lambda: 1)
    assert not list(tmp_recorded.rglob("*.json"))


def test_saved_file_is_plain_json(tmp_recorded):
    path = recorded.save("01_measuring/x", [1, 2], provenance=GPU)
    assert json.loads(path.read_text())["schema"] == recorded.SCHEMA


def test_inventory_lists_each_result_with_its_provenance(tmp_recorded):
    assert recorded.inventory().empty
    recorded.save("01_measuring/copy", {"gbps": 1.0}, provenance=GPU)
    table = recorded.inventory()
    assert table["result"].tolist() == ["01_measuring/copy"]
    assert table.loc[0, "device"] == GPU["device"]
    assert table.loc[0, "device folder"] == "nvidia-h100-80gb-hbm3"


H100_PROFILE = (RECORDED /
                "nvidia-h100-80gb-hbm3" / "04_profiling" / "profile")


def test_keep_profile_keeps_a_gpu_profile_beside_the_recordings(
        monkeypatch, tmp_recorded):
    """What a GPU run keeps (here from the H100 profile chapter 4
    recorded): device events and a gzipped xplane, read back by
    helpers.profiler.trace and XProf from the recordings' folder."""
    pytest.importorskip("xprof")
    from helpers.profiler import trace, xplanes, xprof_tables

    monkeypatch.delenv("BOOK_RECORD", raising=False)
    assert recorded.keep_profile("01_measuring/profile", H100_PROFILE) \
        is None
    monkeypatch.setattr(machine, "on_gpu", lambda: True)
    monkeypatch.setattr(machine, "describe", lambda: GPU)
    monkeypatch.setenv("BOOK_RECORD", "1")
    kept = recorded.keep_profile("01_measuring/profile", H100_PROFILE)
    assert kept == recorded.profile_folder("01_measuring/profile") == \
        tmp_recorded / "nvidia-h100-80gb-hbm3" / "01_measuring" / "profile"
    assert [p.name for p in xplanes.xplane_files(kept)] == \
        ["vm.xplane.pb.gz"]
    assert len(trace.load(kept)) == len(trace.load(H100_PROFILE))
    assert xprof_tables.kernel_totals(kept) == \
        xprof_tables.kernel_totals(H100_PROFILE)


def test_reference_is_the_recording_on_every_machine(monkeypatch):
    recorded.save("01_measuring/copy", {"gbps": 3000.0}, provenance=GPU)
    monkeypatch.setattr(machine, "on_gpu", lambda: True)  # even on a GPU
    result = results.reference("01_measuring/copy")
    assert result.source == "recorded" and result.data == {"gbps": 3000.0}
    assert results.reference("01_measuring/none").source == "missing"


def test_narrated_without_a_gpu_quotes_the_recording_and_shows_no_yours():
    recorded.save("01_measuring/copy", {"gbps": 3000.0}, provenance=GPU)
    story = results.narrated("01_measuring/copy", lambda: {"gbps": 1.0})
    assert story.reference.data == {"gbps": 3000.0}
    assert story.here.source == "recorded" and story.yours is None


def test_narrated_in_a_dry_run_quotes_itself_as_the_gpu_will(monkeypatch):
    recorded.save("01_measuring/copy", {"gbps": 3000.0}, provenance=GPU)
    monkeypatch.setenv("BOOK_DRY_RUN", "1")
    story = results.narrated("01_measuring/copy", lambda: {"gbps": 1.0})
    assert story.here.source == "dry run" and story.here.data["gbps"] == 1
    assert story.reference is story.here and story.quotes_this_run
    assert story.yours is None


def test_narrated_on_another_gpu_shows_it_beside_the_reference(monkeypatch):
    recorded.save("01_measuring/copy", {"gbps": 3000.0}, provenance=GPU)
    t4 = {**GPU, "device": "Tesla T4", "compute_capability": "7.5"}
    monkeypatch.setattr(machine, "on_gpu", lambda: True)
    monkeypatch.setattr(machine, "describe", lambda: t4)
    monkeypatch.setenv("BOOK_RECORD", "1")  # records the T4's own folder
    story = results.narrated("01_measuring/copy", lambda: {"gbps": 300.0})
    assert story.reference.data == {"gbps": 3000.0}
    assert story.yours is not None and story.yours.device == "Tesla T4"


def test_recording_on_the_reference_gpu_makes_the_new_run_the_reference(
        monkeypatch):
    recorded.save("01_measuring/copy", {"gbps": 3000.0}, provenance=GPU)
    monkeypatch.setattr(machine, "on_gpu", lambda: True)
    monkeypatch.setattr(machine, "describe", lambda: GPU)
    monkeypatch.setenv("BOOK_RECORD", "1")
    story = results.narrated("01_measuring/copy", lambda: {"gbps": 3100.0})
    assert story.reference.data == {"gbps": 3100.0}
    assert story.yours is None
    monkeypatch.delenv("BOOK_RECORD")  # an H100 executing, not recording
    story = results.narrated("01_measuring/copy", lambda: {"gbps": 2900.0})
    assert story.reference.data == {"gbps": 2900.0}  # its page quotes it
    assert story.quotes_this_run and story.yours is None
    assert results.reference("01_measuring/copy").data == {"gbps": 3100.0}


def test_a_visit_writes_apart_and_reads_its_own_recordings_first(
        tmp_recorded, tmp_path_factory, monkeypatch):
    """A GPU visit saves into its staging folder (BOOK_RECORD_TO); the
    next chapter quotes what this visit recorded, else the checkout's."""
    recorded.save("01_measuring/summary", {"run": "before"}, provenance=GPU)
    recorded.save("02_fusion/sweep", {"run": "before"}, provenance=GPU)
    staging = tmp_path_factory.mktemp("staging")
    monkeypatch.setenv("BOOK_RECORD_TO", str(staging))
    path = recorded.save("01_measuring/summary", {"run": "this visit"},
                         provenance=GPU)
    assert path.is_relative_to(staging)
    assert results.reference("01_measuring/summary").data == {
        "run": "this visit"}
    assert results.reference("02_fusion/sweep").data == {"run": "before"}
    assert recorded.load("01_measuring/summary", "nvidia-h100-80gb-hbm3"
                         )["data"] == {"run": "this visit"}


def on(monkeypatch, provenance):
    """This process as if it ran on the GPU ``provenance`` names."""
    monkeypatch.setattr(machine, "on_gpu", lambda: True)
    monkeypatch.setattr(machine, "describe", lambda: provenance)
    monkeypatch.setattr(machine, "device_slug", lambda info=None:
                        "-".join(provenance["device"].lower().split()))


def test_a_recording_on_the_reference_gpu_quotes_this_run(monkeypatch):
    recorded.save("01_measuring/summary", {"copy": "last visit"},
                  provenance=GPU)
    on(monkeypatch, GPU)
    monkeypatch.setenv("BOOK_RECORD", "1")
    run = results.Recording("01_measuring/summary")
    run.add(copy={"gbps": np.float64(3005.0)})
    assert run.quoted.source == "live"
    assert run.quoted.data == {"copy": {"gbps": 3005.0}}
    run.add(dispatch={"ms": 3.3})  # the next section
    assert set(run.quoted.data) == {"copy", "dispatch"}
    story = run.finish()
    assert story.reference.data == {"copy": {"gbps": 3005.0},
                                    "dispatch": {"ms": 3.3}}
    assert story.yours is None  # it recorded the reference itself


def test_a_recording_elsewhere_quotes_the_reference_gpu(monkeypatch):
    recorded.save("01_measuring/summary", {"copy": "stored"},
                  provenance=GPU)
    run = results.Recording("01_measuring/summary")  # this CPU
    run.add(copy={"gbps": 48.5})
    assert run.quoted.data == {"copy": "stored"}
    assert run.finish().here.data == {"copy": "stored"}
    h200 = {**GPU, "device": "NVIDIA H200"}
    on(monkeypatch, h200)
    run = results.Recording("01_measuring/summary")
    run.add(copy={"gbps": 4274.0})
    assert run.quoted.data == {"copy": "stored"}
    story = run.finish()  # no BOOK_RECORD: nothing saved
    assert story.yours.data == {"copy": {"gbps": 4274.0}}
    assert not (recorded.root() / "nvidia-h200").exists()


def test_a_dry_run_quotes_itself_as_the_gpu_will(monkeypatch):
    monkeypatch.setenv("BOOK_DRY_RUN", "1")
    run = results.Recording("01_measuring/summary")
    run.add(copy={"gbps": 48.5})
    assert run.quoted.source == "dry run"
    assert run.quoted.data == {"copy": {"gbps": 48.5}}
    assert run.finish().here.data == {"copy": {"gbps": 48.5}}
    assert not list(recorded.root().rglob("*.json"))  # saves nothing


def test_a_section_adds_only_what_can_be_recorded():
    run = results.Recording("01_measuring/summary")
    with pytest.raises(TypeError, match="cannot record a object"):
        run.add(copy=object())
    with pytest.raises(ValueError, match="Out of range float values"):
        run.add(copy=float("nan"))
