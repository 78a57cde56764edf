"""Every XLA flag the book uses: what it does, its default as the installed
jaxlib really applies it, what documents say, and which chapters use it
(read from the chapters' text).

The *effective* defaults come from XLA itself: compiling with
``xla_dump_to`` makes it write the DebugOptions it used
(`helpers.xla.xla_dump`). For XLA:GPU they are read from a program compiled
for an H100 on this machine (`helpers.xla.crosscompile`); for XLA:CPU they are
the same built-in defaults (one DebugOptions serves every backend) with the
options JAX sets for the CPU, read from a CPU compilation's dump. A
document's default is shown beside them with its source, and the table
says where the two disagree: public pages lag behind XLA.

The hygiene test checks that every flag in a chapter is listed here and
known to the installed jaxlib, so a flag a future jaxlib drops fails the
suite with its name.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from helpers.xla import xla_dump

PERF_TIPS = "https://docs.jax.dev/en/latest/gpu_performance_tips.html"
XLA_FLAGS_DOC = "https://openxla.org/xla/flags_guidance"
NOT_HERE = "(no CUDA plugin here)"

# flag: (what it does, documented default or "", source of that default);
# the chapters that use a flag are read from their text (`chapters_using`).
FLAGS: dict[str, tuple[str, str, str]] = {
    "--xla_dump_to": (
        "write the HLO of every compiled module, before and after "
        "optimisation, to this folder", "", ""),
    "--xla_disable_hlo_passes": (
        "skip the named HLO passes (comma-separated pass names)", "", ""),
    "--xla_backend_optimization_level": (
        "optimisation level of the LLVM backend", "", ""),
    "--xla_cpu_experimental_ynn_fusion_type": (
        "which operations XLA:CPU hands to the YNNPACK library as one "
        "custom fusion; empty keeps XLA's own loop fusions", "", ""),
    "--xla_gpu_enable_triton_gemm": (
        "let XLA:GPU compile matmuls with its Triton GEMM emitter; false "
        "hands every matmul to a library (cuBLAS)", "", ""),
    "--xla_gpu_triton_gemm_any": (
        "use the Triton GEMM emitter for every supported matmul, not only "
        "where it is known to win", "false", PERF_TIPS),
    "--xla_gpu_autotune_level": (
        "0: no autotuning; 1: autotune; 2-4: also initialise and check the "
        "candidates' buffers (4 checks results against a reference); 5: "
        "as 4, and skip candidates with wrong results", "", ""),
    "--xla_gpu_per_fusion_autotune_cache_dir": (
        "a folder where XLA:GPU writes each fusion's autotuning result and "
        "from which later compilations, in any process, load it", "", ""),
    "--xla_gpu_dump_autotune_results_to": (
        "write the autotuner's choices for this process's compilations to "
        "this file", "", ""),
    "--xla_gpu_dump_autotune_logs_to": (
        "write every candidate the autotuner timed, its time and the "
        "backend kept, as an xla.AutotuningLogs text proto when the file "
        "name ends in .txt", "", ""),
    "--xla_gpu_load_autotune_results_from": (
        "load autotuning choices from this file instead of timing the "
        "candidates again", "", ""),
    "--xla_gpu_enable_latency_hiding_scheduler": (
        "schedule to overlap asynchronous collectives with compute", "false",
        PERF_TIPS + " (as of jaxlib 0.4.18)"),
    "--xla_gpu_enable_analytical_sol_latency_estimator": (
        "estimate each operation's time for the latency hiding scheduler "
        "from the GPU's speed of light; in jaxlib 0.10.2, on an H100, it "
        "also runs the scheduler while the scheduler's own flag is off",
        "", ""),
    "--xla_gpu_memory_limit_slop_factor": (
        "percentage of device memory the latency hiding scheduler plans "
        "for", "95", PERF_TIPS),
    "--xla_gpu_enable_command_buffer": (
        "which kinds of operations XLA:GPU records into CUDA graphs; empty "
        "turns command buffers off", "", ""),
    "--xla_gpu_experimental_enable_fusion_autotuner": (
        "time each fusion's kernel from XLA's own emitter against a Triton "
        "(block-level) kernel on the device and keep the faster; without "
        "a device, keep XLA's emitter", "", ""),
    "--xla_gpu_graph_min_graph_size": (
        "fewest operations worth a CUDA graph", "", ""),
    "--xla_gpu_pgle_profile_file_or_directory_path": (
        "a profile (profile.pb) whose measured latencies the scheduler uses "
        "instead of its cost model", "", ""),
    "--xla_gpu_all_reduce_combine_threshold_bytes": (
        "combine independent all-reduces up to this many bytes", "256",
        PERF_TIPS),
    "--xla_gpu_all_gather_combine_threshold_bytes": (
        "combine independent all-gathers up to this many bytes", "256",
        PERF_TIPS),
    "--xla_gpu_reduce_scatter_combine_threshold_bytes": (
        "combine independent reduce-scatters up to this many bytes", "256",
        PERF_TIPS),
    "--xla_gpu_collective_combine_threshold_count": (
        "combine at most this many collectives into one, whatever their "
        "bytes", "", ""),
    "--xla_enable_command_buffers_during_profiling": (
        "keep CUDA graphs while a profiler runs; when false, XLA:GPU runs "
        "each graph's operations one by one under the profiler (XLA's "
        "CommandBufferThunk)", "", ""),
    "--xla_gpu_experimental_pipeline_parallelism_opt_level": (
        "let XLA:GPU reorder a pipeline's sends and receives to overlap "
        "them with compute", "", ""),
}


@functools.cache
def _options_for_gpu() -> dict[str, Any] | None:
    """XLA:GPU's options: from this machine's GPU where there is one (its
    own jaxlib and device), else from a compilation for an H100 here."""
    from helpers.measuring import machine
    from helpers.xla import crosscompile, fresh_process
    if machine.on_gpu():
        return _local_gpu_options()
    if not crosscompile.available():
        return None
    try:
        return crosscompile.run(crosscompile.options_for_gpu)
    except fresh_process.ChildFailed:
        return None


def _local_gpu_options() -> dict[str, Any]:
    import jax
    import jax.numpy as jnp
    x = jnp.ones((256, 256))
    return xla_dump.options_used(xla_dump.compile_with_dump(
        jax.jit(lambda v: jnp.tanh(v @ v)).lower(x)))


@functools.cache
def _cpu_overrides() -> dict[str, Any]:
    import jax
    import jax.numpy as jnp
    x = jax.device_put(jnp.ones(3), jax.devices("cpu")[0])
    lowered = jax.jit(jnp.sin).lower(x)
    found = xla_dump.overrides(xla_dump.compile_with_dump(lowered))
    found.pop("xla_dump_to", None)
    return found


def effective(flag: str, backend: Literal["gpu", "cpu"] = "gpu") -> str:
    """The value XLA applies for ``flag`` when it is not set, as text in
    the form ``XLA_FLAGS`` takes (lists comma-separated).

    Args:
        flag: ``'--xla_...'``, with or without the dashes.
        backend: ``'gpu'`` (an H100, compiled here) or ``'cpu'``.

    Returns:
        The value; ``'(unset)'`` when the field has its zero value (false,
        0 or empty), which XLA leaves out of the dump; `NOT_HERE` when XLA:GPU
        cannot be asked on this machine.
    """
    if backend not in ("gpu", "cpu"):
        raise ValueError(f"backend must be 'gpu' or 'cpu', got {backend!r}.")
    name = flag.removeprefix("--").split("=")[0]
    gpu = _options_for_gpu()
    if gpu is None:
        if backend == "gpu" or name not in _cpu_overrides():
            return NOT_HERE
        return _as_text(_cpu_overrides()[name])
    if backend == "cpu":
        if name in _cpu_overrides():
            return _as_text(_cpu_overrides()[name])
        if name in gpu["overrides"]:  # JAX's GPU setting, not the default
            return "(not known)"
    return _as_text(gpu["effective"].get(name))


def _as_text(value: str | list[str] | None) -> str:
    if value is None:
        return "(unset)"
    text = ",".join(value) if isinstance(value, list) else value
    return text or "(empty)"


def table(read_installed: bool = True) -> pd.DataFrame:
    """The registry as a table: effective defaults for XLA:GPU (an H100)
    and XLA:CPU, the documented default and its source, and whether they
    agree.

    Args:
        read_installed: ask the installed jaxlib (compiles two small
            programs, one in a child process; a few seconds the first
            time). False leaves the effective columns empty.
    """
    rows = []
    using = chapters_using()
    for flag, (meaning, documented, source) in FLAGS.items():
        gpu = effective(flag, "gpu") if read_installed else ""
        cpu = effective(flag, "cpu") if read_installed else ""
        rows.append({"flag": flag, "what it does": meaning,
                     "effective, XLA:GPU (H100)": gpu,
                     "effective, XLA:CPU": cpu,
                     "documented": documented, "source": source,
                     "document agrees": _agrees(documented, gpu),
                     "chapters": ", ".join(using.get(flag, ()))})
    return pd.DataFrame(rows).set_index("flag")


def for_the_page(registry: pd.DataFrame) -> pd.DataFrame:
    """The registry as a page shows it, four columns at the text width:
    the effective default (XLA:GPU for an H100), XLA:CPU's only where it
    differs, the document's default with whether it agrees, and the
    chapters. Lists break after their commas, so a long default wraps
    between its items instead of running off the page.

    Args:
        registry: `table()`'s result.
    """
    gpu = registry["effective, XLA:GPU (H100)"]
    cpu = registry["effective, XLA:CPU"]
    agrees = registry["document agrees"].map(
        {"yes": " (agrees)", "no": " (differs)"}).fillna("")
    return pd.DataFrame({
        "default (XLA:GPU, H100)": gpu.map(_breakable),
        "XLA:CPU": [_breakable(c) if c != g else "same"
                    for g, c in zip(gpu, cpu)],
        "documented": [f"{_breakable(d)}{a}" if d else "" for d, a in
                       zip(registry["documented"], agrees)],
        "chapters": registry["chapters"]}, index=registry.index)


def default_words(registry: pd.DataFrame, flag: str) -> str:
    """A flag's defaults as a list item reads them: the default that
    applies (XLA:CPU's for an ``xla_cpu`` flag, else XLA:GPU's for an
    H100, with XLA:CPU's where it differs), and the document's default
    and whether it agrees.

    Args:
        registry: `table()`'s result.
        flag: one of its flags.
    """
    row = for_the_page(registry.loc[[flag]]).iloc[0]
    cpu_flag = flag.startswith("--xla_cpu_")
    default = (_breakable(registry.loc[flag, "effective, XLA:CPU"])
               if cpu_flag else row["default (XLA:GPU, H100)"])
    unit = _unit(flag)
    parts = [f"default `{default}`{_in_units(default, unit)}"]
    if not cpu_flag and row["XLA:CPU"] != "same":
        parts.append(f"XLA:CPU `{row['XLA:CPU']}`")
    if row["documented"]:
        value, _, agrees = str(row["documented"]).partition(" (")
        parts.append(f"documented {value}{_in_units(value, unit)}"
                     + (f" ({agrees}" if agrees else ""))
    return "; ".join(parts)


def _unit(flag: str) -> str:
    """The unit a flag's name gives its value (``_bytes``), or ``''``."""
    return "bytes" if flag.endswith("_bytes") else ""


def _in_units(value: str, unit: str) -> str:
    """`` bytes (30 MiB)`` after a whole number of bytes; nothing for
    another value or unit.

    Example:
        >>> _in_units("31457287", "bytes"), _in_units("256", "bytes")
        (' bytes (30 MiB)', ' bytes')
        >>> _in_units("true", "bytes"), _in_units("5", "")
        ('', '')
    """
    if unit != "bytes" or not value.isdigit():
        return ""
    mib = int(value) / 2**20
    return f" bytes ({mib:.0f} MiB)" if mib >= 1 else " bytes"


def _breakable(value: str) -> str:
    return value.replace(",", ", ")


def chapters_using(chapters: Path | None = None
                   ) -> dict[str, tuple[str, ...]]:
    """Which chapters name each XLA flag in their text: ``{flag: ('03',
    '06')}``, read from the chapters' ``.md`` files (the checkout's
    ``chapters/`` by default); empty where there are none (``helpers``
    installed without the book).

    Example:
        >>> "03" in chapters_using()["--xla_gpu_graph_min_graph_size"]
        True
    """
    from helpers.measuring import machine
    from helpers.xla import known_flags
    folder = chapters or Path(machine.repo_root()) / "chapters"
    using: dict[str, list[str]] = {}
    for page in sorted(folder.glob("[0-9][0-9]_*.md")):
        for flag in known_flags.flag_names(page.read_text()):
            using.setdefault(flag, []).append(page.name[:2])
    return {flag: tuple(numbers) for flag, numbers in using.items()}


def _agrees(documented: str, effective_value: str) -> str:
    if not documented or not effective_value or effective_value.startswith(
            "("):
        return ""
    return "yes" if documented.lower() == effective_value.lower() else "no"


def unlisted(flags: list[str]) -> list[str]:
    """The flags in ``flags`` (names, values allowed) not in the registry.
    """
    return [f for f in flags if f.split("=")[0] not in FLAGS]
