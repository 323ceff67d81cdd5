"""Model figures: where a transformer's parameters sit, and its training FLOPs per token against 6P.

Both read every count from the model's shape (``ModelShape.param_breakdown``,
``ModelShape.flops_per_token``). Chapter :ref:`ch-counting`.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np

from hwlib.data.records import ModelShape
from hwlib.data.records.layer_rules import FORWARD_FLOPS_PER_PARAM, TRAINING_OVER_FORWARD
from hwlib.units import format_number
from hwlib.viz.style import PALETTE, new_axes

PARAM_PARTS = ("embedding", "attention", "MLP or experts", "LM head", "norms, router, other")
PART_OF = {
    "embedding": "embedding",
    "attention": "attention",
    "mlp": "MLP or experts",
    "experts": "MLP or experts",
    "shared experts": "MLP or experts",
    "lm_head": "LM head",
    "classifier": "LM head",
}
"""The group of each ``param_breakdown`` part; the rest (norms, positions, router, a vision tower) go last."""
"""The parts :func:`plot_param_shares` stacks, in order (the shape's breakdown, grouped)."""
Y_TICKS = (0.125, 0.25, 0.5, 1, 2, 4, 8, 16)
"""Ratios labelled on the log axis of :func:`plot_flops_over_6p`."""


SIX_P = TRAINING_OVER_FORWARD * FORWARD_FLOPS_PER_PARAM
"""Training FLOPs per parameter per token of the 6P rule: 3 x 2."""


def _require_models(models: object) -> tuple[ModelShape, ...]:
    records = tuple(models) if isinstance(models, (list, tuple)) else ()
    if not records or not all(isinstance(record, ModelShape) for record in records):
        raise TypeError(
            f"models must be a non-empty sequence of ModelShape records such as "
            f"[hw.model('llama-3-70b')], got {models!r}"
        )
    for record in records:
        if record.d_model is None:
            raise ValueError(f"model {record.name!r} gives no d_model: it has no parameter or FLOP count")
    return records


def param_parts(model: ModelShape, active: bool = False) -> dict[str, float]:
    """The shape's parameters grouped into ``PARAM_PARTS`` (parameters; ``active``: one token's experts); the
    groups sum to the model's count."""
    parts = model.param_breakdown(active)
    grouped = {part: 0.0 for part in PARAM_PARTS}
    for name, count in parts.items():
        grouped[PART_OF.get(name, PARAM_PARTS[-1])] += count
    return grouped


def plot_param_shares(models: Sequence[ModelShape], *, ax: plt.Axes | None = None) -> plt.Axes:
    """Share (%) of each model's parameters in embedding, attention, MLP (or all experts), LM head and the rest.

    One horizontal stacked bar per model, labelled with its total count. A tied model has no LM-head
    segment: its embedding serves as the head. Explained in the chapter :ref:`ch-counting`.
    """
    records = _require_models(models)
    ax = new_axes(ax, (7.5, 0.42 * len(records) + 1.3))
    shares = np.array([list(param_parts(record).values()) for record in records])
    totals = shares.sum(axis=1)
    shares = 100 * shares / totals[:, None]
    left = np.zeros(len(records))
    positions = np.arange(len(records))
    for index, (part, colour) in enumerate(zip(PARAM_PARTS, PALETTE)):
        ax.barh(positions, shares[:, index], left=left, color=colour, height=0.7, label=part)
        left += shares[:, index]
    labels = [
        f"{record.name}\n{format_number(total / 1e9)} B{' (tied)' if record.tied_embeddings else ''}"
        for record, total in zip(records, totals)
    ]
    ax.set_yticks(positions, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set(xlim=(0, 100), xlabel="share of the model's parameters (%)")
    ax.grid(axis="y", visible=False)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=8)
    return ax


def plot_flops_over_6p(models: Sequence[ModelShape], seq_lens: np.ndarray, *, ax: plt.Axes | None = None) -> plt.Axes:
    """Training FLOPs per token over 6P against the context length s (causal attention), one line per model.

    P is each model's total parameter count; a mixture of experts gets a second, dashed line against
    6 times its active count. A line above 1 means 6P underestimates the work. Keep to about five models
    (at most six lines). Explained in the chapter :ref:`ch-counting`.
    """
    records = _require_models(models)
    seq_lens = np.asarray(seq_lens, dtype=float)
    if seq_lens.ndim != 1 or seq_lens.size < 2 or not np.all(seq_lens > 0):
        raise ValueError(f"seq_lens must be at least two context lengths > 0 (tokens), got {seq_lens!r}")
    ax = new_axes(ax, (7.0, 4.2))
    for record, colour in zip(records, PALETTE):
        flops = np.asarray(record.flops_per_token(seq_lens, training=True))
        ax.plot(seq_lens, flops / (SIX_P * record.params()), color=colour, lw=2, label=record.name)
        if record.is_moe:
            ax.plot(
                seq_lens,
                flops / (6 * record.params(active=True)),
                color=colour,
                lw=2,
                ls="--",
                label=f"{record.name}, P active",
            )
    ax.axhline(1.0, color="0.4", lw=1, ls=":")
    ax.set(xscale="log", yscale="log", xlabel="context length s (tokens)", ylabel="training FLOPs per token / 6P")
    ticks = seq_lens[:: -(-len(seq_lens) // 6)]  # at most six labels
    ax.set_xticks(ticks, [f"{int(s):,}" for s in ticks])
    ax.minorticks_off()
    low, high = ax.get_ylim()
    shown = [t for t in Y_TICKS if low <= t <= high]
    ax.set_yticks(shown, [f"{t:g}" for t in shown])
    ax.legend(loc="upper left", fontsize=8)
    return ax
