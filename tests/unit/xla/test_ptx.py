"""Reading a kernel's loop in PTX (helpers.xla.ptx): instructions, the
loop's body, its critical path and the kinds along it, on PTX written
here the way XLA:GPU and Triton write it."""

import pytest

from helpers.xla import ptx

# One chain's loop: %f1 is carried; a load of the next input runs beside
# a chain of a multiply, an exponential, a shuffle and an add; the
# counter is carried too, through one add.
LOOP = """
.visible .entry kernel(
    .param .u64 kernel_param_0
)
{
    mov.b32 %r1, 0;
    mov.f32 %f1, 0f00000000;
$L__BB0_1:
    // the body
    mul.wide.u32 %rd2, %r1, 4;
    mov.u32 %r9, 0x0; ld.global.b32 { %r9 }, [ %rd2 + 0 ];
    mul.rn.f32 %f2, %f1, 0f3F000000;
    ex2.approx.ftz.f32 %f3, %f2;
    shfl.sync.bfly.b32 %f4, %f3, 1, 31, -1;
    add.rn.f32 %f1, %f3, %f4;
    add.s32 %r1, %r1, 1;
    setp.ne.b32 %p1, %r1, 8000;
    @%p1 bra $L__BB0_1;
    st.global.b32 [ %rd1 + 0 ], { %f1 };
    ret;
}
"""


def test_an_instruction_writes_its_first_operand():
    fma = ptx.parse("  fma.rn.f32 %f3, %f1, %f2, %f3;  // a comment")
    assert (fma.opcode, fma.writes, fma.reads) == (
        "fma.rn.f32", ("%f3",), ("%f1", "%f2", "%f3"))
    load = ptx.parse("ld.global.nc.v2.b32 {%r5, %r6}, [%rd1]")
    assert (load.writes, load.reads, load.kind) == (
        ("%r5", "%r6"), ("%rd1",), "load")
    store = ptx.parse("@%p2 st.global.b32 [ %rd1 + 0 ], { %f1 };")
    assert store.writes == () and store.opcode == "st.global.b32"
    assert ptx.parse("$L__BB0_1:") is None
    assert ptx.parse(".reg .f32 %f<5>;") is None


def test_instructions_are_sorted_into_kinds():
    kinds = {line: ptx.parse(line).kind for line in (
        "tanh.approx.f32 %f1, %f2", "div.full.f32 %f1, %f2, %f3",
        "div.rn.f32 %f1, %f2, %f3", "shfl.sync.bfly.b32 %r1, %r2, 8, 31, -1",
        "fma.rn.f32 %f1, %f2, %f3, %f4", "bra $L__BB0_1")}
    assert list(kinds.values()) == ["special function", "special function",
                                    "division", "shuffle", "arithmetic",
                                    "other"]


def test_the_loop_is_the_code_a_branch_returns_to():
    [body] = ptx.loops(LOOP)
    assert [i.opcode for i in body][:3] == ["mul.wide.u32", "mov.u32",
                                          "ld.global.b32"]
    assert body[-1].opcode == "bra"
    assert ptx.by_kind(body) == {"arithmetic": 6, "load": 1,
                                 "special function": 1, "shuffle": 1,
                                 "other": 1}


def test_the_critical_path_follows_the_carried_value_not_the_load():
    path = ptx.critical_path(ptx.hottest_loop(LOOP))
    assert [i.opcode for i in path] == [
        "mul.rn.f32", "ex2.approx.ftz.f32", "shfl.sync.bfly.b32",
        "add.rn.f32"]
    assert ptx.by_kind(path) == {"arithmetic": 2, "special function": 1,
                                 "shuffle": 1}


def test_ptx_without_a_loop_says_so():
    with pytest.raises(ValueError, match="no loop"):
        ptx.hottest_loop("add.rn.f32 %f1, %f2, %f3;\nret;")


# A loop whose input for the next iteration is loaded ahead through a
# long chain (six instructions) while the recurrence itself is one add:
# the load overlaps the next iteration, so the path is the add.
PREFETCH = """
$L__BB0_1:
    add.rn.f32 %f1, %f1, %f2;
    add.s32 %r1, %r1, 1;
    min.u32 %r3, %r1, 7999;
    mul.wide.u32 %rd4, %r3, 4;
    add.s64 %rd5, %rd1, %rd4;
    ld.global.f32 %f9, [%rd5];
    mov.f32 %f2, %f9;
    setp.ne.b32 %p1, %r1, 8000;
    @%p1 bra $L__BB0_1;
"""


def test_a_chain_into_another_carried_value_is_not_the_recurrence():
    path = ptx.critical_path(ptx.hottest_loop(PREFETCH))
    assert [i.opcode for i in path] == ["add.rn.f32"]


def test_two_kernels_joined_keep_their_labels_apart():
    # the second kernel's forward branch names the first kernel's label
    second = """
.visible .entry other(
)
{
    mul.rn.f32 %f1, %f2, %f3;
    @%p1 bra $L__BB0_1;
$L__BB0_1:
    ret;
}
"""
    assert len(ptx.loops(LOOP + second)) == 1


def test_atomics_write_their_register_and_guards_are_read():
    atom = ptx.parse("atom.global.add.u32 %r1, [%rd1], 1;")
    assert atom.writes == ("%r1",) and atom.reads == ("%rd1",)
    copy = ptx.parse("cp.async.ca.shared.global [%r5], [%rd2], 16;")
    assert copy.writes == () and copy.reads == ("%r5", "%rd2")
    guarded = ptx.parse("@%p3 add.rn.f32 %f1, %f2, %f3;")
    assert guarded.reads == ("%p3", "%f2", "%f3")
