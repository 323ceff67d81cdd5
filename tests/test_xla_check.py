import pytest

import hwlib as hw
from hwlib import xla_check

pytest.importorskip("jax")


def test_xla_counts_the_72_d2_t_matmul_flops_plus_elementwise_work():
    d, T = 64, 32
    xla = xla_check.xla_layer_flops(d, T)
    model = hw.layer_flops(d, T)
    assert xla_check.xla_matmul_flops(d, T) == model == 72 * d * d * T
    extra_per_token_per_d = (xla - model) / (T * d)
    assert 0 < extra_per_token_per_d < 200  # element-wise work only: O(d T), not O(d^2 T)
    assert abs(xla / model - 1) < 200 / (72 * d)


def test_without_the_input_gradient_xla_drops_the_first_projections_backward():
    d, T = 64, 32
    weights_only = xla_check.xla_layer_flops(d, T, input_gradient=False)
    matmuls = xla_check.xla_matmul_flops(d, T, input_gradient=False)
    assert matmuls == 66 * d * d * T
    assert 0 < (weights_only - matmuls) / (T * d) < 200


def test_comparison_table_has_one_row_per_shape():
    table = xla_check.compare_with_xla([32, 64], 16)
    assert list(table.index) == [(32, 16), (64, 16)]
    assert (table["relative gap"] > 0).all()


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: xla_check.xla_layer_flops(0, 4), ValueError, "d must be > 0"),
        (lambda: xla_check.xla_layer_flops(8, 2.5), ValueError, "T must be a whole number"),
        (lambda: xla_check.xla_layer_flops([8, 16], 4), TypeError, "d must be one whole number"),
        (lambda: xla_check.xla_layer_flops(8, 4, input_gradient="yes"), TypeError, "input_gradient must be"),
        (lambda: xla_check.xla_matmul_flops(8, -1), ValueError, "T must be > 0"),
        (lambda: xla_check.compare_with_xla([8, 16], [4, 4, 4]), ValueError, "must broadcast together"),
        (lambda: xla_check.compare_with_xla("8", 4), TypeError, "ds must be a real number"),
    ],
)
def test_bad_input_names_the_parameter(call, error, words):
    with pytest.raises(error, match=words):
        call()
