import pytest

from helpers.xla import known_flags


def test_flag_names_are_found_once_each():
    text = ("XLA_FLAGS='--xla_gpu_triton_gemm_any=true "
            "--xla_dump_to=/tmp/x' and again --xla_dump_to")
    assert known_flags.flag_names(text) == ["--xla_gpu_triton_gemm_any",
                                          "--xla_dump_to"]


@pytest.mark.slow
def test_unknown_flags_are_reported_without_killing_the_caller():
    found = known_flags.unknown(["--xla_dump_to=/tmp/book-dump",
                               "--xla_gpu_triton_gemm_any",
                               "--xla_gpu_autotune_level",  # needs a value
                               # a list whose values are names, not numbers
                               "--xla_gpu_enable_command_buffer",
                               "--xla_surely_not_a_flag=1",
                               "--xla_surely_not_a_flag_either"])
    assert found == ["--xla_surely_not_a_flag=1",
                     "--xla_surely_not_a_flag_either"]


def test_bad_input():
    with pytest.raises(ValueError, match="not XLA flags"):
        known_flags.unknown(["-xla_dump_to"])


def _simulated_xla(types):
    """A stand-in for a child starting JAX with XLA_FLAGS, parsing as XLA
    does: a bare flag that needs a value and an unknown name are both
    listed as unknown; a value it cannot read stops parsing first (with a
    message naming the flag, or, for some flags, none)."""
    started = []

    def start(flags, timeout):
        started.append(flags)
        unknown, unreadable, silent = [], [], False
        for flag in flags.split():
            name, has_value, value = flag.partition("=")
            kind = types.get(name)
            if kind is None or (not has_value and kind != "bool"):
                unknown.append(flag)
            elif kind == "int" and not value.isdigit():
                unreadable.append(name[2:])
            elif kind == "silent":
                silent = True
        if unreadable or silent:
            return "".join(f"Couldn't interpret value  for flag {n}.\n"
                           for n in unreadable) + "Flag parsing failed."
        if unknown:
            return "Unknown flags in XLA_FLAGS: " + " ".join(unknown)
        return None
    return start, started


def test_unknown_flags_are_sorted_out_in_a_few_starts(monkeypatch):
    types = {"--xla_int": "int", "--xla_list": "list",
             "--xla_bool": "bool", "--xla_enum": "silent",
             "--xla_int2": "int"}
    start, started = _simulated_xla(types)
    monkeypatch.setattr(known_flags, "_start_jax_in_child", start)
    flags = ["--xla_int", "--xla_list", "--xla_bool", "--xla_enum",
             "--xla_int2", "--xla_nope", "--xla_nope2=1"]
    assert known_flags.unknown(flags) == ["--xla_nope", "--xla_nope2=1"]
    # one child per flag would take a dozen; by halves and leaving out the
    # flags XLA found, it takes a few
    assert len(started) <= 8, started
