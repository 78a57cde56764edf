"""Compile for an H100, or a GPU Colab lends, on a machine that has no GPU.

XLA:GPU decides fusions, kernel counts, collective combining and buffer
sizes at compile time, from a description of the target GPU; running the
program is a separate step. JAX's CUDA plugin can compile for
*compile-only* devices (`jax.experimental.topologies`) when it is handed
that description as a ``GpuTargetConfigProto``, with no GPU, driver or
CUDA libraries present. So a CPU machine can show what XLA:GPU does with a
program, though never how fast it runs. One kind of decision is missing:
the choices XLA:GPU makes by timing candidate kernels on the device
(autotuning: which GEMM library or Triton tiling) fall back to defaults
here, so read GEMM kernels from a real GPU, not from these compilations.

The plugin (``jax-cuda12-plugin`` and ``jax-cuda12-pjrt``, the version of
the installed jaxlib) is kept out of the main environment, where it would
complain at every start that it finds no GPU: ``make install`` puts it in
``.venv/cross`` (or set ``BOOK_CROSS_PLUGIN`` to another folder). Each
compilation runs in a child process that sees it and only the CPU backend:

>>> from helpers.xla import crosscompile
>>> crosscompile.run(crosscompile.device_kind_for_gpu)
'NVIDIA H100 80GB HBM3'

calls that function in the child, where `compile_for_gpu` and `devices`
give it H100 devices, and returns what it returns (as JSON). The chapters'
child functions (``fusion.kinds_for_gpu`` and the like) compile their
programs there and return what XLA:GPU made of them. ``gpu=`` picks
another target from `helpers.xla.gpu_specs` (``"T4"``, ``"L4"``,
``"A100"``, or a description of one's own):

>>> crosscompile.run(crosscompile.device_kind_for_gpu, gpu="T4")
'Tesla T4'

A program that needs a newer GPU fails there with an error that says
what it needs (Pallas's Mosaic GPU backend a Hopper, 9.0; its Triton
backend an Ampere, 8.0).
"""

from __future__ import annotations

import contextlib
import functools
import glob
import hashlib
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

from helpers.xla import gpu_specs
from helpers.xla.gpu_specs import H100_SXM  # noqa: F401 (chapter 1's)

PLUGIN_FOLDER_ENV = "BOOK_CROSS_PLUGIN"
CHILD_ENV = "BOOK_COMPILING_FOR_GPU"  # set in the child processes of `run`
CACHE_ENV = "BOOK_CROSSCOMPILE_CACHE"  # a folder: `run` keeps results there
TARGET_ENV = "BOOK_CROSSCOMPILE_TARGET"  # the child's GPU, as JSON
# The environment of `run`'s children: the CPU backend only, and none of
# the parent's XLA_FLAGS (its simulated devices).
_CHILD_SETTINGS = {"JAX_PLATFORMS": "cpu", CHILD_ENV: "1"}
_CHILD_DROPS = ("XLA_FLAGS",)


# --- in the parent: is the plugin there, and run a function in a child ----

def plugin_folder() -> str:
    """Where ``make install`` puts the plugin: ``cross`` inside the running
    environment (``.venv/cross``; ``.venv-newest/cross`` for `make
    test-newest`), or ``BOOK_CROSS_PLUGIN``. A GPU machine has the plugin
    in its environment instead."""
    return os.environ.get(PLUGIN_FOLDER_ENV) or os.path.join(
        sys.prefix, "cross")


# JAX's CUDA plugins register as jax_plugins.xla_cuda12 or xla_cuda13.
_PLUGIN_MODULES = ("jax_plugins.xla_cuda12", "jax_plugins.xla_cuda13")


def _plugin_importable() -> bool:
    """True where a CUDA plugin is installed in this environment (a GPU
    machine, or Colab)."""
    try:
        return any(importlib.util.find_spec(name) is not None
                   for name in _PLUGIN_MODULES)
    except ModuleNotFoundError:  # no jax_plugins namespace at all
        return False


def why_unavailable() -> str | None:
    """None when cross-compiling works here, else what is missing and how
    to get it."""
    import jaxlib
    if importlib.util.find_spec("flatbuffers") is None:
        return "jax.export needs flatbuffers: pip install flatbuffers"
    if _plugin_importable():
        return None
    if sys.platform != "linux":  # the plugin has wheels for Linux only
        return ("JAX's CUDA plugin is built for Linux only: compile for a "
                "GPU on Colab, or on a Linux machine")
    folder = plugin_folder()
    found = glob.glob(os.path.join(folder, "jax_cuda12_plugin-*.dist-info"))
    if not found:
        return (f"the CUDA plugin is not in {folder}: run `make install`, "
                f"or pip install --no-deps --target {folder} "
                f"jax-cuda12-plugin=={jaxlib.__version__} "
                f"jax-cuda12-pjrt=={jaxlib.__version__}")
    version = os.path.basename(found[0]).split("-")[1].removesuffix(
        ".dist")
    if version != jaxlib.__version__:
        return (f"the CUDA plugin in {folder} is {version} but jaxlib is "
                f"{jaxlib.__version__}: run `make install` again")
    return None


def available() -> bool:
    """True when this machine can compile for a GPU (`why_unavailable`
    says why not)."""
    return why_unavailable() is None


def label(gpu: str | dict[str, Any] = gpu_specs.DEFAULT) -> str:
    """Where a result compiled for ``gpu`` (as `run` takes it) comes from,
    for a table's caption (the GPU by the name the text calls it after
    naming it once)."""
    import jaxlib
    return (f"compiled for the {gpu_specs.short_name(gpu)} by XLA:GPU "
            f"(jaxlib {jaxlib.__version__}) on this machine, without "
            "running it")


def run(fn: Callable[..., Any], *args: Any, timeout: float = 600,
        keep_alive: bool = False,
        gpu: str | dict[str, Any] = gpu_specs.DEFAULT,
        xla_flags: str = "") -> Any:
    """Call ``fn(*args)`` in a child process that compiles for ``gpu``
    (H100s unless named: a name of `gpu_specs.GPUS`, or a description like
    `gpu_specs.H100_SXM`), and return its JSON result. ``fn`` is defined
    at the top level of a module of this project (use
    `gpu_export.compiled_text` for any other function). Where
    ``BOOK_CROSSCOMPILE_CACHE`` names a folder, a result is kept there and
    the same call again returns it without a child (`_kept_result`).

    With ``keep_alive`` the child is a worker kept for later calls
    (`helpers.xla.fresh_process.Worker`): the first call pays for starting
    Python and JAX, the next ones do not.

    ``xla_flags`` is the child's ``XLA_FLAGS``, which XLA reads as the
    child starts (a GPU flag for every compilation there, as on a GPU
    machine); none by default, whatever this process has. A kept worker
    is one per GPU and flags.

    Raises:
        ValueError: ``gpu`` names no known GPU (`gpu_specs.spec`).
        RuntimeError: the plugin is missing (with how to install it).
        helpers.xla.fresh_process.ChildFailed: the child failed (a
            RuntimeError that carries the child's output).
    """
    from helpers.xla import fresh_process
    fresh_process.target_of(fn)  # a function no child can import fails here
    target = json.dumps(gpu_specs.spec(gpu), sort_keys=True)
    reason = why_unavailable()
    if reason:
        raise RuntimeError(f"cannot compile for a GPU here: {reason}")
    kept = _kept_result(fn, args, target, xla_flags)
    if kept is not None and kept.exists():
        return json.loads(kept.read_text())
    if keep_alive:
        result = _worker(target, xla_flags).call(fn, *args, timeout=timeout)
    else:
        env, drop = _child_settings(target, xla_flags)
        result = fresh_process.call(fn, *args, env=env, drop_env=drop,
                                    python_path=_child_path(),
                                    timeout=timeout)
    if kept is not None:  # written whole, then renamed: never half a file
        partial = kept.with_suffix(f".{os.getpid()}.part")
        partial.write_text(json.dumps(result))
        partial.replace(kept)
    return result


def _child_path() -> tuple[str, ...]:
    return () if _plugin_importable() else (plugin_folder(),)


def _child_settings(target: str, xla_flags: str
                    ) -> tuple[dict[str, str], tuple[str, ...]]:
    """The variables a child sets and those it drops: the CPU backend and
    ``target``, and ``xla_flags`` as its XLA_FLAGS (else none)."""
    env = {**_CHILD_SETTINGS, TARGET_ENV: target}
    if xla_flags:
        return {**env, "XLA_FLAGS": xla_flags}, ()
    return env, _CHILD_DROPS


@functools.cache
def _worker(target: str, xla_flags: str = "") -> Any:
    """The child kept for `run`'s ``keep_alive`` calls for ``target`` (a
    GPU's description as JSON) and ``xla_flags``: one per pair."""
    from helpers.xla import fresh_process
    env, drop = _child_settings(target, xla_flags)
    return fresh_process.Worker(env=env, drop_env=drop,
                                python_path=_child_path())


def _kept_result(fn: Callable[..., Any], args: tuple[Any, ...],
                 target: str = "", xla_flags: str = "") -> Path | None:
    """Where `run` keeps the result of ``fn(*args)`` compiled for
    ``target`` (the GPU's description as JSON) when ``CACHE_ENV`` names a
    folder, else None.

    A compilation for a GPU gives the same result every time for the
    same code, arguments and JAX settings, and the test suite asks for
    several twice (a chapter's table, and the unit test of the same
    facts): `conftest.py` gives each pytest run a fresh folder. The key
    holds the function, its arguments, the GPU, the child's ``JAX_*`` and
    ``XLA_*`` variables and a digest of the helpers package's source, so
    an edit to the code is never answered from before it.
    """
    from helpers.xla import fresh_process
    folder = os.environ.get(CACHE_ENV)
    if not folder:
        return None
    Path(folder).mkdir(parents=True, exist_ok=True)
    settings = {name: value for name, value in
                {**os.environ, **_CHILD_SETTINGS}.items()
                if name.startswith(("JAX_", "XLA_"))
                and name not in _CHILD_DROPS}
    settings["XLA_FLAGS"] = xla_flags
    key = json.dumps({"target": fresh_process.target_of(fn), "args": args,
                      "gpu": target, "settings": settings,
                      "source": _source_digest()}, sort_keys=True)
    return Path(folder) / f"{hashlib.sha256(key.encode()).hexdigest()}.json"


@functools.cache
def _source_digest() -> str:
    """A digest of every module of the helpers package."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parents[1]  # helpers/xla/.. = helpers
    for path in sorted(package.rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def run_or_explain(fn: Callable[..., Any], *args: Any,
                   timeout: float = 600,
                   gpu: str | dict[str, Any] = gpu_specs.DEFAULT) -> Any:
    """`run`, or None after printing one sentence on why it could not run
    (no plugin here, or the compiler failed), so that a chapter goes on.
    """
    return attempt(run, fn, *args, timeout=timeout, gpu=gpu)


def attempt(action: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``action(*args, **kwargs)`` (`run`, `gpu_export.compiled_text`), or
    None after printing one sentence on why it failed: the plugin is
    missing, or XLA:GPU raised in the child (its full output is in the
    exception, which the sentence summarises). A ``gpu`` among the
    keywords names the GPU in that sentence; a name no GPU has raises
    ValueError at once."""
    from helpers.xla import fresh_process
    gpu = gpu_specs.with_article(kwargs.get("gpu", gpu_specs.DEFAULT))
    try:
        return action(*args, **kwargs)
    except fresh_process.ChildFailed as err:
        print(f"Not compiled for {gpu} here: XLA:GPU failed in "
              f"{err.target} ({err.reason}).")
    except RuntimeError as err:
        print(f"Not compiled for {gpu} here: {err}.")
    return None


# --- in the child: compile-only devices of the target GPU ----------------

def compiling_for_gpu() -> bool:
    """True in a child of `run`: code that picks a GPU or a CPU path (a
    Pallas kernel or its interpreter) should take the GPU's."""
    return os.environ.get(CHILD_ENV) == "1"


def target_spec() -> dict[str, Any]:
    """The description (`gpu_specs`) of the GPU this child of `run`
    compiles for; `gpu_specs.H100_SXM` outside such a child."""
    given = os.environ.get(TARGET_ENV)
    if not given:
        return gpu_specs.spec()
    spec = json.loads(given)
    spec["cuda_compute_capability"] = tuple(spec["cuda_compute_capability"])
    return gpu_specs.spec(spec)


@functools.cache
def devices(count: int = 1) -> list[Any]:
    """``count`` compile-only GPUs of `target_spec` (H100s unless `run`
    was given another), as one node (child process only)."""
    from jax.experimental import topologies
    topology = topologies.get_topology_desc(
        platform="cuda", topology=f"1x1x{count}",
        target_config=gpu_specs.target_config(target_spec()))
    return list(topology.devices)


def compile_for_gpu(fn: Callable[..., Any], *args: Any,
                    compiler_options: dict[str, Any] | None = None) -> Any:
    """``jax.jit(fn)`` compiled for one GPU of `devices` (child process
    only).

    ``args`` are arrays or ``jax.ShapeDtypeStruct``s; any without a
    sharding are placed on the first device. Shard them over `devices`
    yourself for more than one GPU.
    """
    lowered = lower_for_gpu(fn, *args)
    return lowered.compile(compiler_options=compiler_options or {})


def lower_for_gpu(fn: Callable[..., Any], *args: Any) -> Any:
    """``jax.jit(fn)`` lowered for one GPU of `devices`, as
    `compile_for_gpu` takes its arguments (child process only): its
    ``cost_analysis()`` counts the program's FLOPs."""
    import jax
    from jax.sharding import SingleDeviceSharding
    one = SingleDeviceSharding(devices(1)[0])

    def spec(x: Any) -> Any:
        if getattr(x, "sharding", None) is not None and isinstance(
                x, jax.ShapeDtypeStruct):
            return x
        return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=one)

    given = [x for x in jax.tree.leaves(args)
             if isinstance(x, jax.ShapeDtypeStruct) and x.sharding is not None]
    specs = jax.tree.map(spec, args)
    with contextlib.nullcontext() if given else _as_the_target():
        return jax.jit(fn).trace(*specs).lower()


def _as_the_target() -> Any:
    """A context in which JAX's lowering rules see the target GPU (an
    H100 unless `run` was given another).

    Pallas's Triton lowering asks the default device for its compute
    capability. Up to jax 0.10 it assumed 9.0 when that device was a CPU
    (whatever the target: XLA:GPU then compiles the kernel for the
    target's own capability); since jax 0.11 it raises instead, unless an
    abstract device names the GPU: this one, with the kind of our
    compile-only devices (``'Tesla T4'``, ``'NVIDIA L4'``...), from which
    JAX reads the capability. (Compiling over several devices, the
    caller's shardings and meshes decide, and no abstract device is set.)

    The mesh's axis is Auto, as it is by default up to jax 0.11: from jax
    0.12 on a mesh's axes are Explicit by default, which gives every
    array's type a sharding and made Triton's check of a 2-D carry fail
    ("Length of sharding.spec (2) must be equal to aval's ndim (1)").
    """
    from jax.sharding import (
        AbstractDevice,
        AbstractMesh,
        AxisType,
        use_abstract_mesh,
    )
    target = AbstractDevice(device_kind=devices(1)[0].device_kind,
                            num_cores=int(target_spec()["core_count"]),
                            platform="cuda")
    return use_abstract_mesh(AbstractMesh((1,), ("device",),
                                          axis_types=(AxisType.Auto,),
                                          abstract_device=target))


def self_check() -> dict[str, Any]:
    """A child function for the tests: eight devices exist, and a small
    program compiles for them."""
    import jax.numpy as jnp
    x = jnp.ones((1024, 1024))
    compiled = compile_for_gpu(lambda v: jnp.tanh(v @ v), x)
    return {"platform": devices(1)[0].platform, "devices": len(devices(8)),
            "output_bytes": compiled.memory_analysis().output_size_in_bytes}


def device_kind_for_gpu() -> str:
    """A child function: the kind of the compile-only device `run` gives
    the child (``'NVIDIA H100 80GB HBM3'`` unless given another GPU, as
    JAX names it)."""
    return devices(1)[0].device_kind


def options_for_gpu() -> dict[str, Any]:
    """A child function: the DebugOptions XLA:GPU compiled a small program
    for an H100 with (``effective``, from the dump's ``*.config.pbtxt``),
    and those that differ from XLA's built-in defaults (``overrides``)."""
    import tempfile
    from pathlib import Path

    import jax.numpy as jnp

    from helpers.xla import xla_dump
    folder = tempfile.mkdtemp(prefix="xla_dump_")
    compile_for_gpu(lambda v: jnp.tanh(v @ v), jnp.ones((256, 256)),
                    compiler_options={"xla_dump_to": folder})
    return xla_dump.options_used(xla_dump.Dump(Path(folder), None))
