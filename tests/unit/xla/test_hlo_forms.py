"""helpers.xla.hlo reads every instruction form XLA's own HLO parser
accepts, checked against the installed jaxlib's parser.

The modules in tests/unit/hlo_texts/forms/ were written for these tests,
one family of forms each, after the grammar of XLA's parser
(xla/hlo/parser/hlo_parser.cc, read at openxla/xla 02f6793e: operands
with or without shapes or nested as instructions, result shapes left for
XLA to infer, every layout part, dynamic dimensions, attributes in any
order with quoted or braced values, computations with
``execution_thread``, stack-frame tables). Each test first has the
installed jaxlib's parser read the module (so every form is one XLA
accepts), then compares what helpers.xla.hlo reads with what XLA reads:
the module as given, and XLA's own printing of it, which spells out every
shape XLA inferred."""

from pathlib import Path

import pytest
from jax._src.lib import xla_client

from helpers.xla import hlo

FORMS = sorted((Path(__file__).parent / "hlo_texts" / "forms").glob(
    "*.hlo"))
# The installed jaxlib's HLO text parser (private API: where a jaxlib
# lacks it, the comparison with XLA is skipped, the reading is not).
XLA_PARSER = getattr(getattr(xla_client, "hlo", None),
                     "hlo_module_from_text", None)


def xla_reads(text):
    if XLA_PARSER is None:
        pytest.skip("this jaxlib exposes no HLO text parser")
    return XLA_PARSER(text).to_string()


def named(module):
    """``{(computation, instruction): instruction}`` of a parsed module."""
    return {(computation, inst.name): inst
            for computation, body in module.items() for inst in body}


@pytest.mark.parametrize("path", FORMS, ids=lambda p: p.stem)
def test_every_form_reads_as_xla_reads_it(path):
    text = path.read_text()
    ours, xla = hlo.parse(text), hlo.parse(xla_reads(text))
    assert ours.entry_name == xla.entry_name
    mine, theirs = named(ours), named(xla)
    # XLA also lifts an inline to_apply={...} into a computation of its own
    assert set(mine) <= set(theirs)
    for key, inst in mine.items():
        other = theirs[key]
        assert (inst.op, inst.operands) == (other.op, other.operands), key
        if inst.result is not None:  # else XLA inferred it
            assert inst.result.arrays == other.result.arrays or [
                (a.dtype, a.dims) for a in inst.result.arrays] == [
                (a.dtype, a.dims) for a in other.result.arrays], key
    roots = {k for k, i in mine.items() if i.is_root}
    assert roots <= {k for k, i in theirs.items() if i.is_root}


def form(name):
    return hlo.parse((Path(__file__).parent / "hlo_texts" / "forms"
                      / f"{name}.hlo").read_text())


def test_a_left_out_shape_is_none_and_the_instruction_is_read():
    entry = {i.name: i for i in form("inferred_shapes").entry}
    assert entry["twice"].result is None and entry["twice"].shape == ""
    assert entry["pack"].operands == ("neg", "q", "gt", "tk")
    assert entry["first"].attrs["index"] == "0" and entry["first"].is_root


def test_nested_operands_become_instructions_named_as_xla_names_them():
    entry = [i.name for i in form("nested_operands").entry]
    assert entry == ["a", "negate", "exponential.anon", "constant.anon",
                     "broadcast.anon", "m", "negate.anon", "r"]


def test_quoted_and_braced_values_keep_their_commas_and_braces():
    entry = {i.name: i for i in form("attributes").entry}
    assert entry["p"].metadata["op_name"] == 'in, {odd} "quoted" name'
    assert entry["r"].metadata == {"source_line": "7", "op_type": "neg",
                                   "op_name": "o'k"}
    call = entry["c"]
    assert call.backend_config == {"k": "a}b,{c", "n": {"m": [1, 2]}}
    assert hlo.parsing.attribute(call, "custom_call_target") == \
        'my"target,{x}'
    assert list(call.attrs)[-1] == "api_version"


def test_an_instruction_over_several_lines_and_line_comments():
    module = form("bare_names_multiline")
    [reduce] = module["entry-fn.3"][-1:]
    assert reduce.op == "reduce" and reduce.attrs["to_apply"] == \
        "add.f32-helper"
    assert module["add.f32-helper"][-1].name == "sum_2.a-b"


def test_a_computation_closed_with_its_execution_thread():
    module = form("execution_thread_and_async")
    assert [i.name for i in module["offloaded"]] == ["a.1", "sq"]
    assert module.entry_name == "go" and module.entry[-1].op == "call-done"


def test_stack_frame_tables_are_not_instructions():
    module = form("stack_frames")
    assert set(module) == {"main.3"}
    assert module.entry[-1].metadata["stack_frame_id"] == "2"


def test_layouts_and_dynamic_dimensions():
    entry = {i.name: i for i in form("layouts").entry}
    assert entry["y"].result.layout == "1,0:T(8,128)(2,1)S(1)"
    assert entry["one"].result.minor_to_major == ()
    dims = {i.name: i.result.dims for i in form("dynamic_dims").entry}
    assert dims["v"] == (16, -1)  # <=16 gives its bound, ? is unknown


def test_a_buffer_shape_reads_as_the_shape_it_holds():
    x = form("buffer_shapes").entry[0]
    assert x.shape == "b(f32[4]{0})"
    assert (x.result.dtype, x.result.dims) == ("f32", (4,))
