"""The chapter "Counting a transformer": its explorer (hw.viz.ModelShapeExplorer) and figures
(hwlib.viz.model_figures)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import pytest

import hwlib as hw
from hwlib.viz.explorers import Explorer, ModelShapeExplorer
from hwlib.viz.explorers.counting import divisors
from hwlib.viz.model_figures import PARAM_PARTS, param_parts, plot_flops_over_6p, plot_param_shares

LLAMA_70B = hw.model("llama-3-70b")
MIXTRAL = hw.model("mixtral-8x7b")


def other_value(control: widgets.ValueWidget) -> object:
    """A value of ``control`` other than its current one (an end of its range)."""
    if isinstance(control, widgets.FloatSlider):
        return control.max if control.value != control.max else control.min
    values = [option[1] if isinstance(option, tuple) else option for option in control.options]
    return values[-1] if control.value != values[-1] else values[0]


def test_builds_with_defaults():
    explorer = hw.viz.ModelShapeExplorer()
    assert hw.viz.ModelShapeExplorer is ModelShapeExplorer and isinstance(explorer, Explorer)
    assert explorer.model.value is LLAMA_70B and explorer.n_kv_heads.value == 8
    assert explorer.image.value[:4] == b"\x89PNG" and explorer.summary.value
    assert all(control in vars(explorer).values() for control in explorer.controls)
    assert "application/vnd.jupyter.widget-view+json" in explorer._repr_mimebundle_()
    offered = [record for _, record in explorer.model.options]
    assert offered == [record for record in hw.models("vendor") if record.d_model is not None]
    assert ModelShapeExplorer.update is Explorer.update


@pytest.mark.parametrize("model", [LLAMA_70B, MIXTRAL], ids=lambda m: m.key)
def test_every_control_updates_the_summary_and_the_picture(model):
    for index in range(4):
        explorer = hw.viz.ModelShapeExplorer(model=model)
        control = explorer.controls[index]
        summary, picture = explorer.summary.value, explorer.image.value
        control.value = other_value(control)
        assert explorer.summary.value != summary, f"{control.description} left the summary as it was"
        assert explorer.image.value != picture, f"{control.description} left the picture as it was"
        assert explorer.image.value[:4] == b"\x89PNG"


def test_summary_reports_the_shapes_own_counts():
    explorer = hw.viz.ModelShapeExplorer(model=LLAMA_70B, seq_len=8192)
    training = LLAMA_70B.flops_per_token(8192, training=True)
    assert hw.format_flops(training) in explorer.summary.value
    assert f"{training / (6 * LLAMA_70B.params()):.2f} × 6P" in explorer.summary.value
    assert "70.6 B parameters" in explorer.summary.value and "320 KiB" in explorer.summary.value
    counts = explorer.counts()
    assert counts["weight_flops"] + counts["score_flops"] == pytest.approx(training)
    explorer.n_kv_heads.value = 64  # MHA: K and V as wide as Q
    shape = explorer.shape()
    assert shape.n_kv_heads == 64 and shape.attention == "MHA" and shape.n_params is None
    extra = 80 * 2 * 8192 * (64 - 8) * 128
    assert shape.params() - LLAMA_70B.params() == extra
    assert hw.format_bytes(shape.kv_bytes_per_token("bf16")) in explorer.summary.value
    explorer.d_ff_scale.value = 0.5
    assert explorer.shape().d_ff == 28672 // 2


def test_moe_scales_the_experts_and_reports_the_active_count():
    explorer = hw.viz.ModelShapeExplorer(model=MIXTRAL, d_ff_scale=2.0)
    shape = explorer.shape()
    assert shape.d_ff_expert == 2 * 14336 and shape.d_ff is None
    assert f"{shape.params(active=True) / 1e9:,.3g} B used per token" in explorer.summary.value
    assert "with the active count" in explorer.summary.value
    explorer.model.value = LLAMA_70B
    assert "with the active count" not in explorer.summary.value


def test_a_new_model_offers_its_own_kv_heads():
    explorer = hw.viz.ModelShapeExplorer(model=LLAMA_70B, n_kv_heads=1)
    explorer.model.value = hw.model("falcon-7b")
    assert tuple(explorer.n_kv_heads.options) == divisors(71) == (1, 71)
    assert explorer.n_kv_heads.value == 1 and explorer.shape() is hw.model("falcon-7b")
    explorer.model.value = hw.model("qwen2.5-1.5b")
    assert tuple(explorer.n_kv_heads.options) == (1, 2, 3, 4, 6, 12) and explorer.n_kv_heads.value == 2


def test_a_model_from_a_config_is_offered_first():
    config = {
        "model_type": "llama",
        "hidden_size": 2048,
        "intermediate_size": 8192,
        "num_attention_heads": 32,
        "num_hidden_layers": 16,
        "num_key_value_heads": 8,
        "head_dim": 64,
        "vocab_size": 128256,
        "tie_word_embeddings": True,
    }
    shape = hw.ModelShape.from_hf_config(config, name="a 1B model")
    explorer = hw.viz.ModelShapeExplorer(model=shape)
    assert explorer.model.options[0] == ("a 1B model", shape) and explorer.model.value is shape
    assert f"{shape.params() / 1e9:,.3g} B parameters" in explorer.summary.value


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: hw.viz.ModelShapeExplorer(model="llama-3-70b"), TypeError, "model must be a ModelShape record"),
        (lambda: hw.viz.ModelShapeExplorer(models=["llama-3-70b"]), TypeError, "models must be a non-empty sequence"),
        (lambda: hw.viz.ModelShapeExplorer(model=hw.model("doc000-7b")), ValueError, "gives no d_model"),
        (lambda: hw.viz.ModelShapeExplorer(models=[hw.model("doc000-7b")]), ValueError, "with d_model"),
        (lambda: hw.viz.ModelShapeExplorer(n_kv_heads=5), ValueError, "n_kv_heads must be a divisor"),
        (lambda: hw.viz.ModelShapeExplorer(d_ff_scale=3), ValueError, "d_ff_scale must be a number from 0.25 to 2"),
        (lambda: hw.viz.ModelShapeExplorer(d_ff_scale="2"), ValueError, "d_ff_scale must be a number"),
        (lambda: hw.viz.ModelShapeExplorer(seq_len=1000), ValueError, "seq_len must be a power of two"),
    ],
)
def test_bad_arguments_raise_clear_errors(call, error, words):
    with pytest.raises(error, match=words):
        call()


# --- figures --------------------------------------------------------------------------------------


def test_param_shares_stack_to_one_hundred_per_cent():
    models = [hw.model("qwen2.5-1.5b"), LLAMA_70B, MIXTRAL]
    ax = plot_param_shares(models)
    assert hw.viz.plot_param_shares is plot_param_shares
    widths = np.array([bar.get_width() for bar in ax.patches]).reshape(len(PARAM_PARTS), len(models))
    np.testing.assert_allclose(widths.sum(axis=0), 100.0)
    embedding = 100 * LLAMA_70B.param_breakdown()["embedding"] / LLAMA_70B.params()
    assert widths[0, 1] == pytest.approx(embedding)
    assert widths[PARAM_PARTS.index("LM head"), 0] == 0.0  # Qwen2.5 1.5B ties its head to the embedding
    assert sum(param_parts(MIXTRAL).values()) == MIXTRAL.params()
    for name in ("DeepSeek-V3", "Llama 4 Maverick"):  # shared experts and a vision tower are counted too
        record = hw.model(name)
        assert sum(param_parts(record).values()) == pytest.approx(record.params(), rel=1e-12)
    assert [text.get_text() for text in ax.get_legend().get_texts()] == list(PARAM_PARTS)
    assert "%" in ax.get_xlabel()
    plt.close("all")


def test_flops_over_6p_lines_follow_the_shape():
    seq_lens = np.array([128, 8192, 131072])
    ax = plot_flops_over_6p([LLAMA_70B, MIXTRAL], seq_lens)
    assert hw.viz.plot_flops_over_6p is plot_flops_over_6p
    lines = ax.get_lines()
    assert [line.get_label() for line in lines[:3]] == ["Llama 3 70B", "Mixtral 8x7B", "Mixtral 8x7B, P active"]
    np.testing.assert_allclose(
        lines[0].get_ydata(),
        [LLAMA_70B.flops_per_token(int(s), training=True) / (6 * LLAMA_70B.params()) for s in seq_lens],
    )
    active = MIXTRAL.flops_per_token(8192, training=True) / (6 * MIXTRAL.params(active=True))
    assert lines[2].get_ydata()[1] == pytest.approx(active)
    assert "tokens" in ax.get_xlabel() and "6P" in ax.get_ylabel()
    plt.close("all")


def test_figures_reject_bad_input():
    with pytest.raises(TypeError, match="models must be a non-empty sequence of ModelShape"):
        plot_param_shares(["llama-3-70b"])
    with pytest.raises(TypeError, match="models must be a non-empty sequence of ModelShape"):
        plot_flops_over_6p([], [1, 2])
    with pytest.raises(ValueError, match="gives no d_model"):
        plot_param_shares([hw.model("doc000-7b")])
    with pytest.raises(ValueError, match="seq_lens must be at least two"):
        plot_flops_over_6p([LLAMA_70B], [0, 1024])
