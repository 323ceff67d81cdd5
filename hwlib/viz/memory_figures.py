"""Memory figures: activations against sequence length, the largest model that fits, KV cache per token, decode bound.

Chapters :ref:`ch-hbm-budgets` and :ref:`ch-kv-cache`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from hwlib._checks import non_negative
from hwlib.data import assumptions
from hwlib.data import recipe as find_recipe
from hwlib.data import recipes as all_recipes
from hwlib.data.records import Chip, ModelShape, require_chip
from hwlib.memory import activation_bytes, kv_cache_bytes, usable_bytes
from hwlib.roofline import roofline_time_s
from hwlib.serving.step import inference_step, max_batch
from hwlib.units import GiB, KiB, format_number
from hwlib.viz.style import PALETTE, new_axes


def _require_models(models: Sequence) -> None:
    if not len(models) or not all(isinstance(m, ModelShape) for m in models):
        raise TypeError(f"models must be ModelShape records such as hw.model('llama-3-8b'), got {models!r}")


ACTIVATION_STRATEGIES = (
    ("no parallelism", dict(tensor_parallel=1)),
    ("tensor parallel", dict()),
    ("tensor + sequence parallel", dict(sequence_parallel=True)),
    ("tensor + sequence parallel, selective recompute", dict(sequence_parallel=True, recompute="selective")),
    ("full recompute", dict(recompute="full")),
)
"""Strategies of Korthikanti et al. 2022 (Table 2) that :func:`plot_activations` draws;
an empty dict means "use the plot's tensor_parallel"."""


def plot_activations(
    seq_lens: np.ndarray,
    *,
    d: int | None = None,
    n_heads: int | None = None,
    n_layers: int | None = None,
    batch: int = 1,
    model: ModelShape | None = None,
    tensor_parallel: int = 8,
    chip: Chip | None = None,
    usable_fraction: float = assumptions.USABLE_HBM_FRACTION,
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """Activation memory per chip (GiB, all ``n_layers``; or of ``model``'s own structure) vs sequence length, one line
    per strategy.

    Solid lines store the attention scores; dashed lines use a FlashAttention-style kernel
    (no s^2 term), which is drawn only where it differs. With ``chip``, a grey line marks
    its usable HBM. Explained in the chapter :ref:`ch-hbm-budgets`.
    """
    if model is not None:
        if not isinstance(model, ModelShape) or d is not None or n_heads is not None or n_layers is not None:
            raise TypeError("give model (a ModelShape such as hw.model('llama-3-8b')) or d, n_heads and n_layers")
        geometry, n_layers = (model,), model.n_layers
    elif d is None or n_heads is None or n_layers is None:
        raise TypeError("d, n_heads and n_layers are needed unless model is given")
    else:
        geometry = (d, n_heads)
    ax = new_axes(ax, (7.0, 4.4))
    for colour, (label, options) in zip(PALETTE, ACTIVATION_STRATEGIES):
        settings = {"tensor_parallel": tensor_parallel, **options}
        values = n_layers * activation_bytes(seq_lens, batch, *geometry, **settings) / GiB
        ax.plot(seq_lens, values, color=colour, lw=2, label=label)
        flash = n_layers * activation_bytes(seq_lens, batch, *geometry, flash_attention=True, **settings) / GiB
        if not np.allclose(flash, values):
            ax.plot(seq_lens, flash, color=colour, lw=1.5, ls="--")
    if chip is not None:
        require_chip(chip)
        ax.axhline(usable_bytes(chip, usable_fraction) / GiB, color="0.4", lw=1, ls=":")
        ax.annotate(
            f"{chip.label}: {usable_fraction:.0%} of HBM",
            (seq_lens[0], usable_bytes(chip, usable_fraction) / GiB),
            textcoords="offset points",
            xytext=(2, 4),
            fontsize=8,
            color="0.3",
        )
    ax.plot([], [], color="0.3", ls="--", lw=1.5, label="same, FlashAttention (no s² term)")
    ax.set(
        xscale="log", yscale="log", xlabel="sequence length s (tokens)", ylabel="activations per chip, all layers (GiB)"
    )
    ax.set_xticks(
        seq_lens[:: max(1, len(seq_lens) // 6)], [f"{int(s):,}" for s in seq_lens[:: max(1, len(seq_lens) // 6)]]
    )
    ax.minorticks_off()
    ax.legend(loc="upper left", fontsize=8)
    return ax


def plot_max_params(
    capacities: Mapping[str, float], recipes: Sequence[str] | None = None, *, ax: plt.Axes | None = None
) -> plt.Axes:
    """Largest model (billions of parameters) whose training state fits each usable capacity.

    ``capacities`` maps a label (e.g. "one v5e chip") to usable bytes. Horizontal bars,
    one group per recipe, one bar (colour) per capacity, log scale. Activations are not
    counted. Explained in the chapter :ref:`ch-hbm-budgets`.
    """
    chosen = [find_recipe(key) for key in recipes] if recipes is not None else list(all_recipes())
    if not isinstance(capacities, Mapping) or not capacities:
        raise TypeError(f"capacities must be a non-empty dict of label -> usable bytes, got {capacities!r}")
    usable_bytes_values = np.array([float(non_negative("capacities", v)) for v in capacities.values()])
    ax = new_axes(ax, (7.5, 0.2 * len(chosen) * len(capacities) + 1.4))
    height = 0.8 / len(capacities)
    for index, (label, capacity, colour) in enumerate(zip(capacities, usable_bytes_values, PALETTE)):
        values = capacity / np.array([r.bytes_per_param for r in chosen]) / 1e9
        position = np.arange(len(chosen)) + index * height
        bars = ax.barh(position, values, height=height * 0.92, color=colour, label=label)
        ax.bar_label(bars, labels=[format_number(v) for v in values], padding=2, fontsize=7)
    ax.set_yticks(
        np.arange(len(chosen)) + 0.4 - height / 2,
        [f"{r.label}\n({r.bytes_per_param:.4g} B/param)" for r in chosen],
        fontsize=8,
    )
    ax.invert_yaxis()
    ax.set(xscale="log", xlabel="largest model whose training state fits (billion parameters)")
    ax.set_xlim(right=ax.get_xlim()[1] * 3)
    ax.grid(axis="y", visible=False)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, fontsize=8)
    return ax


def plot_kv_per_token(
    models: Sequence, dtypes: Sequence[str] = ("fp32", "bf16", "int8", "int4"), *, ax: plt.Axes | None = None
) -> plt.Axes:
    """KV-cache KiB per token of each model (``hw.models()`` shapes), one bar per cache dtype.

    Explained in the chapter :ref:`ch-kv-cache`.
    """
    _require_models(models)
    ax = new_axes(ax, (7.5, 0.2 * len(models) * len(dtypes) + 1.0))
    height = 0.8 / len(dtypes)
    largest = 0.0
    for index, (dtype, colour) in enumerate(zip(dtypes, PALETTE)):
        values = np.array([kv_cache_bytes(1, record, dtype=dtype) for record in models]) / KiB
        largest = max(largest, float(values.max()))
        bars = ax.barh(np.arange(len(models)) + index * height, values, height=height * 0.92, color=colour, label=dtype)
        ax.bar_label(bars, labels=[format_number(v, 4) for v in values], padding=2, fontsize=7)
    ax.set_yticks(
        np.arange(len(models)) + 0.4 - height / 2, [f"{record.name} ({record.attention})" for record in models]
    )
    ax.invert_yaxis()
    ax.set(xscale="log", xlabel="KV cache per token (KiB, log scale)")
    ax.set_xlim(right=largest * 2.5)  # room for the longest bar's label
    ax.grid(axis="y", visible=False)
    # above the bars, in one row: no corner of the axes is free of bars for every set of models
    ax.legend(title="KV dtype", loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(dtypes), fontsize=8)
    return ax


def plot_decode_bound(
    model: object,
    chip: Chip,
    seq_len: int,
    batches: np.ndarray,
    *,
    weight_dtype: str = "bf16",
    kv_dtypes: Sequence[str] = ("fp32", "bf16", "int8", "int4"),
    usable_fraction: float = assumptions.USABLE_HBM_FRACTION,
    n_chips: int = 1,
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """Decode-step lower bound (ms) vs batch, one line per KV dtype, ending where HBM is full.

    Each line is ``hw.inference_step``'s lower bound at these batches; it stops at the largest
    batch whose KV cache still fits beside the weights (``hw.max_batch``). Explained in the chapter
    :ref:`ch-kv-cache`.
    """
    _require_models([model])
    require_chip(chip)
    ax = new_axes(ax, (7.0, 4.2))
    batches = np.asarray(batches)
    for colour, dtype in zip(PALETTE, kv_dtypes):
        fit = max_batch(model, chip, seq_len, n_chips, weight_dtype, dtype, usable_fraction)
        # the batches that fit, plus the largest one that does, where HBM is full
        shown = np.union1d(batches[batches <= fit], [fit] if 1 <= fit <= batches.max() else [])
        if shown.size:
            times = (
                np.asarray(inference_step(model, chip, shown, seq_len, 1, n_chips, weight_dtype, dtype).time_s) * 1e3
            )
            ax.plot(shown, times, color=colour, lw=2, label=f"KV {dtype}: up to batch {int(fit):,}")
            ax.plot(shown[-1:], times[-1:], "o", color=colour, ms=5)
    full = roofline_time_s(0, usable_bytes(chip, usable_fraction, n_chips) / n_chips, chip) * 1e3
    ax.axhline(full, color="0.4", ls=":", lw=1)
    ax.annotate(
        "all usable HBM read once",
        (batches.min(), full),
        textcoords="offset points",
        xytext=(2, -11),
        fontsize=8,
        color="0.3",
    )
    ax.set(
        xscale="log",
        xlabel="batch (sequences decoded together)",
        ylabel="decode step, lower bound (ms)",
        title=f"{model.name}, {weight_dtype} weights, {seq_len:,}-token seq_len, {n_chips} x {chip.label}",
    )
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, 0.9), fontsize=8)
    return ax
