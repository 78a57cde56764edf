"""Which Pallas backend runs a fused loop on this machine, and how.

`helpers.pallas.scan.fused_scan` compiles its loop with one of two Pallas GPU
backends, chosen by the GPU's compute capability:

* **Mosaic GPU** (Hopper, 9.0, and newer), the backend JAX develops, with
  one chain per thread (`helpers.pallas.mosaic.chains`);
* **Triton** (Ampere, 8.0, and newer), deprecated since jax 0.11.0 and kept
  while JAX still has it, with the step's arrays padded to powers of two
  (`helpers.pallas.triton.padding`).

Without a GPU, or on one older than both (a T4), the loop runs in an
interpreter: correct, but not one fast kernel. Compiling for a GPU on a
machine without one (`helpers.xla.crosscompile`, an H100 unless told
another) takes that GPU's choice; there a backend named for a GPU too
old for it is an error that says so, not the interpreter.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Literal, NamedTuple, get_args

import jax

from helpers.measuring import machine
from helpers.pallas.loop import Loop
from helpers.pallas.mosaic import chains as mosaic_chains
from helpers.xla import crosscompile

# Pallas's GPU backends, the newest first.
Backend = Literal["mosaic", "triton"]
BACKENDS: tuple[Backend, ...] = get_args(Backend)
MOSAIC_FROM = (9, 0)  # Hopper
# The release whose Pallas changelog deprecates the Triton backend.
TRITON_DEPRECATED_IN = "0.11.0"
TRITON_FROM = (8, 0)  # Ampere
_GENERATIONS = {MOSAIC_FROM: "Hopper", TRITON_FROM: "Ampere"}


class Kernel(NamedTuple):
    """How a fused loop is compiled: ``backend`` is ``'mosaic'`` or
    ``'triton'``; ``interpret`` runs that backend's interpreter instead of
    compiling for a GPU."""

    backend: Backend
    interpret: bool


def triton_available() -> bool:
    """True while this jax still has Pallas's Triton backend."""
    try:
        from jax.experimental.pallas import triton  # noqa: F401
    except ImportError:
        return False
    return True


def choose(backend: Backend | None, interpret: bool | None,
           mosaic_can_run: Callable[[], bool] = lambda: True) -> Kernel:
    """The backend for this machine, unless one is named.

    Args:
        backend: ``'mosaic'``, ``'triton'`` or None (choose by capability).
        interpret: force the interpreter (True) or a GPU kernel (False);
            None chooses by machine.
        mosaic_can_run: whether Mosaic GPU can take this particular step
            (`helpers.pallas.mosaic.chains` runs most, not all, operations);
            asked only when choosing.

    Raises:
        ValueError: ``backend`` is not one of `BACKENDS`.
    """
    if backend is not None and backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS} or None (by "
                         f"capability); got {backend!r}.")
    arch = _target_arch()
    chosen = backend or _by_capability(arch, mosaic_can_run)
    if interpret is None:
        interpret = _interpret_here(chosen, arch, named=backend is not None)
    if (chosen == "mosaic" and interpret
            and mosaic_chains.interpreter_missing()):
        raise NotImplementedError(
            f"Mosaic GPU's interpreter is not in jax {jax.__version__} "
            "(it is from 0.12 on); use backend='triton' to interpret.")
    return Kernel(chosen, interpret)


def _target_arch() -> tuple[int, int] | None:
    """The compute capability being compiled for, or None for none."""
    if crosscompile.compiling_for_gpu():
        return crosscompile.target_spec()["cuda_compute_capability"]
    return machine.gpu_arch() if machine.on_gpu() else None


def _by_capability(arch: tuple[int, int] | None,
                   mosaic_can_run: Callable[[], bool]) -> Backend:
    mosaic_ok = mosaic_chains.available() is None
    if arch is not None and arch >= MOSAIC_FROM and mosaic_ok and (
            not triton_available() or mosaic_can_run()):
        return "mosaic"
    return "triton" if triton_available() else "mosaic"


def _interpret_here(backend: Backend, arch: tuple[int, int] | None,
                    named: bool = False) -> bool:
    """Interpret where no GPU can compile this backend, with a warning on
    a GPU that is too old for it; compiling for such a GPU
    (`helpers.xla.crosscompile`), a ``named`` backend is an error."""
    if arch is None:
        return True
    least = MOSAIC_FROM if backend == "mosaic" else TRITON_FROM
    if arch >= least:
        return False
    if named and crosscompile.compiling_for_gpu():
        gpu = crosscompile.target_spec()["device_description_str"]
        raise NotImplementedError(
            f"Pallas's {backend} backend needs compute capability "
            f"{least[0]}.{least[1]} or newer ({_GENERATIONS[least]}) and the "
            f"{gpu} being compiled for is {arch[0]}.{arch[1]}: compile for "
            "a newer GPU, or name no backend to get this GPU's choice.")
    warnings.warn(f"fused_scan: Pallas's {backend} backend needs compute "
                  f"capability {least[0]}.{least[1]} or newer and this GPU "
                  f"is {arch[0]}.{arch[1]}; running the loop in Pallas's "
                  "interpreter, which is correct but not one fast kernel.",
                  stacklevel=4)
    return True


def run_lanes(loop: Loop, interpret: bool, init: Any, xs: Any,
              consts: tuple[Any, ...], save_carries: bool
              ) -> tuple[Any, Any, Any]:
    """One chain's scan as a Mosaic GPU kernel
    (`helpers.pallas.mosaic.chains`), in
    `helpers.pallas.scan`'s convention: ``(final, ys, carries entering each
    step or None)``. The carries travel as extra outputs of the step."""
    def step(carry: Any, x: Any, *constants: Any) -> Any:
        new, y = loop.fn(carry, x, *constants)
        return new, ((y, carry) if save_carries else y)

    init_one, xs_one = jax.tree.map(lambda leaf: leaf[None], (init, xs))
    final, ys = mosaic_chains.launch(loop.with_step(step), init_one, xs_one,
                                     consts, interpret=interpret)
    final, ys = jax.tree.map(lambda leaf: leaf[0], (final, ys))
    return (final, *ys) if save_carries else (final, ys, None)
