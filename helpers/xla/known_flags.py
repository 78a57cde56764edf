"""XLA flags: which ones the installed jaxlib knows, checked safely.

XLA reads ``XLA_FLAGS`` once, when JAX's backend starts, and an unknown flag
aborts the whole process (``Unknown flag in XLA_FLAGS``). So a flag is
checked in a child Python process: the caller survives whatever happens.
"""

from __future__ import annotations

import re

from helpers.xla import fresh_process

_FLAG = re.compile(r"--xla_[a-z0-9_]+")
_UNKNOWN = re.compile(r"Unknown flags? in XLA_FLAGS:\s*(.*)")
_BAD_VALUE = re.compile(r"Couldn't interpret value .*? for flag (\w+)")


def flag_names(text: str) -> list[str]:
    """The distinct ``--xla_...`` flag names in ``text``, in order.

    Example:
        >>> flag_names("XLA_FLAGS='--xla_dump_to=/tmp --xla_dump_to=/x'")
        ['--xla_dump_to']
    """
    return list(dict.fromkeys(_FLAG.findall(text)))


def unknown(flags: list[str], timeout: float = 120.0) -> list[str]:
    """The flags in ``flags`` that the installed jaxlib does not know.

    The flags are tried in a child process that starts JAX's backend with
    ``XLA_FLAGS`` set to them, so an abort costs nothing here: all of them
    at once, then the bare names XLA rejected once more with an empty
    value and with ``=0`` (a flag that needs a value is reported unknown
    without one): a few children, not one per flag. A start that fails
    for another reason than unknown flags or unreadable values is narrowed
    down by halves to the flag that fails it, which is then tried alone.

    Args:
        flags: flags as they would appear in XLA_FLAGS, with or without
            values (``'--xla_dump_to=/tmp/x'`` or ``'--xla_dump_to'``).
        timeout: seconds for each child process.

    Returns:
        The unknown flags, in the order given.

    Raises:
        ValueError: an entry does not look like an XLA flag.
        RuntimeError: a child failed for another reason (its output says).
    """
    bad = [f for f in flags if not _FLAG.match(f)]
    if bad:
        raise ValueError(f"not XLA flags: {bad}; each must start with "
                         "'--xla_'.")
    named, undecided = _sort_out(flags, timeout)
    named |= {flag for flag in undecided if not _accepted(flag, timeout)}
    # A flag written with its value that XLA names is unknown; a bare one
    # may only lack its value, so it is tried again with one. Rejected
    # another way with a value, its name was read: it is known.
    bare = [flag for flag in flags if flag in named and "=" not in flag]
    for value in ("", "0"):  # lists and strings; numbers and booleans
        if not bare:
            break
        with_value = {f"{flag}={value}": flag for flag in bare}
        still, _ = _sort_out(list(with_value), timeout)
        bare = [with_value[tried] for tried in with_value if tried in still]
    return [flag for flag in flags
            if flag in named and ("=" in flag or flag in bare)]


def _sort_out(flags: list[str], timeout: float
              ) -> tuple[set[str], list[str]]:
    """Start JAX with all the flags: the ones XLA names as unknown, and
    the ones no start could decide (a child failed another way with each
    of them alone).

    XLA stops at a flag whose value it cannot read (``Couldn't interpret
    value``) before it lists unknown ones; such a flag is known (XLA found
    it), so it is left out and JAX started again with the rest. A failure
    that names no flag is narrowed down by halves.
    """
    left = list(flags)
    while left:
        output = _start_jax_in_child(" ".join(left), timeout)
        if output is None:
            return set(), []
        named = _UNKNOWN.search(output)
        if named:
            return set(named.group(1).split()), []
        readable = {f"--{name}" for name in _BAD_VALUE.findall(output)}
        known = [flag for flag in left if flag.split("=")[0] in readable]
        if known:
            left = [flag for flag in left if flag not in known]
        elif len(left) == 1:
            return set(), left
        else:
            half = len(left) // 2
            first, second = (_sort_out(part, timeout)
                             for part in (left[:half], left[half:]))
            return first[0] | second[0], first[1] + second[1]
    return set(), []


def _accepted(flag: str, timeout: float) -> bool:
    # XLA reports a flag that needs a value but has none (an int or string
    # flag written bare) as unknown too, so a bare name is also tried with
    # an empty value (lists, strings) and "=0" (numbers, booleans).
    tries = [flag] if "=" in flag else [flag, f"{flag}=", f"{flag}=0"]
    outcomes = {}
    for attempt in tries:
        outcomes[attempt] = _start_with(attempt, timeout)
        if outcomes[attempt] == "ok":
            return True
    failures = {a: o for a, o in outcomes.items()
                if not o.startswith("unknown")}
    if len(failures) == len(tries):  # not about flags at all
        raise RuntimeError(
            "starting JAX failed for another reason than an unknown flag:\n"
            + "\n".join(f"XLA_FLAGS={a!r}: {o}" for a, o in failures.items()))
    # XLA parsed the name and rejected only the value: the flag exists.
    return bool(failures)


def _start_with(flags: str, timeout: float) -> str:
    """'ok' when JAX starts with XLA_FLAGS=flags, 'unknown ' and the
    flags XLA names when it rejects some as unknown, else the child's
    output."""
    output = _start_jax_in_child(flags, timeout)
    if output is None:
        return "ok"
    named = _UNKNOWN.search(output)
    if named:
        return "unknown " + named.group(1).strip()
    return output[-2000:]


def start_jax() -> int:
    """What the child runs: start JAX (which parses ``XLA_FLAGS``) and
    count its devices."""
    import jax
    return len(jax.devices())


def _start_jax_in_child(flags: str, timeout: float) -> str | None:
    """None when JAX starts in a child with ``XLA_FLAGS=flags``, else
    everything the child printed (an unknown flag aborts the process)."""
    try:
        fresh_process.call(start_jax, env={"XLA_FLAGS": flags,
                                   "JAX_PLATFORMS": "cpu"}, timeout=timeout)
    except fresh_process.ChildFailed as failed:
        return failed.output
    return None


_HELP_LINE = re.compile(r"^\t(--xla_[a-z0-9_]+)=(.*?)\s*\t(\w+)\t(.*)$")


def printed_defaults(timeout: float = 120.0) -> dict[str, str]:
    """The defaults XLA prints for ``XLA_FLAGS=--help``, read in a child.

    XLA answers ``--help`` by aborting with a usage message that lists
    flags with their defaults; the message is cut after some length, so
    only the flags printed before the cut are returned (``{}`` if none).
    """
    return {flag: default for flag, (default, _) in
            _printed_help(timeout).items()}


def printed_descriptions(timeout: float = 120.0) -> dict[str, str]:
    """XLA's own description of each flag it prints for ``--help``."""
    return {flag: text for flag, (_, text) in _printed_help(timeout).items()}


def _printed_help(timeout: float) -> dict[str, tuple[str, str]]:
    found: dict[str, tuple[str, str]] = {}
    for line in (_start_jax_in_child("--help", timeout) or "").splitlines():
        match = _HELP_LINE.match(line)
        if match:
            found[match[1]] = (match[2].strip('"'), match[4])
    return found
