"""Call a function in a fresh Python process: JSON in, JSON out.

Some things can only be decided when a process starts: XLA reads
``XLA_FLAGS`` once, JAX picks its platforms once, and an unknown flag
aborts the whole process. The book runs such experiments in a child:

>>> from helpers.xla import fresh_process, known_flags
>>> fresh_process.call(known_flags.start_jax, env={
...     "XLA_FLAGS": "--xla_force_host_platform_device_count=3",
...     "JAX_PLATFORMS": "cpu"})
3

calls ``known_flags.start_jax()`` in a new interpreter, which starts JAX
with those flags and counts its devices, and returns its result. The
function is passed as an object (a rename is caught where it is written,
not in the child) and must be importable by the child: defined at the top
level of a module, not in a notebook. Arguments and the result travel as
JSON. A child that fails raises `ChildFailed`, which carries the
child's whole output.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import re
import subprocess
import sys
import threading
import traceback
from typing import Any, Callable

_RESULT = "@@helpers.xla.fresh_process result@@ "
_FAILED = "@@helpers.xla.fresh_process failed@@"
_ERROR_LINE = re.compile(r"^(\w+(?:\.\w+)*(?:Error|Exception|Exit)\b.*)$",
                         re.MULTILINE)


class ChildFailed(RuntimeError):
    """The child process exited with an error.

    Attributes:
        target: the function it ran, ``"module:name"``.
        returncode: the child's exit status.
        output: everything the child printed (stdout, then stderr).
    """

    def __init__(self, target: str, returncode: int, output: str):
        self.target, self.returncode, self.output = target, returncode, output
        super().__init__(f"{target} failed in a child process (exit status "
                         f"{returncode}): {self.reason}\n--- the child's "
                         f"output, last lines ---\n{output[-2000:]}")

    @property
    def reason(self) -> str:
        """The child's last error line (``ValueError: ...``), or the last
        line it printed."""
        errors = _ERROR_LINE.findall(self.output)
        if errors:
            return errors[-1].strip()
        lines = [line for line in self.output.splitlines() if line.strip()]
        return lines[-1].strip() if lines else "(no output)"


def target_of(fn: Callable[..., Any]) -> str:
    """``"module:name"`` of a function a child can import.

    Raises:
        ValueError: ``fn`` is a lambda, a nested function, or defined in
            ``__main__`` or a notebook, so no other process can import it.
    """
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", "")
    if not callable(fn) or module is None:
        raise TypeError(f"expected a function, got {type(fn).__name__}.")
    if module == "__main__" or "<" in qualname or "." in qualname:
        raise ValueError(
            f"{qualname or fn!r} cannot be imported by another process: "
            "define it at the top level of a module (a function in a "
            "notebook or a lambda cannot travel).")
    return f"{module}:{qualname}"


def call(fn: Callable[..., Any], *args: Any, env: dict[str, str] | None = None,
         drop_env: tuple[str, ...] = (), python_path: tuple[str, ...] = (),
         timeout: float = 600) -> Any:
    """``fn(*args)`` run in a fresh Python process; its JSON result.

    Args:
        fn: a function defined at the top level of an importable module.
        args: JSON-serialisable arguments.
        env: variables to set in the child, on top of this process's.
        drop_env: variables to remove from the child's environment.
        python_path: folders the child imports from first.
        timeout: seconds before the child is killed.

    Raises:
        ChildFailed: the child raised or exited non-zero.
        subprocess.TimeoutExpired: it ran longer than ``timeout``.
    """
    from helpers.measuring import machine as book_env
    target = target_of(fn)
    done = subprocess.run(
        [sys.executable, "-m", "helpers.xla.fresh_process"],
        input=json.dumps({"target": target, "args": args}),
        env=_child_env(env or {}, drop_env, python_path),
        capture_output=True, text=True, timeout=timeout,
        cwd=book_env.repo_root())
    output = done.stdout + done.stderr
    results = [line for line in done.stdout.splitlines()
               if line.startswith(_RESULT)]
    if done.returncode != 0 or not results:
        raise ChildFailed(target, done.returncode, output)
    return json.loads(results[-1].removeprefix(_RESULT))


def _child_env(env: dict[str, str], drop_env: tuple[str, ...],
               python_path: tuple[str, ...]) -> dict[str, str]:
    """A child's environment: this process's, with ``env`` set, ``drop_env``
    removed, and ``python_path`` then the book's checkout first on its
    import path."""
    from helpers.measuring import machine as book_env
    child_env = {**os.environ, **env}
    for name in drop_env:
        child_env.pop(name, None)
    child_env["PYTHONPATH"] = os.pathsep.join(
        p for p in (*python_path, book_env.repo_root(),
                    child_env.get("PYTHONPATH")) if p)
    return child_env


class Worker:
    """A child process kept for many calls: `call` without starting a
    Python (and JAX) each time. Same arguments as `call`, fixed when the
    worker starts; it starts at its first call, starts again after a call
    that failed or ran out of time, and ends with this process.

    Example:
        >>> from helpers.xla import known_flags
        >>> worker = Worker(env={"JAX_PLATFORMS": "cpu"})
        >>> start = known_flags.start_jax
        >>> worker.call(start), worker.call(start)
        (1, 1)
        >>> worker.close()
    """

    def __init__(self, *, env: dict[str, str] | None = None,
                 drop_env: tuple[str, ...] = (),
                 python_path: tuple[str, ...] = ()):
        self._settings = (env or {}, drop_env, python_path)
        self._process: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        from helpers.measuring import machine as book_env
        process = subprocess.Popen(
            [sys.executable, "-m", "helpers.xla.fresh_process", "--serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True,
            env=_child_env(*self._settings), cwd=book_env.repo_root())
        atexit.register(self.close)
        return process

    def call(self, fn: Callable[..., Any], *args: Any,
             timeout: float = 600) -> Any:
        """``fn(*args)`` in the worker; its JSON result.

        Raises:
            ChildFailed: it raised (the worker goes on) or the worker
                died or ran past ``timeout`` (it is started again).
        """
        target = target_of(fn)
        if self._process is None or self._process.poll() is not None:
            self._process = self._start()
        process = self._process
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps({"target": target, "args": args})
                            + "\n")
        process.stdin.flush()
        output: list[str] = []
        timer = threading.Timer(timeout, process.kill)
        timer.start()
        try:
            for line in process.stdout:
                if line.startswith(_RESULT):
                    return json.loads(line.removeprefix(_RESULT))
                if line.startswith(_FAILED):
                    raise ChildFailed(target, 1, "".join(output) + line)
                output.append(line)
        finally:
            timer.cancel()
        self._process = None
        raise ChildFailed(target, process.wait(), "".join(output))

    def close(self) -> None:
        """End the worker (a later `call` starts another)."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        self._process = None


def _run_request(request: dict[str, Any]) -> None:
    """The child's side: import, call, print the result on one line."""
    module_name, name = request["target"].split(":")
    fn = getattr(importlib.import_module(module_name), name)
    result = fn(*request["args"])
    print(_RESULT + json.dumps(result), flush=True)


def _serve() -> None:
    """A `Worker`'s side: one request a line, each answered by a result
    line, or by a line saying it failed after its traceback."""
    for line in sys.stdin:
        try:
            _run_request(json.loads(line))
        except Exception:  # the caller gets the traceback, and we go on
            traceback.print_exc(file=sys.stdout)
            print(_FAILED, flush=True)


if __name__ == "__main__":
    if "--serve" in sys.argv:
        _serve()
    else:
        _run_request(json.load(sys.stdin))
