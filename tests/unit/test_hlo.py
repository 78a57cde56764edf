import jax
import jax.numpy as jnp
import pytest

from helpers import hlo

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
