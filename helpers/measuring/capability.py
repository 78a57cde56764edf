"""What a GPU can do that the book uses, and why not where it cannot.

`capabilities` answers for this machine's GPU or for any compute
capability (a T4 is 7.5, an A100 8.0, an H100 9.0), each feature as a
`Capability` that prints ``yes`` or ``no: why``. `lacking` is the one
question a chapter asks before it runs a kernel: why this GPU cannot run
it, or nothing.
"""

from __future__ import annotations

import dataclasses
import importlib.util

from helpers.measuring import machine


@dataclasses.dataclass(frozen=True)
class Capability:
    """Whether this machine can do something the book uses, and if not,
    why. Printed as a table shows it: ``yes`` or ``no: why``.

    Example:
        >>> print(Capability(False, "not installed"))
        no: not installed
    """

    available: bool
    reason: str = ""
    # the compute capability the feature needs, where that is the reason
    needs: tuple[int, int] | None = None

    def __bool__(self) -> bool:
        return self.available

    def __str__(self) -> str:
        return "yes" if self.available else f"no: {self.reason}"


def capabilities(arch: tuple[int, int] | None = None) -> dict[str, Capability]:
    """What this GPU can do that the book uses, each with a short reason.

    Args:
        arch: a compute capability; by default `gpu_arch()` of this machine.

    Returns:
        ``{feature: Capability}`` for bf16 tensor cores, Pallas on
        Triton, Pallas on Mosaic GPU and CuPy.

    Example:
        >>> print(capabilities((7, 5))["Pallas (Triton backend)"])
        no: needs compute capability 8.0 (Ampere) or newer; this is 7.5
    """
    arch = arch if arch is not None else machine.gpu_arch()

    def needs(least: tuple[int, int], name: str) -> Capability:
        if arch is None:
            return Capability(False, "no CUDA GPU here")
        if arch >= least:
            return Capability(True)
        return Capability(False, f"needs compute capability {least[0]}."
                          f"{least[1]} ({name}) or newer; this is "
                          f"{arch[0]}.{arch[1]}", needs=least)

    has_cupy = importlib.util.find_spec("cupy") is not None
    return {
        # Tensor cores gained bf16 with Ampere (compute capability 8.0).
        "bf16 tensor cores": needs((8, 0), "Ampere"),
        # docs.jax.dev/en/latest/pallas/quickstart.html: the Triton backend
        # supports GPUs down to Ampere; Mosaic GPU needs Hopper or newer.
        "Pallas (Triton backend)": needs((8, 0), "Ampere"),
        "Pallas (Mosaic GPU backend)": needs((9, 0), "Hopper"),
        "CuPy": Capability(has_cupy, "" if has_cupy else
                           "not installed (pip install cupy-cuda12x)"),
    }


def lacking(feature: str, arch: tuple[int, int] | None = None) -> str:
    """Why a GPU of compute capability ``arch`` (by default this
    machine's) lacks ``feature`` (a `capabilities` key); ``''`` where it
    has it, and off a GPU when no ``arch`` is named: there the book runs
    every kernel in Pallas's interpreter, so nothing is left out.

    Raises:
        ValueError: ``feature`` is not one `capabilities` knows.

    Example:
        >>> lacking("Pallas (Triton backend)", (7, 5))
        'needs compute capability 8.0 (Ampere) or newer; this is 7.5'
        >>> lacking("Pallas (Triton backend)", (9, 0))
        ''
    """
    if arch is None and not machine.on_gpu():
        return ""
    found = capabilities(arch)
    if feature not in found:
        raise ValueError(f"no feature {feature!r}: name one of "
                         f"{sorted(found)}.")
    return "" if found[feature] else found[feature].reason
