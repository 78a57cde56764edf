"""The GPU visit's runner, end to end on this machine: chapters executed
with recording on, an archive packed after each, unpacked and checked."""

import json
import tarfile

import nbformat
import pytest

from probe_chapter import probe
from scripts import gpu_visit

# The module fixture executes chapters in child kernels: seconds.
pytestmark = pytest.mark.slow

PROBE = probe('''\
from helpers.measuring import machine, recorded, results

recorded.save("90_probe/result", {"ok": 1})
fixture = recorded.path_for("90_probe/profile", machine.device_slug()
                             ).with_suffix("")
(fixture / "plugins").mkdir(parents=True)
(fixture / "plugins" / "h.xplane.pb").write_bytes(b"planes")
# the chapter's cells would ask:
# results.live_or_recorded("90_probe/result", f)''')
BROKEN = PROBE.replace("90_probe/result", "91_broken/result").replace(
    'recorded.save("91_broken/result", {"ok": 1})', 'raise RuntimeError("x")')
SHORT = PROBE.replace("90_probe", "92_short") + (
    '\n<!-- it also asks live_or_recorded("92_short/other", ...) -->\n')
# A chapter whose GPU data contradict a sentence before its last
# recording: the visit notes the claim and measures on.
CLAIMED = PROBE.replace("90_probe", "94_claimed").replace(
    '# the chapter\'s cells would ask:',
    'from helpers.page import claims\n'
    'claims.check(results.Result("94_claimed/result", "recorded", {}, {}),'
    ' "one is more than two", 1 > 2)\n'
    'recorded.save("94_claimed/later", {"ok": 2})\n'
    '# results.live_or_recorded("94_claimed/later", f)\n'
    '# the chapter\'s cells would ask:')


@pytest.fixture(scope="module")
def visit(tmp_path_factory):
    chapters = tmp_path_factory.mktemp("chapters")
    for name, text in (("90_probe", PROBE), ("91_broken", BROKEN),
                       ("92_short", SHORT), ("94_claimed", CLAIMED)):
        (chapters / f"{name}.md").write_text(text)
    out = tmp_path_factory.mktemp("out")
    log = gpu_visit.run(["90_probe", "91_broken", "92_short", "94_claimed",
                         "93_late"],
                        out, budget_s=300, chapters_dir=chapters,
                        times={"93_late": 10_000})
    return chapters, out, log


def test_each_chapter_is_logged_with_its_time(visit):
    _, out, log = visit
    status = {c["chapter"]: c["status"] for c in log["chapters"]}
    assert status["90_probe"] == "ok"
    assert status["91_broken"] == "failed"
    assert status["93_late"] == "skipped: would not fit"
    assert all(c["seconds"] >= 0 for c in log["chapters"])
    assert "RuntimeError" in log["chapters"][1]["output"]


def test_the_archive_holds_the_recordings_and_the_log(visit):
    _, out, _ = visit
    archive = out / gpu_visit.ARCHIVE
    assert archive.stat().st_size <= gpu_visit.ARCHIVE_LIMIT
    names = tarfile.open(archive).getnames()
    assert gpu_visit.LOG in names
    assert any(n.endswith("90_probe/result.json") for n in names)
    # a CPU keeps no page: only a GPU's execution is a page of the book
    assert not any(n.endswith(".ipynb") for n in names)


def staged(out, folder):
    """The archive unpacked into ``folder``, to change and pack again."""
    with tarfile.open(out / gpu_visit.ARCHIVE) as tar:
        tar.extractall(folder, filter="data")
    return folder


def with_page(staging, chapter, executor, folder=None):
    """The executed chapter kept as a page, as a GPU run keeps it (in its
    GPU's folder, or in ``folder``)."""
    from nbformat.v4 import new_code_cell, new_notebook

    from helpers.page import executions

    notebook = new_notebook(cells=[new_code_cell("x = 1")])
    executions.stamp(notebook, executor=executor, started="", seconds=1.0,
                     gpu_start=None, gpu_end=None)
    folder = folder or executor["device"].lower().replace(" ", "-")
    path = staging / "recorded" / folder / f"{chapter}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)
    return path


H100 = {"device": "NVIDIA H100 80GB HBM3", "backend": "gpu", "jax": "0.11.2",
        "date": "2026-12-01T09:30:00+00:00"}


def on_a_gpu(staging):
    """The staging folder's log as a GPU visit writes it."""
    log = json.loads((staging / gpu_visit.LOG).read_text())
    log["device"] = H100["device"]
    (staging / gpu_visit.LOG).write_text(json.dumps(log))


def unpacked_on_a_gpu(visit, tmp_path, pages=(), folder=None):
    """The visit's archive as a GPU visit packs it, each chapter of
    ``pages`` kept as the H100's page (in ``folder``, by default the
    H100's), unpacked into ``tmp_path / 'rec'``: what `unpack` returns."""
    chapters, out, _ = visit
    staging = staged(out, tmp_path / "staging")
    on_a_gpu(staging)
    for chapter in pages:
        with_page(staging, chapter, H100, folder)
    gpu_visit.pack(staging, tmp_path / "gpu.tar.gz")
    return gpu_visit.unpack(tmp_path / "gpu.tar.gz", tmp_path / "rec",
                            chapters)


def test_a_gpu_visit_unpacks_each_chapters_page(visit, tmp_path):
    result = unpacked_on_a_gpu(visit, tmp_path, ["90_probe"])
    assert "90_probe/result" in result["copied"]
    page = tmp_path / "rec" / "nvidia-h100-80gb-hbm3" / "90_probe.ipynb"
    assert nbformat.read(page, as_version=4).cells[0].source == "x = 1"


def test_a_gpu_visit_without_a_chapters_page_is_refused(visit, tmp_path):
    result = unpacked_on_a_gpu(visit, tmp_path)
    assert result["refused"]["90_probe"] == "no executed page"


def test_a_page_stamped_by_another_gpu_is_refused(visit, tmp_path):
    with pytest.raises(ValueError, match="not stamped as executed on "
                       "nvidia-h200"):
        unpacked_on_a_gpu(visit, tmp_path, ["90_probe"],
                          folder="nvidia-h200")


def test_a_contradicted_claim_is_noted_and_the_chapter_measures_on(
        visit, tmp_path):
    _, _, log = visit
    [run] = [c for c in log["chapters"] if c["chapter"] == "94_claimed"]
    assert run["status"] == "ok"
    assert run["contradicted"] == [{"claim": "one is more than two",
                                    "recordings": "94_claimed/result"}]
    # on a GPU: the recordings are kept, the page is not, and the claim to
    # rewrite is named
    result = unpacked_on_a_gpu(visit, tmp_path, ["94_claimed"])
    assert {"94_claimed/result", "94_claimed/later"} <= set(
        result["copied"])
    assert result["refused"]["94_claimed"] == (
        "page not kept: rewrite 'one is more than two'")
    assert not list((tmp_path / "rec").glob("*/94_claimed.ipynb"))


def test_unpack_copies_complete_chapters_and_refuses_the_rest(visit,
                                                              tmp_path):
    chapters, out, _ = visit
    result = gpu_visit.unpack(out / gpu_visit.ARCHIVE, tmp_path, chapters)
    assert result["copied"][0] == "90_probe/result"
    assert result["refused"]["91_broken"] == "failed"
    assert "92_short/other" in result["refused"]["92_short"]
    [copied] = tmp_path.glob("*/90_probe/result.json")
    assert json.loads(copied.read_text())["data"] == {"ok": 1}
    # the chapter's profile folder travels with its recordings
    [profile] = tmp_path.glob("*/90_probe/profile/plugins/h.xplane.pb")
    assert profile.read_bytes() == b"planes"
    history = json.loads((tmp_path / gpu_visit.LOG).read_text())
    assert [c["chapter"] for c in history["chapters"]] == [
        "90_probe", "92_short", "94_claimed"]


def test_a_second_archive_keeps_the_history_of_the_first(visit, tmp_path):
    """A visit of several calls brings several archives; each chapter
    keeps its latest good time."""
    chapters, out, _ = visit
    (tmp_path / gpu_visit.LOG).write_text(json.dumps({"chapters": [
        {"chapter": "02_earlier", "status": "ok", "seconds": 12.0},
        {"chapter": "90_probe", "status": "ok", "seconds": 99.0}]}))
    gpu_visit.unpack(out / gpu_visit.ARCHIVE, tmp_path, chapters)
    times = gpu_visit.last_times(tmp_path / gpu_visit.LOG)
    assert times["02_earlier"] == 12.0
    assert times["90_probe"] < 99.0 and "91_broken" not in times


def test_a_recording_with_bad_provenance_is_refused(visit, tmp_path):
    chapters, out, _ = visit
    staging = tmp_path / "staging"
    with tarfile.open(out / gpu_visit.ARCHIVE) as tar:
        tar.extractall(staging, filter="data")
    [path] = staging.glob("recorded/*/90_probe/result.json")
    record = json.loads(path.read_text())
    del record["provenance"]["driver"]
    path.write_text(json.dumps(record))
    gpu_visit.pack(staging, tmp_path / "bad.tar.gz")
    with pytest.raises(ValueError, match="provenance lacks"):
        gpu_visit.unpack(tmp_path / "bad.tar.gz", tmp_path / "rec",
                         chapters)


def test_an_archive_over_the_limit_leaves_pages_out(visit, tmp_path):
    _, out, _ = visit
    staging = staged(out, tmp_path / "staging")
    with_page(staging, "90_probe", H100)
    largest = with_page(staging, "92_short", H100)
    largest.write_text(largest.read_text() + " " * 4000)
    small = tmp_path / "small.tar.gz"
    limit = gpu_visit.pack(staging, small).stat().st_size - 1
    gpu_visit.pack(staging, small, limit=limit)
    names = tarfile.open(small).getnames()
    assert not any(n.endswith(largest.name) for n in names)  # first out
    assert any(n.endswith("90_probe.ipynb") for n in names)
    assert largest.exists()  # left out of the archive, not deleted
    assert any(n.endswith("result.json") for n in names)
    log = json.loads((staging / gpu_visit.LOG).read_text())
    assert log["left out of the archive (size)"] == [largest.name]


def test_the_plan_fits_each_command_in_the_budget():
    commands = gpu_visit.plan(("a", "b", "c", "d"), budget_s=500,
                              times={"a": 300, "b": 150, "c": 400})
    assert commands == [[("a", 300), ("b", 150)],
                        [("c", 400), ("d", gpu_visit.CHAPTER_BUDGET_S)]]


def test_a_chapter_is_expected_to_take_its_pages_time_or_its_budget(
        tmp_path, monkeypatch):
    """The GPU's kept page gives a chapter's time only while it ran the
    chapter's present code; an edited chapter is planned at its budget."""
    from nbformat.v4 import new_code_cell, new_notebook

    from helpers.page import executions

    monkeypatch.setenv("BOOK_RECORDED_DIR", str(tmp_path / "recorded"))
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    for name, code in (("01_same", "x = 1"), ("02_edited", "x = 2")):
        nbformat.write(new_notebook(cells=[new_code_cell(code)]),
                       chapters / f"{name}.ipynb")
        page = new_notebook(cells=[new_code_cell("x = 1")])
        executions.stamp(page, executor=H100, started="", seconds=42.0,
                         gpu_start=None, gpu_end=None)
        path = executions.page_path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(page, path)
    history = tmp_path / "visit_log.json"
    assert gpu_visit.expected_times(("01_same", "02_edited", "03_never"),
                                    chapters, history) == {
        "01_same": 42.0, "02_edited": gpu_visit.CHAPTER_BUDGET_S,
        "03_never": gpu_visit.CHAPTER_BUDGET_S}
    # an edited chapter that took longer than its budget at the last visit
    # is planned at that time, not cut off half-way through
    history.write_text(json.dumps({"chapters": [
        {"chapter": "02_edited", "status": "ok", "seconds": 230.0},
        {"chapter": "03_never", "status": "ok", "seconds": 30.0}]}))
    assert gpu_visit.expected_times(("01_same", "02_edited", "03_never"),
                                    chapters, history) == {
        "01_same": 42.0, "02_edited": 230.0,
        "03_never": gpu_visit.CHAPTER_BUDGET_S}


def test_time_here_keeps_each_chapters_dry_run_seconds(visit, tmp_path,
                                                      monkeypatch):
    chapters, _, _ = visit
    monkeypatch.setenv("BOOK_RECORD_TO", str(tmp_path / "recorded"))
    log = tmp_path / "dry_run_log.json"
    gpu_visit.time_here(["90_probe"], log=log, chapters_dir=chapters)
    entry = json.loads(log.read_text())["chapters"]["90_probe"]
    assert entry["seconds"] > 0 and entry["machine"].startswith("CPU, ")
    assert gpu_visit.dry_run_times(log) == {"90_probe": entry["seconds"]}


def test_the_chapters_name_their_recordings():
    assert "02_fusion/fixes" in gpu_visit.expected_recordings("02_fusion")


def test_every_chapter_that_records_says_what_a_visit_records():
    recording = [chapter for chapter in gpu_visit.PRIORITY
                 if gpu_visit.expected_recordings(chapter)]
    assert recording and all(gpu_visit.NEEDS.get(c) for c in recording), (
        [c for c in recording if not gpu_visit.NEEDS.get(c)])
