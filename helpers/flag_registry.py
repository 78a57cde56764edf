"""Every XLA flag the book uses: what it does, its documented default, and
which chapters use it.

A flag's default is read from the installed jaxlib where XLA prints it
(`helpers.xla_flags.printed_defaults`); where it does not, the table shows
the default a public source documents, and names the source. The hygiene
test checks that every flag in a chapter is listed here and known to the
installed jaxlib, so a flag a future jaxlib drops fails the suite with its
name.
"""

from __future__ import annotations

import pandas as pd

from helpers import xla_flags

PERF_TIPS = "https://docs.jax.dev/en/latest/gpu_performance_tips.html"
XLA_FLAGS_DOC = "https://openxla.org/xla/flags_guidance"

# flag: (what it does, documented default or "", source of that default,
#        chapters that use it)
FLAGS: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    "--xla_dump_to": (
        "write the HLO of every compiled module, before and after "
        "optimisation, to this folder", "", "", ("03", "06")),
    "--xla_disable_hlo_passes": (
        "skip the named HLO passes (comma-separated pass names)", "", "",
        ("06",)),
    "--xla_backend_optimization_level": (
        "optimisation level of the LLVM backend", "", "", ("06",)),
    "--xla_cpu_experimental_ynn_fusion_type": (
        "which operations XLA:CPU hands to the YNNPACK library as one "
        "custom fusion; empty keeps XLA's own loop fusions", "", "",
        ("06",)),
    "--xla_gpu_triton_gemm_any": (
        "use the Triton GEMM emitter for every supported matmul, not only "
        "where it is known to win", "false", PERF_TIPS, ("06",)),
    "--xla_gpu_autotune_level": (
        "how hard XLA:GPU autotunes kernels (0 = off, 4 = most)", "", "",
        ("06",)),
    "--xla_gpu_enable_latency_hiding_scheduler": (
        "schedule to overlap asynchronous collectives with compute", "false",
        PERF_TIPS + " (as of jaxlib 0.4.18)", ("06", "07")),
    "--xla_gpu_memory_limit_slop_factor": (
        "percentage of device memory the latency hiding scheduler plans "
        "for", "95", PERF_TIPS, ("06",)),
    "--xla_gpu_enable_command_buffer": (
        "which kinds of operations XLA:GPU records into CUDA graphs; empty "
        "turns command buffers off", "", "", ("03", "06")),
    "--xla_gpu_graph_min_graph_size": (
        "fewest operations worth a CUDA graph", "", "", ("03",)),
    "--xla_gpu_pgle_profile_file_or_directory_path": (
        "a profile (profile.pb) whose measured latencies the scheduler uses "
        "instead of its cost model", "", "", ("06",)),
    "--xla_gpu_all_reduce_combine_threshold_bytes": (
        "combine independent all-reduces up to this many bytes", "256",
        PERF_TIPS, ("06", "07")),
    "--xla_gpu_all_gather_combine_threshold_bytes": (
        "combine independent all-gathers up to this many bytes", "256",
        PERF_TIPS, ("06", "07")),
    "--xla_gpu_reduce_scatter_combine_threshold_bytes": (
        "combine independent reduce-scatters up to this many bytes", "256",
        PERF_TIPS, ("06", "07")),
    "--xla_gpu_experimental_pipeline_parallelism_opt_level": (
        "let XLA:GPU reorder a pipeline's sends and receives to overlap "
        "them with compute", "", "", ("07",)),
}


def table(read_installed: bool = True) -> pd.DataFrame:
    """The registry as a table, with the installed jaxlib's printed
    default where it prints one.

    Args:
        read_installed: also start a child process to read the defaults
            XLA prints (a few seconds).
    """
    printed = xla_flags.printed_defaults() if read_installed else {}
    rows = []
    for flag, (meaning, documented, source, chapters) in FLAGS.items():
        rows.append({"flag": flag, "what it does": meaning,
                     "default (installed jaxlib)": (
                         repr(printed[flag]) if flag in printed
                         else "(not printed)"),
                     "default (documented)": documented,
                     "source": source, "chapters": ", ".join(chapters)})
    return pd.DataFrame(rows).set_index("flag")


def unlisted(flags: list[str]) -> list[str]:
    """The flags in ``flags`` (names, values allowed) not in the registry.
    """
    return [f for f in flags if f.split("=")[0] not in FLAGS]
