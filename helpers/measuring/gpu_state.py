"""The GPU's clocks, power and temperature at one moment, by NVML.

A timing depends on the clock the GPU ran at, and a GPU lowers its clock
when it runs hot or at its power limit. `snapshot()` reads what NVIDIA's
management library (NVML, through ``nvidia-ml-py``) reports for the first
GPU: the SM and memory clocks against their maxima, the power draw against
its limit, the temperature, and the reasons the driver gives for holding
the clocks down (its "clocks event reasons", once called throttle reasons).
Every recording and every executed page carries one taken at its start and
one at its end.

NVML is read without starting JAX or a CUDA context, so a parent process
can read it while a notebook's kernel holds the GPU.
"""

from __future__ import annotations

from typing import Any

# NVML's clocks event reasons: bit -> the name a reader knows it by
# (nvml.h, "Clocks Event Reasons"). Idle and the applications-clock
# setting lower the clock on purpose; the others are what a benchmark
# fears.
REASONS = {
    0x1: "idle",
    0x2: "applications clocks setting",
    0x4: "software power cap",
    0x8: "hardware slowdown",
    0x10: "sync boost",
    0x20: "software thermal slowdown",
    0x40: "hardware thermal slowdown",
    0x80: "hardware power brake",
    0x100: "display clock setting",
}
# The reasons that mean the clock was held below what the work asked for.
THROTTLING = frozenset({"software power cap", "hardware slowdown",
                        "software thermal slowdown",
                        "hardware thermal slowdown", "hardware power brake"})


def reasons(mask: int) -> list[str]:
    """The names of the clocks event reasons set in NVML's bit mask.

    Args:
        mask: what ``nvmlDeviceGetCurrentClocksEventReasons`` returns.

    Example:
        >>> reasons(0x1 | 0x4)
        ['idle', 'software power cap']
        >>> reasons(0)
        []
    """
    if not isinstance(mask, int) or mask < 0:
        raise ValueError(f"an NVML reason mask is a non-negative int, got "
                         f"{mask!r}")
    named = [name for bit, name in REASONS.items() if mask & bit]
    unknown = mask & ~sum(REASONS)
    if unknown:
        named.append(f"other (0x{unknown:x})")
    return named


def throttled(state: dict[str, Any] | None) -> bool | None:
    """Whether a `snapshot` shows the clock held down by power or heat;
    None when there is no snapshot.

    Example:
        >>> throttled({"reasons": ["software power cap"]})
        True
        >>> throttled({"reasons": ["idle"]}), throttled(None)
        (False, None)
    """
    if state is None:
        return None
    return any(reason in THROTTLING for reason in state["reasons"])


def snapshot(index: int = 0) -> dict[str, Any] | None:
    """The GPU's state now: clocks (MHz), power (W), temperature (°C) and
    the clocks event reasons, or None where NVML cannot be read (no
    NVIDIA GPU or driver, or ``nvidia-ml-py`` not installed).

    Args:
        index: which GPU, in NVML's order.

    Returns:
        ``{'sm_clock_mhz', 'max_sm_clock_mhz', 'memory_clock_mhz',
        'max_memory_clock_mhz', 'power_w', 'power_limit_w',
        'temperature_c', 'performance_state', 'reasons'}``.

    Example:
        >>> state = snapshot()
        >>> state is None or state["sm_clock_mhz"] > 0
        True
    """
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return None
    try:
        return _read(pynvml, pynvml.nvmlDeviceGetHandleByIndex(index))
    except pynvml.NVMLError:
        return None
    finally:
        pynvml.nvmlShutdown()


def _read(nvml: Any, handle: Any) -> dict[str, Any]:
    clock, limit = nvml.nvmlDeviceGetClockInfo, nvml.nvmlDeviceGetMaxClockInfo
    # The old name of the call, for drivers and bindings before NVML 12.
    event_reasons = (
        getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
        or nvml.nvmlDeviceGetCurrentClocksThrottleReasons)
    return {
        "sm_clock_mhz": clock(handle, nvml.NVML_CLOCK_SM),
        "max_sm_clock_mhz": limit(handle, nvml.NVML_CLOCK_SM),
        "memory_clock_mhz": clock(handle, nvml.NVML_CLOCK_MEM),
        "max_memory_clock_mhz": limit(handle, nvml.NVML_CLOCK_MEM),
        "power_w": nvml.nvmlDeviceGetPowerUsage(handle) / 1000,
        "power_limit_w": nvml.nvmlDeviceGetEnforcedPowerLimit(handle) / 1000,
        "temperature_c": nvml.nvmlDeviceGetTemperature(
            handle, nvml.NVML_TEMPERATURE_GPU),
        "performance_state": f"P{nvml.nvmlDeviceGetPerformanceState(handle)}",
        "reasons": reasons(int(event_reasons(handle))),
    }


def describe(state: dict[str, Any] | None) -> str:
    """A `snapshot` in a few words, for a table of provenance.

    Example:
        >>> describe({"sm_clock_mhz": 1980, "max_sm_clock_mhz": 1980,
        ...           "memory_clock_mhz": 2619, "power_w": 312.5,
        ...           "power_limit_w": 700, "temperature_c": 41,
        ...           "reasons": []})
        'SM 1980 of 1980 MHz, memory 2619 MHz, 312 W of 700 W, 41 °C'
        >>> describe(None)
        'not read'
    """
    if state is None:
        return "not read"
    text = (f"SM {state['sm_clock_mhz']} of {state['max_sm_clock_mhz']} MHz"
            f", memory {state['memory_clock_mhz']} MHz, "
            f"{state['power_w']:.0f} W of {state['power_limit_w']:.0f} W, "
            f"{state['temperature_c']} °C")
    held = [r for r in state["reasons"] if r in THROTTLING]
    return text + (f"; held down by {' and '.join(held)}" if held else "")
