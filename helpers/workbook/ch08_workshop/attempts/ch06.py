"""Chapter 6 (XLA flags): attempts at its exercises as learners
would write them, wrong and right, with the hint each wrong one should
get (`ATTEMPTS`, gathered in `helpers.workbook.ch08_workshop.attempts`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jax

from helpers.workbook.ch06_xla_flags import flag_runs
from helpers.xla import hlo

_ROOT = Path(__file__).parents[3]  # the checkout


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

def fusions_under_same_process(xla_flags):
    return hlo.launch_summary(_compile_reduction_here({}))["fusion kinds"]


def fusions_under_child_without_flags(xla_flags):
    return flag_runs.in_child("reduction", "", {"JAX_PLATFORMS": "cpu"})[
        "fusion kinds"]


def fusions_under_constant(xla_flags):
    return {"kLoop": 1}


def fusions_under_any_flag(xla_flags):
    # hard-coded from the flag's text: any flag "changes" the fusions
    return {"kLoop": 3} if xla_flags else {"kCustom": 1}


def _compile_reduction_here(options):
    fn, args = flag_runs.reduction_program(64)
    args = jax.device_put(args, jax.devices("cpu")[0])
    return fn.lower(*args).compile(compiler_options=options).as_text()


def fusions_under_compiler_options(xla_flags):
    # XLA_FLAGS parsed into per-compilation options: same effect, no child
    def value(text):
        return {"true": True, "false": False}.get(text, text)

    options = {}
    for flag in xla_flags.split():
        key, _, text = flag.removeprefix("--").partition("=")
        options[key] = value(text) if "=" in flag else True
    return hlo.launch_summary(_compile_reduction_here(options))[
        "fusion kinds"]


_SCRIPT = """
import json
import jax
from helpers.xla import hlo
from helpers.workbook.ch06_xla_flags import flag_runs
fn, args = flag_runs.reduction_program(64)
text = fn.lower(*args).compile().as_text()
print(json.dumps(hlo.launch_summary(text)["fusion kinds"]))
"""


def fusions_under_subprocess(xla_flags):
    env = {"XLA_FLAGS": xla_flags, "JAX_PLATFORMS": "cpu",
           "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", _SCRIPT], env=env,
                          capture_output=True, text=True, check=True,
                          cwd=str(_ROOT))
    return json.loads(done.stdout.strip().splitlines()[-1])


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
    "fusions_under": {"starter": "in a new process",
                      "wrong": {fusions_under_same_process:
                                    "in a new process",
                                fusions_under_child_without_flags:
                                    "in a new process",
                                fusions_under_constant:
                                    "from the compiled module",
                                fusions_under_any_flag:
                                    "not from the flag's text"},
                      "right": [fusions_under_compiler_options,
                                fusions_under_subprocess]},
    "known": {"starter": "helpers.xla.known_flags.unknown",
              "wrong": {known_by_prefix: "helpers.xla.known_flags.unknown",
                        known_by_a_list_seen_once:
                            "helpers.xla.known_flags.unknown",
                        known_sorted: "helpers.xla.known_flags.unknown"},
              "right": [known_one_at_a_time, known_as_tuple]},
}
