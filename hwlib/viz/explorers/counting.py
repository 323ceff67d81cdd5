"""Model-shape explorer: choose a model, change its MLP width and KV heads, and count again.

Every number comes from the changed :class:`~hwlib.data.records.ModelShape` (``param_breakdown``,
``params``, ``flops_per_token``, ``weight_bytes``, ``kv_bytes_per_token``). Used by the chapter
:ref:`ch-counting`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import ipywidgets as widgets
import numpy as np

from hwlib.data import model as find_model
from hwlib.data import models as all_models
from hwlib.data.records import ModelShape
from hwlib.units import format_bytes, format_flops, format_number
from hwlib.viz.explorers.base import (
    Explorer,
    choose,
    default_record,
    number_in,
    options_in,
    record_dropdown,
    records_of,
)
from hwlib.viz.model_figures import PARAM_PARTS as PARTS
from hwlib.viz.model_figures import param_parts
from hwlib.viz.style import PALETTE

CONTEXTS = tuple(2**p for p in range(7, 18))
"""Context lengths s the explorer offers (128 to 131072 tokens)."""
D_FF_SCALES = (0.25, 2.0, 0.25)
"""The MLP-width multiplier's range and step (1 is the published width; an MoE scales its experts' width)."""
FLOP_PARTS = ("weights: 6 per weight used", "attention scores")
_LAYOUT = {"width": "330px"}
_STYLE = {"description_width": "90px"}


def divisors(n: int) -> tuple[int, ...]:
    """The KV-head counts a model of ``n`` query heads allows: the divisors of n."""
    return tuple(k for k in range(1, n + 1) if n % k == 0)


class ModelShapeExplorer(Explorer):
    """Model, MLP width, KV heads and context -> parameters by part and training FLOPs per token against 6P.

    The top bars stack the changed model's parameters (all, and those one token uses: an MoE's
    chosen experts); the bottom bar its training FLOPs per token at the chosen context, weight
    matmuls and causal attention scores, against 6P (solid line; dotted for an MoE: 6 x its active
    count). ``model`` is a record (default ``hw.model("Llama 3 70B")``) with ``d_model``; one that is
    not in the catalogue is offered first. Explained in the chapter :ref:`ch-counting`.
    """

    figsize = (6.4, 3.6)
    margins = (0.14, 0.13, 0.97, 0.8)

    def __init__(
        self,
        models: Sequence[ModelShape] | None = None,
        model: ModelShape | None = None,
        d_ff_scale: float = 1.0,
        n_kv_heads: int | None = None,
        seq_len: int = 8192,
    ) -> None:
        records = all_models("vendor") if models is None else records_of("models", models, ModelShape)
        records = tuple(record for record in records if record.d_model is not None)
        if not records:
            raise ValueError("models must include a ModelShape with d_model (the counts need the full shape)")
        if model is None:
            model = default_record(find_model("Llama 3 70B"), records)
        if isinstance(model, ModelShape) and not any(model is record for record in records):
            if model.d_model is None:
                raise ValueError(f"model {model.name!r} gives no d_model: its parameters and FLOPs cannot be counted")
            records = (model, *records)
        model = choose("model", model, records, ModelShape, "hw.model('Llama 3 70B')")
        low, high, step = D_FF_SCALES
        number_in("d_ff_scale", d_ff_scale, low, high, "(times the model's MLP width)")
        n_kv_heads = model.n_kv_heads if n_kv_heads is None else n_kv_heads
        options_in(
            "n_kv_heads",
            n_kv_heads,
            divisors(model.n_heads),
            f"a divisor of the model's {model.n_heads} query heads {divisors(model.n_heads)}",
        )
        options_in("seq_len", seq_len, CONTEXTS, f"a power of two from {CONTEXTS[0]} to {CONTEXTS[-1]}")
        layout, style = widgets.Layout(**_LAYOUT), _STYLE
        self.model = record_dropdown(records, model, "model", layout=layout, style=style)
        self.d_ff_scale = widgets.FloatSlider(
            value=d_ff_scale,
            min=low,
            max=high,
            step=step,
            description="MLP width ×",
            readout_format=".2f",
            layout=layout,
            style=style,
        )
        self.n_kv_heads = widgets.Dropdown(
            options=divisors(model.n_heads), value=n_kv_heads, description="KV heads", layout=layout, style=style
        )
        self.seq_len = widgets.SelectionSlider(
            options=CONTEXTS, value=seq_len, description="context", layout=layout, style=style
        )
        super().__init__([self.model, self.d_ff_scale, self.n_kv_heads, self.seq_len])

    def arrange(self) -> widgets.Widget:
        controls = widgets.HBox(
            [widgets.VBox([self.model, self.d_ff_scale]), widgets.VBox([self.n_kv_heads, self.seq_len])]
        )
        return widgets.VBox([controls, self.summary, self.image])

    def sync(self, owner: object) -> None:
        """A new model offers the divisors of its own query heads and starts from its own KV heads."""
        if owner is self.model:
            record = self.model.value
            self.n_kv_heads.options = divisors(record.n_heads)
            self.n_kv_heads.value = record.n_kv_heads

    def shape(self) -> ModelShape:
        """The chosen model with the chosen MLP width and KV heads (the record itself when both are as published)."""
        record, scale, kv = self.model.value, self.d_ff_scale.value, self.n_kv_heads.value
        if scale == 1.0 and kv == record.n_kv_heads:
            return record
        fields = {field.name: getattr(record, field.name) for field in dataclasses.fields(record)}
        width = "d_ff_expert" if record.is_moe else "d_ff"
        fields[width] = max(1, round(fields[width] * scale))
        fields.update(key=f"{record.key}-changed", name=f"{record.name}, changed", n_kv_heads=kv, n_params=None)
        return ModelShape(**fields)

    def setup(self) -> list:
        self._params_ax, self._flops_ax = axes = self.figure.subplots(2, 1, height_ratios=(2, 1))
        rows = np.array([0.0, 1.0])
        self._param_bars = [
            self._params_ax.barh(rows, [0.0, 0.0], left=[0.0, 0.0], color=colour, height=0.7)
            for colour in PALETTE[: len(PARTS)]
        ]
        self._flop_bars = [
            self._flops_ax.barh([0.0], [0.0], left=[0.0], color=colour, height=0.6, edgecolor="0.3", linewidth=0.5)
            for colour in PALETTE[5 : 5 + len(FLOP_PARTS)]
        ]
        self._six_p = self._flops_ax.axvline(1.0, color="k", lw=2)
        self._six_p_active = self._flops_ax.axvline(1.0, color="k", lw=1.5, ls=":")
        self._param_text = [self._params_ax.text(0.0, row, "", va="center", fontsize=8) for row in rows]
        self._flop_text = self._flops_ax.text(0.0, 0.0, "", va="center", fontsize=8)
        self._params_ax.set_yticks(rows, ["all", "per token"])
        self._params_ax.invert_yaxis()
        self._params_ax.set_xlabel("parameters (billions)", fontsize=9)
        self._params_ax.legend(
            self._param_bars,
            PARTS,
            ncol=3,
            fontsize=7,
            loc="lower center",
            bbox_to_anchor=(0.45, 1.0),
            handlelength=1.0,
            columnspacing=0.8,
        )
        self._flops_ax.legend(self._flop_bars, FLOP_PARTS, fontsize=7, loc="lower right", handlelength=1.0)
        self._flops_ax.set_yticks([0.0], ["training"])
        self._flops_ax.set_xlabel("FLOPs per token (GFLOP); black line: 6P, dotted: 6 × active P", fontsize=9)
        for ax in axes:
            ax.grid(axis="y", visible=False)
        bars = [patch for group in (*self._param_bars, *self._flop_bars) for patch in group.patches]
        return [*bars, self._six_p, self._six_p_active, *self._param_text, self._flop_text]

    def background_key(self) -> tuple:
        return (self.model.value, self.seq_len.value)

    def _extremes(self) -> tuple[float, float]:
        """Largest parameter count (B) and training GFLOP per token the controls can reach for this model."""
        record, high = self.model.value, D_FF_SCALES[1]
        fields = {field.name: getattr(record, field.name) for field in dataclasses.fields(record)}
        width = "d_ff_expert" if record.is_moe else "d_ff"
        fields.update({width: round(fields[width] * high), "n_kv_heads": record.n_heads, "n_params": None})
        widest = ModelShape(**fields)
        params = widest.params()
        flops = max(widest.flops_per_token(self.seq_len.value, training=True), 6 * params)
        return params / 1e9, flops / 1e9

    def draw_background(self) -> None:
        params, flops = self._extremes()
        self._params_ax.set_xlim(0, params * 1.12)
        self._flops_ax.set_xlim(0, flops * 1.12)
        self.figure.suptitle(f"{self.model.value.name}, context {self.seq_len.value:,} tokens", fontsize=10, y=0.995)

    def counts(self) -> dict[str, float]:
        """Parameters (all, active), training FLOPs per token (weights, scores) and 6P for the current controls."""
        shape, seq_len = self.shape(), self.seq_len.value
        weights = 3 * shape.flops_per_token(0)
        total = shape.flops_per_token(seq_len, training=True)
        return {
            "params": shape.params(),
            "active": shape.params(active=True),
            "weight_flops": weights,
            "score_flops": total - weights,
            "training_flops": total,
            "forward_flops": total / 3,
        }

    def refresh(self) -> str:
        shape, counts = self.shape(), self.counts()
        for row, active in enumerate((False, True)):
            widths = np.array(list(param_parts(shape, active).values())) / 1e9
            for group, left, width in zip(self._param_bars, np.cumsum(widths) - widths, widths):
                group.patches[row].set_x(left)
                group.patches[row].set_width(width)
            self._param_text[row].set_position((widths.sum(), row))
            self._param_text[row].set_text(f" {format_number(widths.sum())} B")
        flops = np.array([counts["weight_flops"], counts["score_flops"]]) / 1e9
        for group, left, width in zip(self._flop_bars, np.cumsum(flops) - flops, flops):
            group.patches[0].set_x(left)
            group.patches[0].set_width(width)
        six_p, six_p_active = 6 * counts["params"] / 1e9, 6 * counts["active"] / 1e9
        self._six_p.set_xdata([six_p, six_p])
        self._six_p_active.set_xdata([six_p_active, six_p_active])
        self._six_p_active.set_visible(shape.is_moe)
        ratio = counts["training_flops"] / (6 * counts["params"])
        self._flop_text.set_position((max(flops.sum(), six_p), 0.0))
        self._flop_text.set_text(f" {ratio:.2f} × 6P")
        return self._summary(shape, counts, ratio)

    def _summary(self, shape: ModelShape, counts: dict[str, float], ratio: float) -> str:
        record = self.model.value
        width = shape.d_ff_expert if shape.is_moe else shape.d_ff
        what = "expert width" if shape.is_moe else "MLP width"
        active = f" ({format_number(counts['active'] / 1e9)} B used per token)" if shape.is_moe else ""
        change = counts["params"] / record.params() - 1
        versus = "the catalogue's shape" if shape is record else f"{100 * change:+.1f} % against {record.name}"
        moe = (
            f", {counts['training_flops'] / (6 * counts['active']):.2f} × 6P with the active count"
            if shape.is_moe
            else ""
        )
        return (
            f"<b>{shape.name}</b>: {what} {width:,}, {shape.n_kv_heads} KV heads of {shape.head_dim} "
            f"({shape.attention}).<br><b>{format_number(counts['params'] / 1e9)} B parameters</b>{active}, {versus}; "
            f"{format_bytes(shape.weight_bytes('bf16'), binary=False)} of bf16 weights; "
            f"{format_bytes(shape.kv_bytes_per_token('bf16'))} of bf16 KV cache per token.<br>"
            f"At a context of {self.seq_len.value:,} tokens one token costs "
            f"{format_flops(counts['forward_flops'])} forward and <b>{format_flops(counts['training_flops'])} "
            f"in training = {ratio:.2f} × 6P</b>{moe}; attention scores are "
            f"{100 * counts['score_flops'] / counts['training_flops']:.1f} % of it."
        )
