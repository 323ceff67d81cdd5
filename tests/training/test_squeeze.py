"""The batch-size squeeze (hwlib.training.squeeze) and the hierarchical all-reduce: document 002's Table 6."""

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hwlib as hw
from hwlib.data import doc002
from hwlib.training.regimes import regime_fabric
from hwlib.training.squeeze import optimal_batch_tokens
from hwlib.viz.tables import SQUEEZE_COLUMNS

A100 = hw.chip("A100-80GB", source="doc002")
P = 12 * 4096**2 * 32  # document 002's Table 6: P = 12 d^2 L, no embeddings
NS = np.array([8, 64, 256, 1024])
KIND = {"nvlink": "scale-up", "ib": "scale-out"}  # 0.1's fabric names, 0.2's fabric kinds

# Document 002, Table 6, as printed: T_fixed {:7.0f}, B_opt / 1e6 {:5.2f}, T_dev,opt {:7.0f}
TABLE_6 = {
    "nvlink": (("702", "694", "694", "693"), ("0.07", "0.21", "0.42", "0.84"), ("9370", "3294", "1646", "823")),
    "ib": (("7376", "8202", "8290", "8313"), ("0.24", "0.72", "1.46", "2.92"), ("30364", "11321", "5691", "2849")),
}


def printed(squeeze):
    return (
        [f"{v:.0f}" for v in squeeze.fixed_cost_tokens],
        [f"{v / 1e6:.2f}" for v in squeeze.optimal_batch_tokens],
        [f"{v:.0f}" for v in squeeze.tokens_per_chip],
    )


@pytest.mark.parametrize("fabric", ["nvlink", "ib"])
def test_table_6_over_an_array_of_n(fabric):
    squeeze = hw.batch_squeeze(A100, P, NS, regime_fabric(A100, KIND[fabric]).bytes_per_s)
    fixed, best, per_device = printed(squeeze)
    assert (tuple(fixed), tuple(best), tuple(per_device)) == TABLE_6[fabric]


@pytest.mark.parametrize("fabric", ["nvlink", "ib"])
def test_table_6_point_by_point(fabric):
    for index, n in enumerate(NS):
        squeeze = hw.batch_squeeze(A100, P, int(n), regime_fabric(A100, KIND[fabric]).bytes_per_s)
        assert isinstance(squeeze.fixed_cost_tokens, float)
        assert f"{squeeze.fixed_cost_tokens:.0f}" == TABLE_6[fabric][0][index]
        assert f"{squeeze.optimal_batch_tokens / 1e6:.2f}" == TABLE_6[fabric][1][index]
        assert f"{squeeze.tokens_per_chip:.0f}" == TABLE_6[fabric][2][index]


def test_table_6_from_the_clusters_with_the_parity_column():
    table = hw.viz.squeeze_table([hw.cluster("doc002-nvlink"), hw.cluster("doc002-ib")], P, NS, parity_column=True)
    fixed, best, per_chip = (
        SQUEEZE_COLUMNS[k] for k in ("fixed_cost_tokens", "optimal_batch_tokens", "tokens_per_chip")
    )
    assert list(table.columns) == [*SQUEEZE_COLUMNS.values(), "comm parity at (tokens/chip)"]
    assert [f"{v:.0f}" for v in table[fixed]] == list(TABLE_6["nvlink"][0] + TABLE_6["ib"][0])
    assert [f"{v:.2f}" for v in table[best]] == list(TABLE_6["nvlink"][1] + TABLE_6["ib"][1])
    assert [f"{v:.0f}" for v in table[per_chip]] == list(TABLE_6["nvlink"][2] + TABLE_6["ib"][2])
    # the document's "comm parity at" column repeats T_fixed
    assert (table["comm parity at (tokens/chip)"] == table[fixed]).all()
    # the default chip counts and critical batch are the document's
    default = hw.viz.squeeze_table([hw.cluster("doc002-nvlink")], P)
    assert list(default.index.get_level_values("N")) == list(doc002.TABLE6_CHIP_COUNTS) == [8, 64, 256, 1024]
    assert [f"{v:.2f}" for v in default[best]] == list(TABLE_6["nvlink"][1])
    assert hw.batch_squeeze(A100, P, 8, 3e11).critical_batch_tokens == doc002.CRITICAL_BATCH.value == 1e6
    assert list(table.index.get_level_values("N")) == [8, 64, 256, 1024] * 2


def test_fixed_cost_by_hand():
    n, bandwidth = 64, 25e9
    t_fixed = 4 * P * (n - 1) / n / bandwidth + 30 * P / n / 2.039e12
    squeeze = hw.batch_squeeze(A100, P, n, bandwidth)
    assert squeeze.fixed_time_s == pytest.approx(t_fixed, rel=1e-12)
    assert squeeze.fixed_cost_tokens == pytest.approx(t_fixed * 312e12 / (6 * P), rel=1e-12)
    assert squeeze.optimal_batch_tokens == pytest.approx(math.sqrt(1e6 * n * squeeze.fixed_cost_tokens))
    assert squeeze.optimal_step_time_s == pytest.approx(t_fixed + squeeze.tokens_per_chip * 6 * P / 312e12)
    assert squeeze.optimal_time_ratio == pytest.approx((1 + math.sqrt(n * squeeze.fixed_cost_tokens / 1e6)) ** 2)


def test_hierarchical_allreduce_by_hand():
    # 64 A100s: 8 nodes of 8 on NVLink 3 (300 GB/s per direction), one HDR NIC (25 GB/s) per GPU
    expected = 4 * P * (7 / 8) / 300e9 + 4 * (P / 8) * (7 / 8) / 25e9
    assert hw.hierarchical_allreduce_time_s(P, 64, 300e9, 25e9, 8) == pytest.approx(expected, rel=1e-12)
    # inside one node it is the flat ring, and the network is not needed
    assert hw.hierarchical_allreduce_time_s(P, 8, 300e9, None, 8) == hw.allreduce_time_s(P, 8, 300e9)
    assert hw.hierarchical_allreduce_time_s(P, 4, 300e9, None, 8) == hw.allreduce_time_s(P, 4, 300e9)
    squeeze = hw.cluster_squeeze(hw.cluster("hgx-a100-hdr"), P, 64)
    assert squeeze.allreduce_time_s == pytest.approx(expected, rel=1e-12)
    assert f"{squeeze.fixed_cost_tokens:.0f}" == "1529"


def test_corrected_clusters_sit_between_the_documents_two_assumptions():
    nvlink = hw.cluster_squeeze(hw.cluster("doc002-nvlink"), P, NS)
    ib = hw.cluster_squeeze(hw.cluster("doc002-ib"), P, NS)
    hgx = hw.cluster_squeeze(hw.cluster("hgx-a100-hdr"), P, NS)
    assert hgx.fixed_cost_tokens[0] == pytest.approx(nvlink.fixed_cost_tokens[0])  # one node: NVLink only
    assert (hgx.fixed_cost_tokens[1:] > nvlink.fixed_cost_tokens[1:]).all()
    assert (hgx.fixed_cost_tokens < ib.fixed_cost_tokens).all()


def test_vector_and_scalar_agree_and_p_cancels():
    many = hw.batch_squeeze(A100, np.array([1e9, 7e9, 70e9])[:, None], NS, 25e9)
    assert many.fixed_cost_tokens.shape == (3, 4)
    np.testing.assert_allclose(many.fixed_cost_tokens, np.broadcast_to(many.fixed_cost_tokens[0], (3, 4)), rtol=1e-12)
    one = hw.batch_squeeze(A100, 7e9, 256, 25e9)
    assert one.allreduce_time_s == pytest.approx(many.allreduce_time_s[1, 2])


def test_flops_per_token_gives_table_5s_counting():
    # Table 5 moves embedding bytes but counts only the layers' FLOPs: T_fixed grows by P_total / P_layers
    total = hw.transformer_params(4096, 32, vocab=50000)
    mixed = hw.batch_squeeze(A100, total, 64, 25e9, flops_per_token=6 * P)
    same = hw.batch_squeeze(A100, P, 64, 25e9)
    assert mixed.fixed_cost_tokens / same.fixed_cost_tokens == pytest.approx(total / P)


def test_time_to_target_minimum_is_the_closed_form():
    squeeze = hw.batch_squeeze(A100, P, NS, 25e9)
    batches = np.geomspace(1e3, 1e10, 20001)
    curve = hw.time_to_target(squeeze, batches[:, None], 1e11)
    best = batches[np.argmin(curve.time_s, axis=0)]
    np.testing.assert_allclose(best, squeeze.optimal_batch_tokens, rtol=2e-3)
    np.testing.assert_allclose(curve.ratio.min(axis=0), squeeze.optimal_time_ratio, rtol=1e-6)
    np.testing.assert_allclose(curve.tokens, curve.steps * batches[:, None])
    at = hw.time_to_target(hw.batch_squeeze(A100, P, 64, 25e9), 1e6, 1e11)
    assert at.steps == pytest.approx(1e11 / 1e6 * 2) and at.tokens == pytest.approx(2e11)


def test_critical_batch_from_loss():
    assert hw.critical_batch_from_loss(3.0) == pytest.approx(2e8 / 3.0 ** (1 / 0.21))
    assert 0.9e6 < hw.critical_batch_from_loss(3.0) < 1.2e6  # about document 002's 1e6
    losses = np.array([4.0, 3.0, 2.5, 2.0])
    assert (np.diff(hw.critical_batch_from_loss(losses)) > 0).all()


sizes = st.floats(min_value=1e8, max_value=1e12)
counts = st.sampled_from([1, 2, 8, 16, 64, 512, 4096])
rates = st.floats(min_value=1e9, max_value=2e12)


@given(sizes, counts, rates, rates)
@settings(max_examples=60, deadline=None)
def test_t_fixed_falls_with_fabric_bandwidth(params, n, slow, extra):
    fast = slow + extra
    assert (
        hw.batch_squeeze(A100, params, n, fast).fixed_cost_tokens
        <= hw.batch_squeeze(A100, params, n, slow).fixed_cost_tokens
    )


@given(sizes, counts, rates, st.floats(min_value=1e4, max_value=1e9))
@settings(max_examples=60, deadline=None)
def test_b_opt_grows_as_sqrt_n_t_fixed(params, n, rate, critical):
    squeeze = hw.batch_squeeze(A100, params, n, rate, critical)
    assert squeeze.optimal_batch_tokens**2 == pytest.approx(critical * n * squeeze.fixed_cost_tokens, rel=1e-9)
    assert squeeze.optimal_batch_tokens == pytest.approx(squeeze.tokens_per_chip * n)
    four = hw.batch_squeeze(A100, params, n, rate, 4 * critical)
    assert four.optimal_batch_tokens == pytest.approx(2 * squeeze.optimal_batch_tokens)


@given(sizes, st.sampled_from([1, 2, 4, 8, 16, 64, 1024]), rates, rates)
@settings(max_examples=60, deadline=None)
def test_hierarchical_is_never_slower_than_a_flat_ring_over_the_nics(params, n, network, extra):
    node = network + extra
    hierarchical = hw.hierarchical_allreduce_time_s(params, n, node, network, 8)
    assert hierarchical <= hw.allreduce_time_s(params, n, network) * (1 + 1e-12)
    # with equal bandwidths the two are the same
    assert hw.hierarchical_allreduce_time_s(params, n, network, network, 8) == pytest.approx(
        hw.allreduce_time_s(params, n, network), rel=1e-12
    )


@given(st.floats(min_value=1e2, max_value=1e10), st.floats(min_value=1e3, max_value=1e9))
@settings(max_examples=60, deadline=None)
def test_steps_and_examples_trade_off_as_mccandlish(batch, critical):
    min_steps = 1e4
    steps = hw.steps_to_target(batch, min_steps, critical)
    tokens = hw.tokens_to_target(batch, min_steps * critical, critical)
    assert steps * batch == pytest.approx(tokens)
    assert (steps / min_steps - 1) * (tokens / (min_steps * critical) - 1) == pytest.approx(1.0)


def test_plot_time_to_target():
    hgx = hw.cluster("hgx-a100-hdr")
    ax = hw.viz.plot_time_to_target(hgx, P, (8, 1024), min_tokens=1e11)
    assert "days" in ax.get_ylabel() and "tokens" in ax.get_xlabel()
    line = ax.get_lines()[0]
    squeeze = hw.cluster_squeeze(hgx, P, 8)
    expected = hw.time_to_target(squeeze, line.get_xdata(), 1e11).time_s / 86400
    np.testing.assert_allclose(line.get_ydata(), expected)
    marker = ax.get_lines()[2]
    assert marker.get_xdata()[0] == pytest.approx(squeeze.optimal_batch_tokens)
    legend = ax.get_legend()
    assert legend.get_bbox_to_anchor().y1 < ax.get_window_extent().y0 + 1  # below the axes
    plt.close("all")


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: hw.batch_squeeze("A100", P, 8, 25e9), TypeError, "chip must be a Chip record"),
        (lambda: hw.batch_squeeze(A100, -1, 8, 25e9), ValueError, "n_params must be > 0"),
        (lambda: hw.batch_squeeze(A100, P, 1.5, 25e9), ValueError, "n_chips must be a whole number"),
        (lambda: hw.batch_squeeze(A100, P, 0, 25e9), ValueError, "n_chips must be > 0"),
        (lambda: hw.batch_squeeze(A100, P, 8, float("nan")), ValueError, "fabric_bytes_per_s must not be NaN"),
        (lambda: hw.batch_squeeze(A100, P, 8, 25e9, 0), ValueError, "critical_batch_tokens must be > 0"),
        (lambda: hw.batch_squeeze(A100, P, 8, 25e9, b_opt=-1), ValueError, "b_opt must be >= 0"),
        (lambda: hw.batch_squeeze(A100, P, 8, 25e9, dtype="fp8"), KeyError, "has no sourced peak"),
        (lambda: hw.batch_squeeze(A100, P, 64, 25e9, node_size=8), ValueError, "node_bytes_per_s is needed"),
        (lambda: hw.batch_squeeze(A100, P, 64, 25e9, node_bytes_per_s=3e11), ValueError, "used only with node_size"),
        (lambda: hw.batch_squeeze(A100, P, [8, 64], [1e9, 2e9, 3e9]), ValueError, "must broadcast together"),
        (lambda: hw.batch_squeeze(A100, "7B", 8, 25e9), TypeError, "n_params must be a real number"),
        (lambda: hw.hierarchical_allreduce_time_s(P, 12, 3e11, 25e9, 8), ValueError, "whole number of nodes"),
        (lambda: hw.hierarchical_allreduce_time_s(P, 64, 3e11, None, 8), ValueError, "network_bytes_per_s is needed"),
        (lambda: hw.hierarchical_allreduce_time_s(P, 64, 3e11, 25e9, 0), ValueError, "node_size must be > 0"),
        (lambda: hw.hierarchical_allreduce_time_s(P, 64, 3e11, -1.0, 8), ValueError, "network_bytes_per_s must be > 0"),
        (lambda: optimal_batch_tokens(1e6, 8, -1), ValueError, "fixed_cost_tokens must be >= 0"),
        (lambda: optimal_batch_tokens(None, 8, 100), TypeError, "critical_batch_tokens must be a real number"),
        (lambda: hw.critical_batch_from_loss(0), ValueError, "loss_nats must be > 0"),
        (lambda: hw.steps_to_target(0, 1e4), ValueError, "batch_tokens must be > 0"),
        (lambda: hw.steps_to_target(1e6, -1), ValueError, "min_steps must be > 0"),
        (lambda: hw.tokens_to_target(1e6, float("inf")), ValueError, "min_tokens must be finite"),
        (lambda: hw.time_to_target("squeeze", 1e6, 1e11), TypeError, "squeeze must be a BatchSqueeze"),
        (
            lambda: hw.time_to_target(hw.batch_squeeze(A100, P, NS, 25e9), np.ones(3) * 1e6, 1e11),
            ValueError,
            "add an axis",
        ),
        (lambda: hw.time_to_target(hw.batch_squeeze(A100, P, 8, 25e9), 1e6, 0), ValueError, "min_tokens must be > 0"),
        (lambda: hw.cluster_squeeze("hgx-a100-hdr", P, 8), TypeError, "cluster must be a Cluster record"),
        (lambda: hw.cluster_squeeze(hw.cluster("tpu-v5p"), P, 8192), ValueError, "at most 6144"),
        (lambda: hw.cluster_squeeze(hw.cluster("hgx-a100-hdr"), P, 12), ValueError, "whole number of nodes"),
        (lambda: hw.viz.squeeze_table([], P), TypeError, "clusters must be a non-empty sequence"),
        (
            lambda: hw.viz.squeeze_table([hw.cluster("doc002-ib")], P, parity_column="yes"),
            TypeError,
            "parity_column must be True or False",
        ),
        (lambda: hw.viz.squeeze_table([hw.cluster("doc002-ib")], P, [8, 0]), ValueError, "n_chips must be > 0"),
        (lambda: hw.viz.plot_time_to_target("hgx", P, min_tokens=1e11), TypeError, "cluster must be a Cluster record"),
    ],
)
def test_bad_input_names_the_parameter(call, error, words):
    with pytest.raises(error, match=words):
        call()
    plt.close("all")


@given(sizes, sizes, counts, rates, st.sampled_from([None, 8]))
@settings(max_examples=60, deadline=None)
def test_model_size_cancels_in_t_fixed_and_b_opt(first, second, n, rate, node_size):
    node = None if node_size is None else 3e11
    if node_size is not None and n > node_size and n % node_size:
        return
    one = hw.batch_squeeze(A100, first, n, rate, node_size=node_size, node_bytes_per_s=node)
    two = hw.batch_squeeze(A100, second, n, rate, node_size=node_size, node_bytes_per_s=node)
    assert one.fixed_cost_tokens == pytest.approx(two.fixed_cost_tokens, rel=1e-9)
    assert one.optimal_batch_tokens == pytest.approx(two.optimal_batch_tokens, rel=1e-9)
    assert one.fixed_time_s / first == pytest.approx(two.fixed_time_s / second, rel=1e-9)
