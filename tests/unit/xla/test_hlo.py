import jax
import jax.numpy as jnp
import pytest

from helpers.xla import hlo

X = jnp.ones((64, 32), jnp.float32)


def test_fusions_of_an_elementwise_chain_and_a_matmul():
    found = hlo.fusions(lambda x: jnp.sin(x) @ x.T, X)
    assert found, "expected at least one fusion"
    sine = [f for f in found if f.root_op == "sine"]
    assert sine and sine[0].kind == "kLoop"
    assert sine[0].operand_shapes == ("f32[64,32]{1,0}",)
    assert sine[0].output_shape.startswith("f32[64,32]")


def test_fusions_from_text():
    text = """HloModule m

%fused (p: f32[8]) -> f32[] {
  %p = f32[8]{0} parameter(0)
  %c = f32[] constant(0)
  ROOT %r = f32[] reduce(%p, %c), dimensions={0}, to_apply=%add
}

ENTRY %main (a: f32[8]) -> f32[] {
  %a = f32[8]{0} parameter(0)
  ROOT %fusion = f32[] fusion(%a), kind=kInput, calls=%fused
}
"""
    (f,) = hlo.fusions(text)
    assert f == hlo.Fusion("fusion", "kInput", "reduce", ("f32[8]{0}",),
                           "f32[]")
    assert hlo.op_counts(text) == {"parameter": 1, "fusion": 1}
    assert hlo.op_counts(text, entry_only=False)["reduce"] == 1


def test_op_counts_sees_a_while_loop():
    def loop(x):
        return jax.lax.fori_loop(0, 10, lambda i, c: c * 2, x)

    assert hlo.op_counts(loop, X, entry_only=False)["while"] == 1


def test_compiled_text_accepts_jitted_functions():
    text = hlo.compiled_text(jax.jit(lambda x: x + 1), X)
    assert "ENTRY" in text


def test_bad_inputs_have_clear_errors():
    with pytest.raises(TypeError, match="expected a function"):
        hlo.fusions(42, X)

    def not_jittable(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(TypeError, match="cannot be jitted"):
        hlo.fusions(not_jittable, X)
    with pytest.raises(TypeError, match="could not be traced"):
        hlo.fusions(lambda x, y: x + y, X)
    with pytest.raises(ValueError, match="no ENTRY"):
        hlo.parse("not hlo")
    with pytest.raises(TypeError, match="not text with arguments"):
        hlo.fusions("ENTRY", X)


def _step(i, c):
    return jnp.sin(c) * 2 + c


def test_while_loop_with_a_static_trip_count():
    def loop(x):
        return jax.lax.fori_loop(0, 8000, _step, x)

    (w,) = hlo.while_loops(loop, X)
    assert w.trip_count == 8000
    assert w.body_kernels >= 1 and w.condition_kernels >= 1
    outside = hlo.kernel_count(lambda x: x, X)
    # Each iteration runs the body only; the condition is skipped.
    assert hlo.kernel_count(loop, X) >= 8000 * w.body_kernels
    assert hlo.kernel_count(loop, X) - 8000 * w.body_kernels <= 4 + outside


def test_while_loop_with_a_traced_trip_count():
    def loop(x, n):
        return jax.lax.while_loop(lambda c: c[0] < n,
                                  lambda c: (c[0] + 1, jnp.sin(c[1])),
                                  (0, x))[1]

    (w,) = hlo.while_loops(loop, X, 5)
    assert w.trip_count is None
    with pytest.raises(ValueError, match="no trip count known"):
        hlo.kernel_count(loop, X, 5)


def test_loops_carrying_long_tuples_are_found():
    # Six or more carried values print as "(s32[], ..., /*index=5*/f32[])":
    # the comment's "=" must not hide the while instruction.
    def loop(x, n):
        def body(c):
            return (c[0] + 1, *[jnp.sin(v) for v in c[1:]])

        out = jax.lax.while_loop(lambda c: c[0] < n, body,
                                 (0, *[x * (i + 1) for i in range(6)]))
        return out[1:]  # every carried value is used, so all stay

    assert "/*index=5*/" in hlo.compiled_text(loop, X, 5)
    (w,) = hlo.while_loops(loop, X, 5)
    assert w.trip_count is None and w.body_kernels >= 1


def test_nested_loops_multiply():
    def inner(c):
        return jax.lax.fori_loop(0, 3, _step, c)

    def outer(x):
        return jax.lax.fori_loop(0, 5, lambda i, c: inner(c), x)

    loops = hlo.while_loops(outer, X)
    assert sorted(w.trip_count for w in loops) == [3, 5]
    inner_loop = min(loops, key=lambda w: w.trip_count)
    assert hlo.kernel_count(outer, X) >= 15 * inner_loop.body_kernels


def test_fusions_inside_loops_are_listed():
    def loop(x):
        return jax.lax.fori_loop(0, 4, lambda i, c: jnp.tanh(c) * c, x)

    roots = {f.root_op for f in hlo.fusions(loop, X)}
    assert "multiply" in roots


def test_kernels_are_the_launching_instructions():
    ops = {k.op for k in hlo.kernels(lambda x: jnp.sin(x) @ x.T, X)}
    assert "parameter" not in ops and "bitcast" not in ops
    assert ops, "a sine and a matmul launch something"


def test_custom_calls_name_their_library():
    (call,) = hlo.custom_calls(jnp.linalg.cholesky, jnp.eye(4))
    assert "potrf" in call.target
    assert hlo.custom_calls(lambda x: x + 1, X) == []


def test_donation_shows_as_aliasing():
    donating = jax.jit(lambda x, y: (x * 2, y + 1), donate_argnums=(0, 1))
    found = hlo.aliases(donating, X, X)
    assert found == [hlo.Alias((0,), 0, (), "may-alias"),
                     hlo.Alias((1,), 1, (), "may-alias")]
    assert hlo.aliases(lambda x: x * 2, X) == []


COLLECTIVES_TEXT = """HloModule m, input_output_alias={ {}: (0, {}, must-alias) }

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %ar = f32[4]{0} all-reduce-start(%p), replica_groups=[2,2]<=[4], to_apply=%add
  %ard = f32[4]{0} all-reduce-done(%ar)
  %ag = f32[8]{0} all-gather(%ard), replica_groups=[2,2]<=[2,2]T(1,0), dimensions={0}
  %sl = f32[4]{0} slice(%ag), slice={[0:4]}
  ROOT %cp = f32[4]{0} collective-permute(%sl), source_target_pairs={{0,1},{1,0}}
}
"""


def test_collectives_from_text_with_iota_groups():
    ar, ag, cp = hlo.collectives(COLLECTIVES_TEXT)
    assert (ar.kind, ar.is_async, ar.groups) == (
        "all-reduce", True, ((0, 1), (2, 3)))
    assert (ag.kind, ag.groups) == ("all-gather", ((0, 2), (1, 3)))
    assert (cp.kind, cp.pairs, cp.groups) == (
        "collective-permute", ((0, 1), (1, 0)), ())
    # A -done waits; it launches nothing.
    assert [k.op for k in hlo.kernels(COLLECTIVES_TEXT)] == [
        "all-reduce-start", "all-gather", "slice", "collective-permute"]
    assert hlo.aliases(COLLECTIVES_TEXT) == [
        hlo.Alias((), 0, (), "must-alias")]


OVERLAP_TEXT = """HloModule m, is_scheduled=true

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%f (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%x)
}

ENTRY %main (p: f32[4], q: f32[4]) -> (f32[4], f32[4]) {
  %p = f32[4]{0} parameter(0)
  %q = f32[4]{0} parameter(1)
  %first = f32[4]{0} all-reduce-start(%p), to_apply=%add
  %k1 = f32[4]{0} fusion(%q), kind=kLoop, calls=%f
  %second = f32[4]{0} all-reduce-start(%k1), to_apply=%add
  %k2 = f32[4]{0} fusion(%k1), kind=kLoop, calls=%f
  %done1 = f32[4]{0} all-reduce-done(%first)
  %done2 = f32[4]{0} all-reduce-done(%second)
  ROOT %t = (f32[4]{0}, f32[4]{0}) tuple(%done1, %done2)
}
"""


def test_async_windows_count_the_kernels_scheduled_inside():
    first, second = hlo.async_windows(OVERLAP_TEXT)
    # two fusions run while the first all-reduce does (the second's
    # start is communication, not compute); one during the second
    assert first == hlo.AsyncWindow("first", "all-reduce", 2)
    assert second == hlo.AsyncWindow("second", "all-reduce", 1)
    # a done right after its start overlaps nothing; the synchronous
    # all-gather has no window at all
    assert hlo.async_windows(COLLECTIVES_TEXT) == [
        hlo.AsyncWindow("ar", "all-reduce", 0)]


def test_most_in_flight_counts_collectives_started_and_not_done():
    # both all-reduces are outstanding between the second start and the
    # first done
    assert hlo.most_in_flight(OVERLAP_TEXT) == 2
    one_at_a_time = OVERLAP_TEXT.replace(
        "  %done1 = f32[4]{0} all-reduce-done(%first)\n", "").replace(
        "  %second =", "  %done1 = f32[4]{0} all-reduce-done(%first)\n"
                      "  %second =")
    assert hlo.most_in_flight(one_at_a_time) == 1


SHARD_MAP_PROGRAM = """
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
jax.config.update("jax_num_cpu_devices", 4)
from helpers.xla import hlo
mesh = jax.make_mesh((2, 2), ("x", "y"))
def body(v):
    s = jax.lax.psum(v, "x")
    g = jax.lax.all_gather(v, "y")
    p = jax.lax.ppermute(v, "x", [(0, 1), (1, 0)])
    return (s.sum() + g.sum() + p.sum()).reshape(1, 1)
f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x", "y"),
                          out_specs=P("x", "y")))
x = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P("x", "y")))
for c in hlo.collectives(f, x):
    print(c.kind, c.groups, c.pairs)
"""


@pytest.mark.slow
def test_collectives_of_a_real_shard_map_on_four_cpu_devices():
    import subprocess
    import sys
    # Device count is fixed when jax starts, hence a fresh process.
    out = subprocess.run([sys.executable, "-c", SHARD_MAP_PROGRAM],
                         capture_output=True, text=True, check=True,
                         timeout=120).stdout
    lines = sorted(out.strip().splitlines())
    # psum over "x" groups devices that differ in their x coordinate.
    assert "all-reduce ((0, 2), (1, 3)) ()" in lines
    assert "all-gather ((0, 1), (2, 3)) ()" in lines
    assert any(line.startswith("collective-permute () ((0, 2)")
               for line in lines), lines


def test_bad_text_input_is_named():
    with pytest.raises(TypeError, match="takes HLO text"):
        hlo.parse(b"HloModule")


def test_op_names_give_each_instruction_its_jax_path():
    def f(x):
        with jax.named_scope("project"):
            return jnp.tanh(x @ x)

    x = jnp.ones((8, 8))
    paths = hlo.op_names(f, x)
    assert any(p.endswith("/project/dot_general") for p in paths.values())
    assert any(p.endswith("/project/tanh") for p in paths.values())
    assert all(name for name in paths)


def test_einsum_and_matmul_compile_to_the_same_program():
    q = jnp.ones((2, 4, 16, 8))

    def by_einsum(q, k):
        return jnp.einsum("bhts,bhqs->bhtq", q, k, optimize=True)

    def by_matmul(q, k):
        return jnp.matmul(q, k.swapaxes(-2, -1))

    assert hlo.program_diff(by_einsum, by_matmul, q, q) == []
    text = hlo.compiled_text(by_einsum, q, q)
    assert hlo.program_diff(text, by_matmul, q, q) == []


def test_program_diff_shows_the_differing_instruction():
    x = jnp.ones(8)
    diff = hlo.program_diff(jnp.sin, jnp.cos, x)
    assert any(line.startswith("-") and "sine(" in line for line in diff)
    assert any(line.startswith("+") and "cosine(" in line for line in diff)


def test_canonical_lines_keep_parameter_order_and_drop_metadata():
    x = jnp.ones(8)
    first = hlo.canonical_lines(lambda a, b: a - b, x, x)
    swapped = hlo.canonical_lines(lambda a, b: b - a, x, x)
    assert first != swapped
    assert not any("metadata" in line or "%" in line for line in first)


@pytest.mark.parametrize("printed, groups", [
    ("mesh['a'=2,'b'=4] {'b'}", ((0, 1, 2, 3), (4, 5, 6, 7))),
    ("mesh['a'=2,'b'=4] {'a'}", ((0, 4), (1, 5), (2, 6), (3, 7))),
    ("mesh['axis_0'=2,'axis_1'=1,'axis_2'=4] {'axis_0'}",
     ((0, 4), (1, 5), (2, 6), (3, 7))),
    ("mesh['x'=8] {'x'}", (tuple(range(8)),)),
])
def test_replica_groups_printed_by_mesh_axes(printed, groups):
    text = COLLECTIVES_TEXT.replace("replica_groups=[2,2]<=[4]",
                                    f"replica_groups={printed}")
    reduce = [c for c in hlo.collectives(text) if c.kind == "all-reduce"]
    assert reduce[0].groups == groups


def test_unreadable_mesh_groups_are_named():
    text = COLLECTIVES_TEXT.replace("replica_groups=[2,2]<=[4]",
                                    "replica_groups=mesh['a'=2] {'z'}")
    with pytest.raises(ValueError, match="cannot read replica_groups"):
        hlo.collectives(text)


GPU_MODULE = """HloModule jit_f
%gemm (p: f32[8,8], q: f32[8,8]) -> f32[8,8] {
  %p = f32[8,8]{1,0} parameter(0)
  %q = f32[8,8]{1,0} parameter(1)
  ROOT %dot.1 = f32[8,8]{1,0} dot(%p, %q), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
%fused_reduce (a: f32[8,8,3,5]) -> f32[8,8,3] {
  %a = f32[8,8,3,5]{3,2,1,0} parameter(0)
  %zero = f32[] constant(0)
  ROOT %r = f32[8,8,3]{2,1,0} reduce(%a, %zero), dimensions={3}, to_apply=%gemm
}
ENTRY %main (x: f32[8,8], y: f32[8,8], z: f32[8,8,3,5]) -> f32[8,8] {
  %x = f32[8,8]{1,0} parameter(0)
  %y = f32[8,8]{1,0} parameter(1)
  %z = f32[8,8,3,5]{3,2,1,0} parameter(2)
  %cublas = (f32[8,8]{1,0}, s8[0]{0}) custom-call(%x, %y), custom_call_target="__cublas$lt$matmul"
  %triton = f32[8,8]{1,0} fusion(%x, %y), kind=kCustom, calls=%gemm
  %loop_reduce_fusion = f32[8,8,3]{2,1,0} fusion(%z), kind=kCustom, calls=%fused_reduce
  ROOT %t = f32[8,8]{1,0} get-tuple-element(%cublas), index=0
}
"""


def test_matrix_products_count_dots_and_gemm_library_calls():
    # The shape of what XLA:GPU compiled on an H100 with jax 0.11.2: one
    # cuBLASLt call and one Triton GEMM fusion holding a dot.
    assert hlo.matrix_products(GPU_MODULE) == 2
    assert hlo.op_counts(GPU_MODULE, entry_only=False)["dot"] == 1


def test_a_reduce_handed_to_triton_keeps_its_kind_in_its_name():
    reduce, = [f for f in hlo.fusions(GPU_MODULE) if f.root_op == "reduce"]
    assert (reduce.kind, reduce.named_kind) == ("kCustom", "kLoop")
    gemm, = [f for f in hlo.fusions(GPU_MODULE) if f.root_op == "dot"]
    assert gemm.named_kind == gemm.kind == "kCustom"
