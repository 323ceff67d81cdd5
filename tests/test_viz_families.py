"""Figures of the 2025-2026 model families (hwlib.viz.family_figures): each returns an Axes and draws the numbers
hwlib computes."""

from dataclasses import replace

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest

import hwlib as hw
from hwlib.viz import family_figures

GiB = 2**30
MOES = [hw.model(key) for key in ("mixtral-8x7b", "deepseek-v3", "llama-4-maverick")]


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_the_names_load_lazily_from_their_module():
    for name in ("plot_moe_usage", "plot_kv_per_sequence", "plot_attention_masks", "plot_mla_flops"):
        assert getattr(hw.viz, name) is getattr(family_figures, name)
    for name in ("plot_decode_vs_context", "plot_experts_touched"):
        assert getattr(hw.viz, name) is getattr(family_figures, name)


def test_moe_usage_stacks_every_part_to_the_stored_and_the_active_count():
    ax = hw.viz.plot_moe_usage(MOES)
    assert isinstance(ax, plt.Axes)
    groups = len(family_figures.USAGE_PARTS)
    widths = np.array([bar.get_width() for bar in ax.patches]).reshape(groups, 2 * len(MOES))
    totals = widths.sum(axis=0)  # per bar: stored, one token, stored, one token, ...
    np.testing.assert_allclose(totals[::2], 100.0)
    expected = [100 * m.params(active=True) / m.params() for m in MOES]
    np.testing.assert_allclose(totals[1::2], expected)
    deepseek = hw.model("deepseek-v3").param_breakdown()
    shared = widths[1, 2]  # the shared experts' segment of DeepSeek-V3's stored bar
    assert shared == pytest.approx(100 * deepseek["shared experts"] / hw.model("deepseek-v3").params())
    assert "%" in ax.get_xlabel()


def test_kv_per_sequence_draws_model_kv_bytes():
    models = [hw.model("mistral-7b"), hw.model("deepseek-v3"), hw.model("gemma-3-27b")]
    contexts = [1024, 8192, 131072]
    ax = hw.viz.plot_kv_per_sequence(models, contexts, "fp8")
    assert isinstance(ax, plt.Axes) and "GiB" in ax.get_ylabel()
    for line, model in zip(ax.get_lines(), models):
        np.testing.assert_allclose(line.get_ydata(), model.kv_bytes(np.array(contexts), "fp8") / GiB)
    mistral = ax.get_lines()[0].get_ydata()
    assert mistral[1] == mistral[2]  # every layer stops at its 4,096-token window
    assert "sliding 4,096 in every layer" in ax.get_lines()[0].get_label()
    assert "MLA, global" in ax.get_lines()[1].get_label()


def test_attention_masks_show_what_the_newest_token_reads():
    ax = hw.viz.plot_attention_masks(10, 4)
    assert isinstance(ax, plt.Axes)
    titles = [text.get_text() for text in ax.texts]
    assert titles == [
        "global: the newest token\nreads 10 of 10 keys",
        "sliding: the newest token\nreads 4 of 10 keys",
        "chunked: the newest token\nreads 2 of 10 keys",
    ]
    attended = [len(collection.get_offsets()) for collection in ax.collections[::2]]
    # causal: 1 + ... + 10; sliding: 1 + 2 + 3, then 4 for each of 7 tokens; chunks of 4, 4 and 2 tokens
    assert attended == [55, 6 + 4 * 7, 10 + 10 + 3]
    with pytest.raises(ValueError, match="window must be smaller"):
        hw.viz.plot_attention_masks(4, 4)


def test_mla_flops_are_the_tables_per_new_token():
    model, new = hw.model("deepseek-v3"), np.array([1, 64, 4096])
    ax = hw.viz.plot_mla_flops(model, 32768, new)
    naive, absorbed, auto = (line.get_ydata() for line in ax.get_lines())
    table = model.table()
    np.testing.assert_allclose(naive, table.attention_flops(new, 32768, mla="naive") / new / 1e9)
    np.testing.assert_allclose(absorbed, table.attention_flops(new, 32768, mla="absorbed") / new / 1e9)
    np.testing.assert_allclose(auto, np.minimum(naive, absorbed))
    assert absorbed[0] < naive[0] and naive[-1] < absorbed[-1]  # absorbed for decode, naive for long prefill
    with pytest.raises(ValueError, match="no latent attention"):
        hw.viz.plot_mla_flops(hw.model("llama-3-8b"), 1024, new)


def test_decode_vs_context_draws_bound_and_forecast_up_to_the_last_context_that_fits():
    gemma = hw.model("gemma-3-27b")
    every_layer = replace(gemma, windows=(), name="every layer global")
    chip, contexts = hw.chip("H200"), np.array([8192, 32768, 131072])
    ax = hw.viz.plot_decode_vs_context([gemma, every_layer], chip, contexts, 4, 1, "fp8", "fp8")
    assert isinstance(ax, plt.Axes) and "ms" in ax.get_ylabel()
    lines = ax.get_lines()
    bound, forecast = lines[0], lines[1]
    step = hw.inference_step(gemma, chip, 4, contexts, 1, 1, "fp8", "fp8")
    np.testing.assert_allclose(bound.get_ydata(), 1e3 * step.time_s)
    np.testing.assert_allclose(forecast.get_ydata(), 1e3 * step.forecast_time_s)
    global_bound = lines[4]
    fits = hw.max_batch(every_layer, chip, contexts, 1, "fp8", "fp8") >= 4
    np.testing.assert_array_equal(global_bound.get_xdata(), contexts[fits])
    assert not fits.all()  # the global twin's four caches no longer fit at the longest context
    ax = hw.viz.plot_decode_vs_context([gemma], hw.cluster("hgx-h200-ndr"), contexts, 4, 8, "fp8", "fp8")
    assert "8 x H200" in ax.get_title()


def test_experts_touched_is_the_tables_share_of_the_matmul_weights():
    tokens = np.array([1, 8, 64, 512])
    ax = hw.viz.plot_experts_touched(MOES, tokens)
    assert isinstance(ax, plt.Axes)
    for line, model in zip(ax.get_lines(), MOES):
        table = model.table()
        expected = 100 * table.touched_matmul_params(tokens) / table.matmul_params(active=False)
        np.testing.assert_allclose(line.get_ydata(), expected)
    mixtral = ax.get_lines()[0].get_ydata()
    assert mixtral[0] < 30 and mixtral[-1] == pytest.approx(100)


def test_bad_input_names_the_parameter():
    with pytest.raises(TypeError, match="models must be a non-empty sequence"):
        hw.viz.plot_moe_usage(["deepseek-v3"])
    with pytest.raises(ValueError, match="is dense"):
        hw.viz.plot_experts_touched([hw.model("llama-3-8b")], [1, 2])
    with pytest.raises(ValueError, match="contexts must be at least two"):
        hw.viz.plot_kv_per_sequence([hw.model("llama-3-8b")], [1024])
    with pytest.raises(ValueError, match="tokens must be"):
        hw.viz.plot_experts_touched(MOES, [0, 2])
