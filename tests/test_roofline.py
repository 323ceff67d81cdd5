"""hwlib.roofline: document 000's ridge points (240.5, 166.0, 573.8) and the matmul's counts."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hwlib as hw

V5E_DOC = hw.chip("v5e", source="doc000")
dims = st.integers(min_value=1, max_value=1 << 20)


def test_document_000_ridge_points():
    ridges = {key: hw.ridge_point(hw.chip(key, source="doc000")) for key in ("v5e", "v5p", "v6e")}
    assert ridges["v5e"] == 197e12 / 819e9
    assert {key: round(value, 1) for key, value in ridges.items()} == {"v5e": 240.5, "v5p": 166.0, "v6e": 573.8}
    assert ridges["v6e"] == 573.75


def test_square_bf16_matmul_intensity_is_n_over_3():
    assert hw.matmul_intensity(1024, 1024, 1024) == 1024 / 3
    assert hw.matmul_flops(1024, 1024, 1024) == 2 * 1024**3
    assert hw.matmul_bytes(1024, 1024, 1024) == 3 * 2 * 1024**2


def test_matmul_counts_for_a_rectangular_shape():
    assert hw.matmul_flops(2, 3, 5) == 60
    assert hw.matmul_bytes(2, 3, 5, bytes_per_element=4) == 4 * (6 + 15 + 10)
    assert hw.matmul_intensity(2, 3, 5, bytes_per_element=4) == 60 / 124
    assert hw.matmul_bytes(4, 4, 4, bytes_per_element=0.5) == 0.5 * 48


def test_matmul_is_vectorised_and_broadcasts():
    n = np.array([1, 64, 1024])
    np.testing.assert_allclose(hw.matmul_intensity(n, n, n), n / 3)
    grid = hw.matmul_flops(np.arange(1, 4)[:, None], 7, np.arange(1, 5)[None, :])
    assert grid.shape == (3, 4) and grid[2, 3] == 2 * 3 * 7 * 4


def test_attainable_is_the_roofline():
    ridge = hw.ridge_point(V5E_DOC)
    assert hw.attainable_flops_per_s(ridge / 2, V5E_DOC) == pytest.approx(197e12 / 2)
    assert hw.attainable_flops_per_s(ridge * 2, V5E_DOC) == 197e12
    assert hw.attainable_flops_per_s(0, V5E_DOC) == 0
    assert hw.attainable_flops_per_s(np.inf, V5E_DOC) == 197e12
    values = hw.attainable_flops_per_s(np.array([1.0, 10.0]), V5E_DOC)
    np.testing.assert_array_equal(values, [819e9, 8190e9])


def test_bound_and_time():
    ridge = hw.ridge_point(V5E_DOC)
    assert hw.is_compute_bound(ridge, V5E_DOC) is True
    assert hw.is_compute_bound(ridge * 0.999, V5E_DOC) is False
    np.testing.assert_array_equal(hw.is_compute_bound([1, 1e4], V5E_DOC), [False, True])
    assert hw.roofline_time_s(197e12, 1, V5E_DOC) == 1.0
    assert hw.roofline_time_s(1, 819e9, V5E_DOC) == 1.0
    assert hw.roofline_time_s(0, 0, V5E_DOC) == 0.0


def test_elementwise_intensity():
    assert hw.elementwise_intensity() == 1 / 6
    assert hw.elementwise_intensity(flops_per_element=1, arrays_touched=2, bytes_per_element=4) == 1 / 8


@given(dims, dims, dims)
def test_intensity_is_flops_over_bytes_and_bounded_by_the_smallest_dimension(m, k, n):
    intensity = hw.matmul_intensity(m, k, n)
    assert math.isclose(intensity, hw.matmul_flops(m, k, n) / hw.matmul_bytes(m, k, n))
    # with bf16, I = mkn / (mk + kn + mn) <= min(m, k, n)
    assert intensity <= min(m, k, n) * (1 + 1e-12)


@given(dims, dims)
def test_intensity_grows_with_n(m, k):
    n = np.arange(1, 200)
    assert np.all(np.diff(hw.matmul_intensity(m, k, n)) > 0)


@given(st.floats(min_value=0, max_value=1e6, allow_nan=False))
def test_attainable_never_exceeds_peak_or_bandwidth_line(intensity):
    value = hw.attainable_flops_per_s(intensity, V5E_DOC)
    assert value <= 197e12
    assert value <= intensity * 819e9 * (1 + 1e-12)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: hw.ridge_point("v5e"), TypeError, "chip must be a Chip record"),
        (lambda: hw.ridge_point(V5E_DOC, "fp8"), KeyError, "no sourced peak"),
        (lambda: hw.attainable_flops_per_s(-1, V5E_DOC), ValueError, "intensity must be >= 0"),
        (lambda: hw.attainable_flops_per_s(float("nan"), V5E_DOC), ValueError, "intensity must not be NaN"),
        (lambda: hw.attainable_flops_per_s("1", V5E_DOC), TypeError, "intensity must be a real number"),
        (lambda: hw.matmul_flops(0, 1, 1), ValueError, "m must be > 0"),
        (lambda: hw.matmul_flops(1, 1.5, 1), ValueError, "k must be a whole number"),
        (lambda: hw.matmul_bytes(1, 1, 1, bytes_per_element=0), ValueError, "bytes_per_element must be > 0"),
        (lambda: hw.matmul_intensity(1, 1, [1, -2]), ValueError, "n must be > 0"),
        (lambda: hw.matmul_flops([1, 2], [1, 2, 3], 1), ValueError, "must broadcast together"),
        (lambda: hw.roofline_time_s(-1, 1, V5E_DOC), ValueError, "flops must be >= 0"),
        (lambda: hw.roofline_time_s(1, None, V5E_DOC), TypeError, "n_bytes must be a real number"),
        (lambda: hw.is_compute_bound(1, None), TypeError, "chip must be a Chip record"),
        (lambda: hw.elementwise_intensity(arrays_touched=2.5), ValueError, "arrays_touched must be a whole number"),
    ],
)
def test_bad_input_names_the_parameter(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_matmul_bytes_per_operand():
    # (m x k) bf16 activations @ (k x n) int8 weights -> bf16 output
    assert hw.matmul_bytes(8, 4096, 4096, rhs_bytes_per_element=1) == 8 * 4096 * 2 + 4096 * 4096 * 1 + 8 * 4096 * 2
    assert hw.matmul_bytes(8, 4096, 4096) == hw.matmul_bytes(
        8, 4096, 4096, lhs_bytes_per_element=2, rhs_bytes_per_element=2, out_bytes_per_element=2
    )
    # int8 weights halve the batch at which a weight matmul reaches a ridge point: intensity ~ 2 m / b_weight
    h100 = hw.chip("H100-SXM")
    batches = np.arange(1, 2000)
    bf16 = batches[np.asarray(hw.matmul_intensity(batches, 8192, 8192)) >= hw.ridge_point(h100)][0]
    int8 = batches[
        np.asarray(hw.matmul_intensity(batches, 8192, 8192, rhs_bytes_per_element=1)) >= hw.ridge_point(h100)
    ][0]
    assert int8 == pytest.approx(bf16 / 2, rel=0.05)
    with pytest.raises(ValueError, match="rhs_bytes_per_element must be > 0"):
        hw.matmul_bytes(8, 8, 8, rhs_bytes_per_element=0)


def test_the_layer_models_constants_come_from_the_model_shape():
    from hwlib import layer_model

    assert layer_model.PARAMS_PER_LAYER_PER_D2 == 12 and layer_model.FLOPS_PER_TOKEN_PER_D2 == 72
    assert layer_model.SCORE_FLOPS_PER_TOKEN_PER_SD == 12
