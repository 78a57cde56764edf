"""helpers.xla.hlo reads HLO text once into a typed model, whatever form XLA
prints: tiled and memory-space layouts, names and operands with or without
`%`, operands with or without their shapes, backend configs bare or
quoted, scheduled modules, stack-frame tables after the module. The
modules are written by hand in tests/unit/hlo_texts/, one feature each."""

from pathlib import Path

import pytest

from helpers.xla import hlo

TEXTS = Path(__file__).parent / "hlo_texts"


def text(name):
    return (TEXTS / f"{name}.hlo").read_text()


def test_tiled_and_memory_space_layouts_keep_every_instruction():
    module = hlo.parse(text("tiled_layouts"))
    assert module.name == "tiled" and "is_scheduled=true" in module.header
    assert [i.name for i in module.entry] == ["x", "e", "a"]
    assert hlo.kernel_count(text("tiled_layouts")) == 2
    fusions = hlo.fusions(text("tiled_layouts"))
    assert [(f.kind, f.root_op) for f in fusions] == [
        ("kLoop", "exponential"), ("kLoop", "add")]
    e = module.entry[1]
    assert e.result.dims == (8, 128) and e.result.minor_to_major == (1, 0)
    assert e.result.layout == "1,0:T(8,128)S(5)"
    assert fusions[1].operand_shapes == ("f32[8,128]{1,0:T(8,128)}",
                                         "f32[8,128]{1,0:T(8,128)S(5)}")


def test_names_and_operands_without_percent_are_read():
    module = hlo.parse(text("no_percent"))
    assert module.entry_name == "main"
    assert set(module) == {"fused_square", "add", "main"}
    multiply = module["fused_square"][1]
    assert multiply.operands == ("p0", "p0") and multiply.is_root
    assert multiply.operand_shapes == (None, None)
    assert [f.root_op for f in hlo.fusions(text("no_percent"))] == [
        "multiply", "multiply"]
    # the async all-reduce's window holds the one fusion scheduled inside
    [window] = hlo.async_windows(text("no_percent"))
    assert (window.name, window.kind, window.kernels_between) == (
        "all", "all-reduce", 1)
    [reduce] = hlo.collectives(text("no_percent"))
    assert reduce.groups == ((0, 1),) and reduce.is_async
    assert hlo.kernel_count(text("no_percent")) == 4


def test_a_quoted_backend_config_is_decoded():
    module = hlo.parse(text("quoted_config"))
    loop = module.entry[-1]
    assert loop.backend_config["known_trip_count"] == {"n": "10"}
    assert loop.metadata == {"op_name": "jit(f)/while",
                             "source_file": "f.py", "source_line": "3"}
    [found] = hlo.while_loops(text("quoted_config"))
    assert (found.trip_count, found.body_kernels,
            found.condition_kernels) == (10, 2, 1)
    assert hlo.kernel_count(text("quoted_config")) == 20
    assert hlo.op_names(text("quoted_config")) == {"loop": "jit(f)/while"}


def test_the_stack_frame_tables_after_a_module_are_left_out():
    module = hlo.parse(text("quoted_config"))
    assert set(module) == {"body", "cond", "main"}


def test_tuple_shapes_nest_and_flatten():
    shape = hlo.Shape.parse("(f32[4]{0}, (s32[], pred[2]{0}), token[])")
    assert shape.is_tuple and len(shape.elements) == 3
    assert [a.dtype for a in shape.arrays] == ["f32", "s32", "pred", "token"]
    assert hlo.Shape.parse("f32[<=8,?]").dims == (8, -1)
    assert hlo.Shape.parse("f32[]").dims == ()
    assert str(shape) == "(f32[4]{0}, (s32[], pred[2]{0}), token[])"


def test_real_compiled_modules_read_the_same_way():
    import jax.numpy as jnp

    compiled = hlo.compiled_text(lambda x: (jnp.sin(x) * 2).sum(), jnp.ones(8))
    module = hlo.parse(compiled)
    assert module.entry_name in module and module.entry
    every = [i for body in module.values() for i in body]
    assert all(i.result is not None for i in every)
    # every operand names an instruction of its own computation
    for instructions in module.values():
        names = {i.name for i in instructions}
        assert all(o in names for i in instructions for o in i.operands)


@pytest.mark.parametrize("broken, message", [
    ("HloModule m\nENTRY %main {\n  %x = f32[4]{0} parameter(0)\n"
     "  %y = f32[4 bad\n}\n", "line 4: cannot read this instruction"),
    ("HloModule m\nENTRY %main {\n  %x = f32[4]{0} parameter(0)\n"
     "  this is not an instruction\n}\n", "line 4"),
    ("HloModule m\n%f {\n  %x = f32[4]{0} parameter(0)\n}\n",
     "no ENTRY computation"),
    ("HloModule m\nENTRY %main {\n  %x = f32[4]{0} negate(%y\n}\n",
     "line 3: cannot read this instruction (unbalanced '(')"),
])
def test_unreadable_text_is_named_by_its_line(broken, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")
                       .replace(")", r"\)")):
        hlo.parse(broken)


def test_fusion_kinds_are_an_enum_that_reads_as_hlo_text():
    fusions = hlo.fusions(text("tiled_layouts"))
    assert fusions[0].kind is hlo.FusionKind.LOOP
    assert fusions[0].kind == "kLoop" and str(fusions[0].kind) == "kLoop"
    odd = text("tiled_layouts").replace("kind=kLoop, calls=%fused_exp",
                                        "kind=kNewEmitter, calls=%fused_exp")
    assert hlo.fusions(odd)[0].kind == "kNewEmitter"  # kept as XLA wrote it


def test_a_computation_reached_by_name_without_percent_counts():
    """calls=fused_square (no %) still finds the fused computation."""
    [first, _] = hlo.fusions(text("no_percent"))
    assert first.root_op == "multiply"
    assert first.operand_shapes == ("f32[16]{0}",)
