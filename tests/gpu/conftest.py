"""The GPU tests' JUnit file names the GPU it ran on (a ``device``
property of the test suite), so that a page quoting the run can say
which GPU graded it (`helpers.measuring.recorded.test_run_device`)."""

import pytest


@pytest.fixture(scope="session", autouse=True)
def _name_the_gpu(record_testsuite_property):
    from helpers.measuring import machine

    record_testsuite_property("device", machine.describe()["device"])
