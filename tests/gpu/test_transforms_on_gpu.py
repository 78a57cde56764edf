"""Chapter 5 on a GPU: the backend that keeps remat's recomputation, and
a recording that is JSON."""

import json

import pytest

from helpers.workbook.ch05_transformations import claims, transforms

pytestmark = pytest.mark.gpu


def test_the_gpu_backend_keeps_the_recomputation_and_saves_memory():
    table = transforms.remat_table(512, 2048, 1024)
    assert table.loc[True, "dots"] > table.loc[False, "dots"]
    assert table.loc[True, "temp MB"] < table.loc[False, "temp MB"]


def test_the_reference_measurement_is_json_and_decided():
    data = claims.measure(claims.CPU_SIZES)  # small sizes, on the GPU
    json.dumps(data)
    assert len(claims.findings(data)) == 7
