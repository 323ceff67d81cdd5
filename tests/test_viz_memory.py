"""Memory figures (hwlib.viz.memory_figures): activations, largest model, KV cache per token, decode bound.

Ported from the 0.1 tests/test_memory_plots_widgets.py without its explorer tests (tests/test_explorers.py).
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest

import hwlib as hw
from hwlib.viz.memory_figures import plot_activations, plot_decode_bound, plot_kv_per_token, plot_max_params

GiB = 2**30


def test_activation_plot_draws_each_strategy_in_gib():
    seq = np.array([1024, 2048, 4096])
    ax = plot_activations(seq, d=4096, n_heads=32, n_layers=32, tensor_parallel=8, chip=hw.chip("H100-SXM"))
    assert hw.viz.plot_activations is plot_activations  # the lazy top-level name is the viz function
    assert "GiB" in ax.get_ylabel() and "tokens" in ax.get_xlabel()
    first = ax.get_lines()[0]
    np.testing.assert_allclose(first.get_ydata(), 32 * hw.activation_bytes(seq, 1, 4096, 32) / GiB)
    plt.close("all")


def test_max_params_plot_bars_are_capacity_over_bytes_per_param():
    ax = plot_max_params({"one chip": 16e9, "two chips": 32e9}, ["fp32_adam", "zero_mixed_adam"])
    widths = [bar.get_width() for bar in ax.patches]
    np.testing.assert_allclose(widths, [1.0, 1.0, 2.0, 2.0])
    assert "billion parameters" in ax.get_xlabel()
    plt.close("all")


def test_kv_plots():
    models = [hw.model("llama-2-7b"), hw.model("falcon-7b")]
    ax = plot_kv_per_token(models, ("bf16", "int8"))
    np.testing.assert_allclose([bar.get_width() for bar in ax.patches], [512, 8, 256, 4])
    h100, llama3 = hw.chip("H100-SXM"), hw.model("llama-3-8b")
    ax = plot_decode_bound(llama3, h100, 8192, np.array([1, 2, 4, 1024]))
    bf16 = ax.get_lines()[2]  # fp32 line and its end marker come first
    largest = hw.tokens_that_fit(h100, llama3.weight_bytes(), hw.kv_cache_bytes(1, llama3)) // 8192
    np.testing.assert_array_equal(bf16.get_xdata(), [1, 2, 4, largest])
    full = 1e3 * hw.usable_bytes(h100) / h100.hbm_bytes_per_s
    one_sequence = 1e3 * hw.kv_cache_bytes(8192, llama3) / h100.hbm_bytes_per_s
    # a step reads every matmul weight but only the batch's rows of the embedding table
    embedding = 1e3 * llama3.param_breakdown()["embedding"] * 2 / h100.hbm_bytes_per_s
    assert full - one_sequence - embedding < bf16.get_ydata()[-1] <= full
    assert "ms" in ax.get_ylabel()
    plt.close("all")


def test_plots_reject_bad_input():
    with pytest.raises(KeyError, match="unknown recipe 'adam'"):
        plot_max_params({"chip": 1e9}, ["adam"])
    with pytest.raises(TypeError, match="capacities must be a non-empty dict"):
        plot_max_params([1e9])
    with pytest.raises(ValueError, match="capacities must be >= 0"):
        plot_max_params({"chip": -1.0})
    with pytest.raises(TypeError, match="models must be ModelShape records"):
        plot_kv_per_token(["llama-3-8b"])
    with pytest.raises(TypeError, match="models must be ModelShape records"):
        plot_decode_bound("llama-3-8b", hw.chip("H100-SXM"), 8192, np.array([1, 2]))
    with pytest.raises(ValueError, match="seq_len must be > 0"):
        plot_activations(np.array([0, 1]), d=4096, n_heads=32, n_layers=32)
    plt.close("all")
