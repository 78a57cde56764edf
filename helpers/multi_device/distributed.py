"""Several JAX processes on one machine, talking over loopback.

A multi-host job runs one Python process per host (or per GPU), each calling
`jax.distributed.initialize` with the coordinator's address, the number of
processes and its own id. The same thing works on one machine with CPU
devices: JAX's CPU backend does its collectives through gloo over TCP. That
is what `run_local` starts, so the code a cluster would run can be tried,
and tested, on a laptop.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from helpers.measuring import machine

ENV_PREFIX = "BOOK_DISTRIBUTED_"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def initialize_from_env() -> int:
    """In a process started by `run_local`: set up CPU devices and gloo,
    join the others, and return this process's id."""
    import jax

    keys = ("COORDINATOR", "PROCESSES", "ID", "DEVICES")
    missing = [ENV_PREFIX + k for k in keys
               if ENV_PREFIX + k not in os.environ]
    if missing:
        raise RuntimeError(f"{missing} not set: start this script with "
                           "helpers.multi_device.distributed.run_local().")
    settings = {key: os.environ[ENV_PREFIX + key] for key in keys}
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.config.update("jax_num_cpu_devices", int(settings["DEVICES"]))
    jax.distributed.initialize(
        settings["COORDINATOR"], num_processes=int(settings["PROCESSES"]),
        process_id=int(settings["ID"]), initialization_timeout=60)
    return int(settings["ID"])


def run_local(script: str, *, processes: int = 2,
              devices_per_process: int = 2, timeout_s: float = 120.0
              ) -> list[str]:
    """Run ``script`` in ``processes`` Python processes that form one JAX
    job, and return each one's standard output, in process order.

    The script calls `initialize_from_env` first and
    `jax.distributed.shutdown()` last.

    Args:
        script: Python source code.
        processes: how many processes (at least 2).
        devices_per_process: CPU devices each process has.
        timeout_s: after this many seconds every process is killed.

    Raises:
        RuntimeError: a process failed or timed out; the message holds its
            output.

    Example:
        >>> run_local("from helpers.multi_device.distributed import *\\n"
        ...           "print(initialize_from_env())")
        ['0\\n', '1\\n']
    """
    if processes < 2 or devices_per_process < 1:
        raise ValueError("run_local needs processes >= 2 and "
                         f"devices_per_process >= 1; got {processes}, "
                         f"{devices_per_process}.")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "job.py"
        path.write_text(textwrap.dedent(script))
        children = _start(path, processes, devices_per_process)
        return _collect(children, timeout_s)


def _start(path: Path, processes: int, devices: int
           ) -> list[subprocess.Popen[str]]:
    common = {**os.environ, "JAX_PLATFORMS": "cpu",
              "PYTHONPATH": os.pathsep.join(
                  [machine.repo_root(), os.environ.get("PYTHONPATH", "")]),
              ENV_PREFIX + "COORDINATOR": f"127.0.0.1:{free_port()}",
              ENV_PREFIX + "PROCESSES": str(processes),
              ENV_PREFIX + "DEVICES": str(devices)}
    return [subprocess.Popen(
        [sys.executable, str(path)], text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**common, ENV_PREFIX + "ID": str(i)})
        for i in range(processes)]


def _collect(children: list[subprocess.Popen[str]], timeout_s: float
             ) -> list[str]:
    outputs, failures = [], []
    deadline = time.monotonic() + timeout_s  # one limit for the whole job
    for i, child in enumerate(children):
        try:
            out, err = child.communicate(
                timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            for other in children:
                other.kill()
            out, err = child.communicate()
            failures.append(f"process {i} timed out after {timeout_s} s:\n"
                            f"{err[-2000:]}")
            break
        outputs.append(out)
        if child.returncode != 0:
            failures.append(f"process {i} exited with {child.returncode}:"
                            f"\n{err[-2000:]}")
    if failures:
        for child in children:
            child.kill()
        raise RuntimeError("\n".join(failures))
    return outputs
