"""Two JAX processes on loopback run one sharded program and agree."""

import pytest

from helpers.multi_device import distributed

JOB = """
import jax, jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P
from helpers.multi_device.distributed import initialize_from_env
me = initialize_from_env()
mesh = jax.make_mesh((jax.device_count(),), ("d",))
x = jax.make_array_from_callback(
    (8,), NamedSharding(mesh, P("d")), lambda i: np.arange(8.0)[i])
total = jax.jit(lambda v: jnp.sum(v ** 2),
                out_shardings=NamedSharding(mesh, P()))(x)
print(me, jax.process_count(), jax.device_count(),
      float(total.addressable_data(0)))
jax.distributed.shutdown()
"""


@pytest.mark.slow
def test_two_processes_agree_on_a_sharded_sum():
    outputs = distributed.run_local(JOB, processes=2, devices_per_process=2,
                                    timeout_s=120)
    # gloo prints its own connection lines first; ours is the last.
    assert [o.splitlines()[-1].split() for o in outputs] == [
        ["0", "2", "4", "140.0"], ["1", "2", "4", "140.0"]]


def test_a_failing_process_is_reported_with_its_output():
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        distributed.run_local("1 / 0", timeout_s=60)


@pytest.mark.slow
def test_a_hung_job_is_killed_after_the_limit():
    with pytest.raises(RuntimeError, match="timed out"):
        distributed.run_local("import time; time.sleep(60)", timeout_s=2)


def test_bad_arguments_and_missing_environment_are_named(monkeypatch):
    with pytest.raises(ValueError, match="processes >= 2"):
        distributed.run_local("pass", processes=1)
    monkeypatch.delenv("BOOK_DISTRIBUTED_ID", raising=False)
    with pytest.raises(RuntimeError, match="run_local"):
        distributed.initialize_from_env()
