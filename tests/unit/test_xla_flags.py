import pytest

from helpers import xla_flags


def test_flag_names_are_found_once_each():
    text = ("XLA_FLAGS='--xla_gpu_triton_gemm_any=true "
            "--xla_dump_to=/tmp/x' and again --xla_dump_to")
    assert xla_flags.flag_names(text) == ["--xla_gpu_triton_gemm_any",
                                          "--xla_dump_to"]


@pytest.mark.slow
def test_unknown_flags_are_reported_without_killing_the_caller():
    found = xla_flags.unknown(["--xla_dump_to=/tmp/book-dump",
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
        xla_flags.unknown(["-xla_dump_to"])
