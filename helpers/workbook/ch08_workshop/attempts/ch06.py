"""Chapter 6 (XLA flags): attempts at its exercises as learners
would write them, wrong and right, with the hint each wrong one should
get (`ATTEMPTS`, gathered in `helpers.workbook.ch08_workshop.attempts`)."""

from __future__ import annotations

import json
import os

from helpers.workbook.ch06_xla_flags import flag_runs


# --- 6.1 find the option ---------------------------------------------

def options_with_dashes():
    return {"--xla_gpu_enable_triton_gemm": False}


def options_other_flag():
    # Triton for every matmul or not: this one stays a Triton GEMM
    return {"xla_gpu_triton_gemm_any": False}


def options_misspelt():
    return {"xla_gpu_enable_triton_gemms": False}


def options_as_text():
    return {"xla_gpu_enable_triton_gemm": "false"}


def options_from_flag_text():
    flag = "--xla_gpu_enable_triton_gemm=false"
    name, _, value = flag.removeprefix("--").partition("=")
    return {name: json.loads(value)}  # "false" -> False


def options_dict_call():
    return dict(xla_gpu_enable_triton_gemm=False, xla_gpu_autotune_level=0)


# --- 6.2 set the flag where XLA reads it ---------------------------------

def _matmul_calls(options=None, **keywords):
    from helpers.xla import crosscompile
    return crosscompile.run(flag_runs.library_calls_for_gpu,
                            "matmul_epilogue", options or {}, **keywords)[
        "custom calls"]


def calls_under_worker_started_before(xla_flags):
    # the kept worker started when JAX started there, with no flags
    return _matmul_calls(keep_alive=True)


def calls_under_environ_then_child(xla_flags):
    # a new child, but crosscompile.run gives it none of our XLA_FLAGS
    before = os.environ.get("XLA_FLAGS")
    os.environ["XLA_FLAGS"] = xla_flags
    try:
        return _matmul_calls()
    finally:
        os.environ.pop("XLA_FLAGS")
        if before is not None:
            os.environ["XLA_FLAGS"] = before


def calls_under_constant(xla_flags):
    return {"__cublas$gemm": 1}


def calls_under_any_flag(xla_flags):
    # hard-coded from the flag's text: any flag "changes" the calls
    return {"__cublas$gemm": 1} if xla_flags else {}


def calls_under_compiler_options(xla_flags):
    # XLA_FLAGS parsed into per-compilation options: the same effect
    def value(text):
        return {"true": True, "false": False}.get(text, text)

    options = {}
    for flag in xla_flags.split():
        key, _, text = flag.removeprefix("--").partition("=")
        options[key] = value(text) if "=" in flag else True
    return _matmul_calls(options)


def calls_under_kept_worker(xla_flags):
    # a worker per set of flags, each started with its own
    return _matmul_calls(xla_flags=xla_flags, keep_alive=True)


# --- 6.3 keep only flags this jaxlib knows --------------------------------

def known_by_prefix(candidates):
    return [c for c in candidates if c.startswith("--xla_")]


def known_by_a_list_seen_once(candidates):
    return [c for c in candidates if "made_up" not in c]


def known_sorted(candidates):
    from helpers.xla import known_flags
    rejected = set(known_flags.unknown(candidates))
    return sorted(c for c in candidates if c not in rejected)


def known_one_at_a_time(candidates):
    from helpers.xla import known_flags
    return [c for c in candidates if not known_flags.unknown([c])]


def known_as_tuple(candidates):
    from helpers.xla import known_flags
    rejected = known_flags.unknown(candidates)
    return tuple(c for c in candidates if c not in rejected)


ATTEMPTS = {
    "options": {"starter": "flag_registry.table()",
                "wrong": {options_with_dashes: "without the leading '--'",
                          options_other_flag: "flag_registry.table()",
                          options_misspelt: "flag_registry.table()",
                          options_as_text: "flag_registry.table()"},
                "right": [options_from_flag_text, options_dict_call]},
    "calls_under": {"starter": "flags of its own",
                    "wrong": {calls_under_worker_started_before:
                                  "flags of its own",
                              calls_under_environ_then_child:
                                  "flags of its own",
                              calls_under_constant:
                                  "from the compiled module",
                              calls_under_any_flag:
                                  "not from the flag's text"},
                    "right": [calls_under_compiler_options,
                              calls_under_kept_worker]},
    "known": {"starter": "helpers.xla.known_flags.unknown",
              "wrong": {known_by_prefix: "helpers.xla.known_flags.unknown",
                        known_by_a_list_seen_once:
                            "helpers.xla.known_flags.unknown",
                        known_sorted: "helpers.xla.known_flags.unknown"},
              "right": [known_one_at_a_time, known_as_tuple]},
}
