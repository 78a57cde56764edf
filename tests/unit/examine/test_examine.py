"""examine finds each slow pattern in its reproduction and in variations
not written for it, and nothing slow in good code."""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import ShapeDtypeStruct as Spec

from helpers.examine import ExamineError, Report, costs, examine
from helpers.examine.__main__ import main
from helpers.workbook.ch02_fusion import fixes
from helpers.workbook.ch03_launches import variants
from helpers.workbook.ch05_transformations import transforms
from helpers.xla import crosscompile

needs_gpu_compiler = pytest.mark.skipif(
    not crosscompile.available(),
    reason=f"needs XLA:GPU's compiler: {crosscompile.why_unavailable()}")

STACK = (Spec((1000, 1000, 3, 25), jnp.float32),
         Spec((1000, 1000, 25, 1), jnp.float32))


def _found(fn, *args, **kwargs):
    return set(examine(fn, *args, **kwargs).patterns)


# --- each pattern, in a minimal reproduction and in variations ---------

def traced_bound_loop(x, n):
    return jax.lax.fori_loop(0, n, lambda i, c: jnp.sin(c) + 1.0, x)


def test_a_loop_of_traced_length_asks_the_host():
    assert _found(traced_bound_loop, jnp.ones(3), 8000) == {
        "host-round-trip"}
    nested = jax.jit(lambda x, n: traced_bound_loop(x, n) * 2)
    assert _found(nested, {"a": jnp.ones(3)}["a"], 10) == {
        "host-round-trip"}


@needs_gpu_compiler
def test_a_long_loop_of_tiny_steps_launches_kernel_by_kernel():
    def small_steps(x):
        return jax.lax.scan(lambda c, _: (jax.nn.sigmoid(c) * 0.5, None), x,
                            None, length=8000)[0]
    assert _found(small_steps, jnp.ones(12)) == {"launches-per-step"}
    # a static fori_loop is a scan too; a short one is not worth a finding
    static = jax.jit(lambda x: jax.lax.fori_loop(
        0, 500, lambda i, c: jnp.tanh(c), x))
    assert _found(static, jnp.ones((4, 4))) == {"launches-per-step"}
    assert _found(lambda x: jax.lax.fori_loop(
        0, 10, lambda i, c: jnp.tanh(c), x), jnp.ones(4)) == set()


@needs_gpu_compiler
def test_a_loop_of_tiny_steps_is_slow_as_a_cuda_graph_too():
    """Enough kernels a step to be replayed as a graph: cheaper per
    kernel than one by one, and still far above a step of nanoseconds;
    more arithmetic a step hides it."""
    def rnn(w, xs, width):
        def step(h, x):
            h = jnp.tanh(x @ w["x"] + h @ w["h"] + w["b"])
            return h, h
        return jax.lax.scan(step, jnp.zeros((xs.shape[1], width)), xs)[1]

    def weights(width):
        return {"x": Spec((16, width), jnp.float32),
                "h": Spec((width, width), jnp.float32),
                "b": Spec((width,), jnp.float32)}
    report = examine(lambda w, xs: rnn(w, xs, 32), weights(32),
                     Spec((8192, 4, 16), jnp.float32))
    assert report.patterns == ["launches-per-step"]
    assert "replayed as a CUDA graph" in report.findings[0].evidence
    assert report.findings[0].cost.startswith("graph replays: ")
    heavy = examine(lambda w, xs: rnn(w, xs, 4096), weights(4096),
                    Spec((64, 512, 16), jnp.float32))
    assert heavy.patterns == []


@needs_gpu_compiler
def test_chapter_2s_product_is_a_tiny_dot_reduced_one_thread_per_row():
    report = examine(lambda a, b: a @ b, *STACK)
    # the reduction XLA:GPU made of the tiny dot is the finding, priced by
    # chapter 2's H100 run at K = 25; the dot itself is a note
    assert report.patterns == ["kloop-reduction"]
    assert "rows of 25 contiguous elements" in report.findings[0].evidence
    assert "chapter 2's product with rows of 25 ran at" in (
        report.findings[0].cost)
    assert [n.pattern for n in report.notes if n.pattern == "tiny-dot"]
    # rows of 10: chapter 2 measured them near the copy bandwidth
    other = (Spec((200_000, 3, 10), jnp.float32),
             Spec((200_000, 10, 1), jnp.float32))
    assert _found(jnp.matmul, *other) == set()
    # the same short rows in a product of 3 MB cost no time worth a fix
    small = (Spec((20_000, 3, 25), jnp.float32),
             Spec((20_000, 25, 1), jnp.float32))
    assert _found(jnp.matmul, *small) == set()


@needs_gpu_compiler
def test_a_kloop_reduction_without_chapter_2s_recording_is_possible(
        monkeypatch):
    monkeypatch.setattr(costs, "kloop_speed", lambda length: None)
    report = examine(jnp.matmul, Spec((200_000, 3, 10), jnp.float32),
                     Spec((200_000, 10, 1), jnp.float32))
    assert report.patterns == ["kloop-reduction"]
    assert report.findings[0].confidence == "possible"


def test_a_tiny_dot_is_found_without_the_gpu_compiler():
    assert _found(lambda a, b: a @ b, *STACK, gpu=False) == {"tiny-dot"}
    assert _found(jax.vmap(jnp.dot), Spec((2**20, 4), jnp.float32),
                  Spec((2**20, 4), jnp.float32), gpu=False) == {"tiny-dot"}
    # an outer product written as a matrix product (K = 1): XLA writes
    # it as a multiply
    assert _found(lambda u, v: u @ v, Spec((4096, 1), jnp.float32),
                  Spec((1, 4096), jnp.float32), gpu=False) == set()
    assert _found(lambda u, v: u @ v, Spec((512, 64), jnp.float32),
                  Spec((64, 512), jnp.float32), gpu=False) == set()
    # a row-wise dot over 768 sums a long row: no tiny dimension to fix
    assert _found(jax.vmap(jnp.dot), Spec((2**16, 768), jnp.float32),
                  Spec((2**16, 768), jnp.float32), gpu=False) == set()


def test_segment_sum_and_scatter_add_may_collide():
    ids = jnp.array([0, 1, 1, 2] * 250)
    assert _found(lambda x, i: jax.ops.segment_sum(x, i, 3), jnp.ones(1000),
                  ids) == {"scatter-contention"}
    tree = {"x": jnp.ones((1000, 4)), "i": ids}
    assert _found(jax.jit(lambda t: jnp.zeros((3, 4)).at[t["i"]].add(
        t["x"])), tree) == {"scatter-contention"}
    sorted_ids = jax.jit(lambda x, i: jax.ops.segment_sum(
        x, i, 3, indices_are_sorted=True))
    assert _found(sorted_ids, jnp.ones(1000), ids) == set()


def test_a_batched_scatter_counts_each_rows_slots():
    """take_along_axis's gradient scatters each row into its own row: a
    cross-entropy's gradient collides nowhere."""
    def loss(z, labels):
        picked = jnp.take_along_axis(z, labels[:, None], axis=-1)
        return jnp.mean(jax.nn.logsumexp(z, axis=-1) - picked[:, 0])
    assert _found(jax.grad(loss), Spec((256, 10), jnp.float32),
                  Spec((256,), jnp.int32), gpu=False) == set()


def test_keys_split_inside_a_loop():
    def noisy(key, x):
        def step(carry, _):
            key, x = carry
            key, sub = jax.random.split(key)
            return (key, x + jax.random.normal(sub, x.shape)), None
        return jax.lax.scan(step, (key, x), None, length=50)[0][1]
    assert _found(noisy, jax.random.key(0), jnp.ones(3)) == {
        "random-in-loop"}
    batched = jax.vmap(noisy, in_axes=(0, None))
    assert _found(batched, jax.random.split(jax.random.key(0), 8),
                  jnp.ones(3)) == {"random-in-loop"}


def test_host_callbacks_anywhere():
    assert _found(lambda x: jax.pure_callback(np.sin, x, x) + 1,
                  jnp.ones(3)) == {"host-callback"}

    def printing(x):
        jax.debug.print("x = {}", x)
        return x * 2
    assert _found(jax.jit(jax.jit(printing)), jnp.ones(3)) == {
        "host-callback"}


def test_a_collective_inside_a_loop():
    mesh = jax.make_mesh((1,), ("d",))

    def body(x):
        return jax.lax.fori_loop(
            0, 10, lambda i, c: c + 0.1 * jax.lax.psum(c, "d"), x)
    spec = jax.sharding.PartitionSpec("d")
    sharded = jax.shard_map(body, mesh=mesh, in_specs=spec, out_specs=spec)
    x = jax.device_put(jnp.ones(4), jax.NamedSharding(mesh, spec))
    assert _found(sharded, x) == {"collective-in-loop"}


def test_64_bit_sorts_and_float64(x64):
    keys = jnp.arange(1000, dtype=jnp.int64)
    assert _found(jnp.argsort, keys) == {"sort-64-bit"}
    assert _found(jnp.sort, keys.astype(jnp.int32)) == set()
    assert _found(lambda x: jnp.sin(x) * 2, jnp.ones(8, jnp.float64)) == {
        "float64"}


def test_large_temporaries():
    def pairwise(x):
        return jnp.sort(jnp.outer(x, x), axis=0).sum(0)
    assert _found(pairwise, Spec((8192,), jnp.float32)) == {
        "large-temporaries"}
    assert _found(pairwise, Spec((256,), jnp.float32)) == set()


@needs_gpu_compiler
def test_large_temporaries_are_slow_only_when_an_all_pairs_array_made_them():
    # attention's scores: made from q and k, and priced
    report = examine(lambda q, k, v: jax.nn.softmax(q @ k.T) @ v,
                     *(Spec((8192, 64), jnp.float32),) * 3)
    assert report.patterns == ["large-temporaries"]
    assert "`dot_general(float32[8192,64], float32[64,8192])` makes" in (
        report.findings[0].evidence)
    assert "written and read back: 2 x " in report.findings[0].cost
    # random draws a Monte Carlo needs whole: a note
    def paths(key, s0):
        shocks = jax.random.normal(key, (252, s0.shape[0]))
        return s0 * jnp.exp(jnp.cumsum(0.01 * shocks, axis=0))[-1]
    report = examine(paths, jax.random.key(0), Spec((100_000,), jnp.float32))
    assert report.patterns == []
    assert [n.pattern for n in report.notes] == ["large-temporaries"]
    # a Gaussian process's kernel matrix, which its Cholesky factor needs
    def gp_solve(x, y):
        kernel = jnp.exp(-(x[:, None] - x[None, :]) ** 2)
        factor = jax.scipy.linalg.cho_factor(kernel + 1e-3 * jnp.eye(
            x.shape[0]))
        return jax.scipy.linalg.cho_solve(factor, y)
    assert "large-temporaries" not in examine(
        gp_solve, Spec((8192,), jnp.float32),
        Spec((8192,), jnp.float32)).patterns


def _update(params, grads):
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)


def test_outputs_that_replace_their_inputs_could_reuse_their_memory():
    params = {"w": jnp.ones((1024, 512)), "b": jnp.ones(512)}
    # the same shapes alone are a note: jnp.sin of an array is no update
    shapes = examine(_update, params, params, gpu=False)
    assert shapes.patterns == [] and [n.pattern for n in shapes.notes] == [
        "no-donation"]
    assert examine(jnp.sin, jnp.ones((1024, 1024)), gpu=False).findings == ()
    # calls that feed the output back in are the evidence
    steps = [(params, params), (jax.jit(_update)(params, params), params)]
    report = examine(_update, params, params, calls=steps, gpu=False)
    assert report.patterns == ["no-donation"]
    assert "argument `[0]['w']` of call 2 is output `['w']` of call 1" in \
        report.findings[0].evidence
    donated = jax.jit(_update, donate_argnums=0)
    assert _found(donated, params, params, calls=steps, gpu=False) == set()
    assert not any(leaf.is_deleted() for leaf in jax.tree.leaves(steps))
    small = {"w": jnp.ones((16, 16))}
    assert _found(_update, small, small, calls=[
        (small, small), (jax.jit(_update)(small, small), small)]) == set()


def test_retracing_names_what_changed():
    report = examine(lambda x: x * 2, jnp.ones(3), gpu=False,
                     calls=[(jnp.ones(3),), (jnp.ones(4),), (2.0,)])
    assert report.patterns == ["retracing"]
    evidence = report.findings[0].evidence
    assert "3 compilations in 3 calls" in evidence
    assert "float32[3] to float32[4]" in evidence
    assert "Python float" in evidence
    steady = examine(lambda x: x * 2, jnp.ones(3), gpu=False,
                     calls=[(jnp.ones(3),), (jnp.zeros(3),)])
    assert steady.findings == ()


# --- good code: nothing slow --------------------------------------------

@needs_gpu_compiler
def test_chapter_2s_fixes_have_no_finding():
    # the best fix, on data that arrives batch-minor, and the segment sum
    batch_minor = jax.eval_shape(fixes.to_batch_minor, *STACK)
    assert _found(fixes.batch_minor, *batch_minor) == set()
    assert _found(fixes.segment_matmul, *STACK) == set()


def test_chapter_3s_fused_loop_has_no_finding():
    weights = variants.init_weights(jax.random.key(0))
    report = examine(variants.fused, weights, jax.random.key(1), 8000)
    assert report.findings == ()


def test_chapter_5s_training_step_and_an_mlp_have_no_finding():
    params = transforms.init(jax.random.key(0), 512)
    batch = jnp.ones((256, 512))
    step = jax.jit(transforms.sgd_step, donate_argnums=0)
    report = examine(step, params, batch, batch)
    assert report.findings == ()
    assert [n.pattern for n in report.notes] == ["tf32-default"]

    def loss(p, x, labels):
        logits = jax.nn.relu(x @ p["w1"] + p["b1"]) @ p["w2"]
        return -jnp.mean(jnp.sum(labels * jax.nn.log_softmax(logits), -1))

    def train_step(p, x, labels):
        value, grads = jax.value_and_grad(loss)(p, x, labels)
        return _update(p, grads), value
    mlp = {"w1": jnp.ones((784, 512)), "b1": jnp.zeros(512),
           "w2": jnp.ones((512, 10))}
    assert _found(jax.jit(train_step, donate_argnums=0), mlp,
                  jnp.ones((128, 784)), jax.nn.one_hot(
                      jnp.zeros(128, int), 10)) == set()


def test_a_vmapped_solver_has_no_finding():
    matrices = jnp.eye(16)[None].repeat(1024, 0)
    assert _found(jax.vmap(jnp.linalg.solve), matrices,
                  jnp.ones((1024, 16))) == set()


# --- bad input, and the two ways to read a report ----------------------

def test_bad_input_gets_a_clear_error():
    with pytest.raises(ExamineError, match="needs a function"):
        examine(jnp.ones(3))
    with pytest.raises(ExamineError, match="does not trace.*shapes"):
        examine(lambda x: x @ x, jnp.ones((2, 3)))
    counter = []

    def stateful(x):
        counter.append(1)
        return x * len(counter)
    with pytest.raises(ExamineError, match="Python state"):
        examine(stateful, jnp.ones(3))
    with pytest.raises(ExamineError, match="argument tuples"):
        examine(lambda x: x, jnp.ones(3), calls=[jnp.ones(3)], gpu=False)


def test_a_report_reads_as_text_and_as_a_table():
    report = examine(lambda x, n: traced_bound_loop(x, n), jnp.ones(3), 5,
                     gpu=False)
    assert isinstance(report, Report)
    text = str(report)
    assert "1 finding" in text and "evidence:" in text and "fix:" in text
    assert "cost: a host round trip" in text
    assert "10_field_guide.html#guide-host-round-trip" in text
    html = report._repr_html_()
    assert "<table" not in html  # blocks read at any width
    assert "href='10_field_guide.html#" in html
    assert "`" not in html  # backticked names are shown as code
    # a block per finding (its pattern links to its section), then the
    # fix as a sentence of its own
    assert html.count("<div class='finding'>") == 1
    assert "<li>cost on an H100: a host round trip" in html
    table, after = html.split("</div>", 1)
    assert "give the loop a static trip count" not in table
    assert ("<p><b>Fix</b> for <i>loop that asks the host every step</i>: "
            "give the loop a static trip count") in after
    assert list(report.table().columns) == [
        "pattern", "evidence", "cost on an H100", "confidence", "fix",
        "read"]


def test_the_command_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "mine.py").write_text(
        "import jax, jax.numpy as jnp\n"
        "def step(x, n):\n"
        "    return jax.lax.fori_loop(0, n, lambda i, c: c + 1, x)\n"
        "def step_args():\n"
        "    return (jnp.ones(3), 7)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["mine:step", "--no-gpu"]) == 0
    assert "loop that asks the host every step" in capsys.readouterr().out
    assert main(["mine:nothing", "--no-gpu"]) == 2
    assert "has no 'nothing'" in capsys.readouterr().err
    assert main(["mine", "--no-gpu"]) == 2
    assert "module:name" in capsys.readouterr().err


@pytest.fixture
def x64():
    """64-bit types for one test: JAX keeps float32 otherwise."""
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", False)


# --- the field guide's cases ---------------------------------------------

@needs_gpu_compiler
@pytest.mark.parametrize("name", list(__import__(
    "helpers.workbook.ch10_field_guide.cases", fromlist=["CASES"]).CASES))
def test_each_field_guide_case_shows_its_pattern_and_its_fix_does_not(name):
    from helpers.workbook.ch10_field_guide import cases, guide

    case = cases.CASES[name]
    slow, fixed = guide.reports(case)
    assert slow.patterns == [case.pattern]
    assert fixed.patterns == list(case.still_found)


def test_each_field_guide_case_shows_two_different_pieces_of_code():
    from helpers.page import tables
    from helpers.workbook.ch10_field_guide import cases, guide

    for name, case in cases.CASES.items():
        slow, fixed = (tables.show_code(f).data
                       for f in guide.code_shown(case))
        assert slow != fixed, name


def test_the_workshop_box_examines_pasted_code():
    from helpers.examine import widget

    report = widget.run_code(widget.SAMPLE, gpu=False)
    assert report.patterns == ["host-round-trip"]
    with pytest.raises(ExamineError, match="as `function`"):
        widget.run_code("args = (1,)", gpu=False)
    with pytest.raises(ExamineError, match="tuple `args`"):
        widget.run_code("def function(x): return x\nargs = 1", gpu=False)
    with pytest.raises(ExamineError, match="raised NameError"):
        widget.run_code("def function(x): return x\nargs = (y,)", gpu=False)
    box = widget.examine_box()
    assert "examine(function)" in box._repr_mimebundle_()["text/html"]


def test_a_program_with_a_host_callback_says_why_the_gpu_was_not_asked():
    report = examine(lambda x: jax.pure_callback(np.sin, x, x), jnp.ones(3))
    assert report.skipped == (("loops and reductions as XLA:GPU compiles "
                               "them", "JAX cannot export a program with a "
                               "host callback for another platform"),)


@needs_gpu_compiler
def test_an_export_that_fails_is_reported_in_one_sentence():
    """A sharded input's sharding does not travel to the H100 export, so
    shard_map refuses it; the report keeps what went wrong, not the
    advice after it."""
    mesh = jax.make_mesh((1,), ("d",))
    spec = jax.sharding.PartitionSpec("d")
    sharded = jax.shard_map(lambda x: x * 2, mesh=mesh, in_specs=spec,
                            out_specs=spec)
    report = examine(sharded, jax.device_put(
        jnp.ones(8), jax.NamedSharding(mesh, spec)))
    [(check, why)] = report.skipped
    assert why == ("it could not be compiled for an H100 here (the export "
                   "places every input on one device, and a shard_map asks "
                   "for its inputs on its own mesh); a run on a GPU checks "
                   "it")
    assert "ValueError" not in why and "in_specs" not in why
    assert "\n" not in why and "you can" not in why


def test_report_cells_show_code_and_let_long_names_wrap():
    from helpers.examine.findings import _inline_code
    cell = _inline_code("use `jax.default_matmul_precision` on f32[10,20]")
    assert "<code>jax.<wbr>default_<wbr>matmul_<wbr>precision</code>" in cell
    assert "f32[10,<wbr>20]" in cell and "`" not in cell
    assert _inline_code("a < b") == "a &lt; b"  # escaped before marking


# --- the session is left as it was -------------------------------------

def test_examine_leaves_the_callers_caches_and_settings_as_they_were():
    traces = []

    @jax.jit
    def model(x):
        traces.append(1)
        return jnp.tanh(x @ x)

    x = jnp.ones((64, 64))
    model(x).block_until_ready()
    before = (model._cache_size(), jax.config.jax_enable_x64,
              jax.config.jax_default_device)
    examine(model, x, calls=[(x,), (jnp.ones((32, 32)),)])
    examine(lambda v: model(v) * 2, x)
    traced = len(traces)  # examine traces the function: that is reading it
    model(x).block_until_ready()  # still compiled: no trace, no compile
    assert len(traces) == traced
    assert (model._cache_size(), jax.config.jax_enable_x64,
            jax.config.jax_default_device) == before


def test_retracing_is_found_whatever_ran_before():
    step = jax.jit(lambda x: x * 2)
    calls = [(jnp.ones(3),), (jnp.ones(4),)]
    for args in calls:  # the caller ran them already: jit's cache is warm
        step(*args)
    report = examine(step, jnp.ones(3), calls=calls, gpu=False)
    assert report.patterns == ["retracing"]
    assert "2 compilations in 2 calls" in report.findings[0].evidence
    # abstract arguments are enough to trace the calls
    specs = [(Spec((3,), jnp.float32),), (Spec((5,), jnp.float32),)]
    assert _found(step, jnp.ones(3), calls=specs, gpu=False) == {
        "retracing"}


# --- each bad input gets an ExamineError that says what to do ---------

def test_keyword_arguments_are_refused_with_the_way_to_bind_them():
    with pytest.raises(ExamineError, match="functools.partial"):
        examine(lambda x, k=1: x * k, jnp.ones(3), k=2)
    with pytest.raises(ExamineError, match="Did you mean examine's own "
                       "calls="):
        examine(lambda x: x, jnp.ones(3), cals=[(jnp.ones(3),)])


def test_a_call_that_fails_names_the_call():
    def only_vectors(x):
        return x @ jnp.ones(3)
    with pytest.raises(ExamineError, match="a call in calls does not trace"):
        examine(only_vectors, jnp.ones(3), calls=[
            (jnp.ones(3),), (jnp.ones(4),)], gpu=False)
    with pytest.raises(ExamineError, match="argument tuples"):
        examine(only_vectors, jnp.ones(3), calls=(jnp.ones(3),))


def test_the_advice_fits_the_failure():
    def zeros_of(x, n):
        return x + jnp.zeros(n)
    with pytest.raises(ExamineError, match="static_argnums"):
        examine(zeros_of, jnp.ones(3), 3, gpu=False)
    # the fix the advice names works
    assert examine(jax.jit(zeros_of, static_argnums=1), jnp.ones(3), 3,
                   gpu=False).findings == ()

    def through_numpy(x):
        return jnp.asarray(np.asarray(x) * 2)
    with pytest.raises(ExamineError, match="runs on the host"):
        examine(through_numpy, jnp.ones(3), gpu=False)


def test_the_command_line_takes_calls_and_says_what_is_wrong(
        tmp_path, monkeypatch, capsys):
    (tmp_path / "steps.py").write_text(
        "import jax.numpy as jnp\n"
        "def double(x):\n"
        "    return x * 2\n"
        "def double_args():\n"
        "    return (jnp.ones(3),)\n"
        "def sizes():\n"
        "    return [(jnp.ones(3),), (jnp.ones(5),)]\n"
        "def broken():\n"
        "    raise OSError('no data here')\n"
        "NOT_A_FUNCTION = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["steps:double", "--calls", "steps:sizes", "--no-gpu"]) == 0
    assert "retracing across calls" in capsys.readouterr().out
    assert main(["steps:double", "--args", "steps:broken", "--no-gpu"]) == 2
    assert "steps:broken() raised OSError: no data here" in \
        capsys.readouterr().err
    assert main(["steps:double", "--args", "steps:NOT_A_FUNCTION",
                 "--no-gpu"]) == 2
    assert "is a int, not a function" in capsys.readouterr().err


# --- GPU-side evidence --------------------------------------------------

class State(NamedTuple):
    position: jax.Array
    velocity: jax.Array


@needs_gpu_compiler
def test_a_named_tuple_state_is_compiled_for_the_h100():
    def simulate(state, n):
        def step(i, s):
            return State(s.position + 0.01 * s.velocity,
                         s.velocity - 0.01 * s.position)
        return jax.lax.fori_loop(0, n, step, state)
    state = State(jnp.ones(16), jnp.zeros(16))
    report = examine(jax.jit(simulate, static_argnums=1), state, 10_000)
    assert report.skipped == ()
    assert report.patterns == ["launches-per-step"]
    assert "compiled for an H100" in report.findings[0].evidence


@needs_gpu_compiler
def test_temporaries_are_read_from_the_h100s_program():
    def pairwise(x):
        return jnp.sort(jnp.outer(x, x), axis=0).sum(0)
    [finding] = examine(pairwise, Spec((8192,), jnp.float32)).findings
    assert finding.pattern == "large-temporaries"
    assert "compiled for an H100" in finding.evidence


@needs_gpu_compiler
def test_a_program_is_compiled_for_the_h100_once(monkeypatch):
    from helpers.xla import gpu_export
    compiles = []
    real = gpu_export.crosscompile.run

    def counting(*args, **kwargs):
        compiles.append(args[0].__name__)
        return real(*args, **kwargs)

    def small_steps(x):
        return jax.lax.scan(lambda c, _: (jnp.sin(c), None), x, None,
                            length=5000)[0]
    monkeypatch.setattr(gpu_export.crosscompile, "run", counting)
    first = examine(small_steps, jnp.ones(8))
    again = examine(small_steps, jnp.ones(8))
    assert first.patterns == again.patterns == ["launches-per-step"]
    assert len(compiles) <= 1  # none where an earlier test compiled it


@needs_gpu_compiler
def test_large_closed_over_constants_are_compiled_as_arguments():
    """A 128 MiB constant is not copied into either compiled program (it
    took seconds), and changes nothing the report says; a jitted
    function's donation is kept."""
    import time
    table = jnp.asarray(np.random.default_rng(1).standard_normal(
        (8192, 4096), np.float32))

    def lookup(x):
        return jax.lax.scan(lambda c, _: (jnp.sin(c), None), x @ table.T,
                            None, length=5000)[0]
    start = time.perf_counter()
    report = examine(lookup, jnp.ones((2, 4096)))
    assert time.perf_counter() - start < 5
    assert report.patterns == ["launches-per-step"]
    step = jax.jit(lambda w, g: w - 0.1 * (g @ table[:1024, :1024]),
                   donate_argnums=0)
    donated = examine(step, jnp.ones((1024, 1024)), jnp.ones((1024, 1024)))
    assert "no-donation" not in [n.pattern for n in donated.notes]
