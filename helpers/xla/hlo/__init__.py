"""Reading what XLA compiled: fusions, kernels, loops, collectives.

`jax.jit(f).lower(*args).compile().as_text()` is the optimised HLO module
that actually runs. This package turns that text into small Python records a
chapter can print and a test can assert on:

* `parsing`: compile a function and read the module text once into a
  typed model (`Module`, `Instruction`, `Shape`), the module's
  input/output aliasing and each instruction's source path
  (``op_names``);
* `kernels`: fusions and their emitter kinds, op counts, custom calls, the
  kernels one call launches, while loops and their trip counts;
* `compare`: whether two functions compile to the same program;
* `collectives`: all-reduce, all-gather and friends with their device
  groups, and the kernels scheduled to overlap each asynchronous one.

Every function accepts either a function with example arguments (compiled
here) or the compiled HLO text itself.
"""

from helpers.xla.hlo.collectives import (AsyncWindow, Collective,
                                         async_windows, collective_counts,
                                         collectives, most_in_flight)
from helpers.xla.hlo.compare import (canonical_lines, changed_ops,
                                     program_diff)
from helpers.xla.hlo.compiling import (Program, aliases, compiled,
                                       compiled_text, op_names)
from helpers.xla.hlo.kernels import (CustomCall, Fusion, FusionKind,
                                     WhileLoop, custom_calls, executed_count,
                                     fusions, kernel_count, kernels,
                                     launch_summary, matrix_products,
                                     source_products,
                                     op_counts, reduction_kinds, while_loops)
from helpers.xla.hlo.parsing import Alias, Instruction, Module, Shape, parse

__all__ = ["Alias", "AsyncWindow", "Collective", "CustomCall", "Fusion",
           "FusionKind", "Instruction", "Module", "Program", "Shape",
           "WhileLoop", "aliases", "async_windows", "canonical_lines",
           "changed_ops", "collective_counts", "collectives", "compiled",
           "compiled_text",
           "custom_calls", "executed_count", "fusions", "kernel_count",
           "kernels", "launch_summary", "matrix_products", "most_in_flight",
           "op_counts",
           "source_products",
           "op_names", "parse", "program_diff", "reduction_kinds",
           "while_loops"]
