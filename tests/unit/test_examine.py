"""examine finds each slow pattern in its reproduction and in variations
not written for it, and nothing slow in good code."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import ShapeDtypeStruct as Spec

from helpers.examine import ExamineError, Report, examine
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
def test_chapter_2s_product_is_a_tiny_dot_reduced_one_thread_per_row():
    report = examine(lambda a, b: a @ b, *STACK)
    assert set(report.patterns) == {"kloop-reduction", "tiny-dot"}
    assert "rows of 25 contiguous elements" in report.findings[0].evidence
    other = (Spec((20000, 3, 10), jnp.float32),
             Spec((20000, 10, 1), jnp.float32))
    assert _found(jnp.matmul, *other) == {"kloop-reduction", "tiny-dot"}


def test_a_tiny_dot_is_found_without_the_gpu_compiler():
    assert _found(lambda a, b: a @ b, *STACK, gpu=False) == {"tiny-dot"}
    assert _found(jax.vmap(jnp.dot), Spec((512, 4), jnp.float32),
                  Spec((512, 4), jnp.float32), gpu=False) == {"tiny-dot"}
    # an outer product written as a matrix product: K = 1
    assert _found(lambda u, v: u @ v, Spec((4096, 1), jnp.float32),
                  Spec((1, 4096), jnp.float32), gpu=False) == {"tiny-dot"}
    assert _found(lambda u, v: u @ v, Spec((512, 64), jnp.float32),
                  Spec((64, 512), jnp.float32), gpu=False) == set()


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


def _update(params, grads):
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)


def test_outputs_that_could_reuse_their_inputs():
    params = {"w": jnp.ones((1024, 512)), "b": jnp.ones(512)}
    assert _found(_update, params, params) == {"no-donation"}
    assert _found(jax.jit(_update, donate_argnums=0), params,
                  params) == set()
    small = {"w": jnp.ones((16, 16))}
    assert _found(_update, small, small) == set()


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
    with pytest.raises(TypeError, match="argument tuples"):
        examine(lambda x: x, jnp.ones(3), calls=[jnp.ones(3)], gpu=False)


def test_a_report_reads_as_text_and_as_a_table():
    report = examine(lambda x, n: traced_bound_loop(x, n), jnp.ones(3), 5,
                     gpu=False)
    assert isinstance(report, Report)
    text = str(report)
    assert "1 finding" in text and "evidence:" in text and "fix:" in text
    assert "10_field_guide.html#guide-host-round-trip" in text
    html = report._repr_html_()
    assert "<table style='table-layout: fixed; width: 100%'>" in html
    assert "href='10_field_guide.html#" in html
    assert "`" not in html  # backticked names are shown as code
    # three columns (the pattern links to its section); the fix is a
    # sentence under the table, too long for a column of its own
    assert html.count("<th>") == 3
    table, after = html.split("</table>")
    assert "give the loop a static trip count" not in table
    assert ("<p><b>Fix</b> for <i>loop that asks the host every step</i>: "
            "give the loop a static trip count") in after
    assert list(report.table().columns) == ["pattern", "evidence",
                                            "confidence", "fix", "read"]


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
