"""XLA's own FLOP counts against hwlib's 72 d^2 T (hwlib.measure.xla; 0.1's hwlib.xla_check).

Each call compiles one small layer (d, T of a few dozen), so the file runs in seconds.
"""

import pytest

import hwlib as hw
from hwlib.measure import xla

pytest.importorskip("jax")


def test_xla_counts_the_72_d2_t_matmul_flops_plus_elementwise_work():
    d, T = 64, 32
    counted = hw.measure.xla_layer_flops(d, T)
    model = hw.layer_flops(d, T)
    assert xla.xla_matmul_flops(d, T) == model == 72 * d * d * T
    extra_per_token_per_d = (counted - model) / (T * d)
    assert 0 < extra_per_token_per_d < 200  # element-wise work only: O(d T), not O(d^2 T)
    assert abs(counted / model - 1) < 200 / (72 * d)


def test_without_the_input_gradient_xla_drops_the_first_projections_backward():
    d, T = 64, 32
    weights_only = hw.measure.xla_layer_flops(d, T, input_gradient=False)
    matmuls = xla.xla_matmul_flops(d, T, input_gradient=False)
    assert matmuls == 66 * d * d * T
    assert 0 < (weights_only - matmuls) / (T * d) < 200


def test_comparison_table_has_one_row_per_shape():
    # 0.1's hw.compare_with_xla(ds, Ts) is hw.viz.xla_layer_table(ds, Ts)
    table = hw.viz.xla_layer_table([32, 64], 16)
    assert list(table.index) == [(32, 16), (64, 16)]
    assert (table["relative gap"] > 0).all()
    assert table.loc[(32, 16), "hwlib (MFLOP)"] == hw.layer_flops(32, 16) / 1e6
    extra = table["extra per token per d (FLOP)"]
    assert ((extra > 0) & (extra < 200)).all()
    assert (table["weights only / hwlib"] < 1 + table["relative gap"]).all()


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: hw.measure.xla_layer_flops(0, 4), ValueError, "d must be > 0"),
        (lambda: hw.measure.xla_layer_flops(8, 2.5), ValueError, "T must be a whole number"),
        (lambda: hw.measure.xla_layer_flops([8, 16], 4), TypeError, "d must be one whole number"),
        (lambda: hw.measure.xla_layer_flops(8, 4, input_gradient="yes"), TypeError, "input_gradient must be"),
        (lambda: xla.xla_matmul_flops(8, -1), ValueError, "T must be > 0"),
        (lambda: hw.viz.xla_layer_table([8, 16], [4, 4, 4]), ValueError, "must broadcast together"),
        (lambda: hw.viz.xla_layer_table("8", 4), TypeError, "ds must be a real number"),
        (lambda: hw.viz.xla_layer_table(8, 0), ValueError, "Ts must be > 0"),
    ],
)
def test_bad_input_names_the_parameter(call, error, words):
    with pytest.raises(error, match=words):
        call()
