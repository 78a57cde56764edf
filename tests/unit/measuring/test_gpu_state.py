"""The GPU's clocks, power and temperature by NVML
(helpers.measuring.gpu_state), read through a stand-in for ``pynvml`` that
answers as NVML does on an H100, and without NVML at all."""

import sys
import types

import pytest

from helpers.measuring import gpu_state, machine


class NVMLError(Exception):
    pass


def fake_nvml(*, reasons_mask=0x0, fail_init=False, old_binding=False):
    """A module with pynvml's names, answering like NVML on a GPU under
    load (units as NVML gives them: MHz, milliwatts, °C)."""
    nvml = types.ModuleType("pynvml")
    nvml.NVMLError = NVMLError
    nvml.NVML_CLOCK_SM, nvml.NVML_CLOCK_MEM = 1, 2
    nvml.NVML_TEMPERATURE_GPU = 0
    nvml.calls = []

    def init():
        if fail_init:
            raise NVMLError("NVML Shared Library Not Found")
        nvml.calls.append("init")

    nvml.nvmlInit = init
    nvml.nvmlShutdown = lambda: nvml.calls.append("shutdown")
    nvml.nvmlDeviceGetHandleByIndex = lambda i: f"gpu{i}"
    nvml.nvmlDeviceGetClockInfo = lambda h, c: {1: 1755, 2: 2619}[c]
    nvml.nvmlDeviceGetMaxClockInfo = lambda h, c: {1: 1980, 2: 2619}[c]
    nvml.nvmlDeviceGetPowerUsage = lambda h: 652_300
    nvml.nvmlDeviceGetEnforcedPowerLimit = lambda h: 700_000
    nvml.nvmlDeviceGetTemperature = lambda h, sensor: 63
    nvml.nvmlDeviceGetPerformanceState = lambda h: 0
    name = ("nvmlDeviceGetCurrentClocksThrottleReasons" if old_binding
            else "nvmlDeviceGetCurrentClocksEventReasons")
    setattr(nvml, name, lambda h: reasons_mask)
    return nvml


def test_a_gpu_at_its_power_cap_reads_as_held_down(monkeypatch):
    nvml = fake_nvml(reasons_mask=0x4)
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    state = gpu_state.snapshot()
    assert state == {
        "sm_clock_mhz": 1755, "max_sm_clock_mhz": 1980,
        "memory_clock_mhz": 2619, "max_memory_clock_mhz": 2619,
        "power_w": 652.3, "power_limit_w": 700.0, "temperature_c": 63,
        "performance_state": "P0", "reasons": ["software power cap"]}
    assert gpu_state.throttled(state) is True
    assert gpu_state.describe(state) == (
        "SM 1755 of 1980 MHz, memory 2619 MHz, 652 W of 700 W, 63 °C; "
        "held down by software power cap")
    assert nvml.calls == ["init", "shutdown"]  # NVML left as it was


def test_an_idle_gpu_is_not_throttled(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml(reasons_mask=0x1))
    state = gpu_state.snapshot()
    assert state["reasons"] == ["idle"]
    assert gpu_state.throttled(state) is False


def test_bindings_older_than_nvml_12_are_read_too(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml",
                        fake_nvml(reasons_mask=0x40, old_binding=True))
    assert gpu_state.snapshot()["reasons"] == ["hardware thermal slowdown"]


def test_no_driver_gives_none_not_an_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml(fail_init=True))
    assert gpu_state.snapshot() is None
    assert gpu_state.describe(None) == "not read"
    assert gpu_state.throttled(None) is None


def test_no_binding_gives_none(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails
    assert gpu_state.snapshot() is None


def test_reason_bits_nvml_does_not_name_are_kept_not_dropped():
    assert gpu_state.reasons(0x4 | 0x1000) == ["software power cap",
                                               "other (0x1000)"]
    with pytest.raises(ValueError, match="non-negative int"):
        gpu_state.reasons(-1)


def test_this_cpu_records_no_gpu_state():
    assert machine.describe()["gpu_state"] is None
