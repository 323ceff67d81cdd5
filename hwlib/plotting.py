"""Figures with one look: labelled axes with units, a colour-blind-safe palette, page width.

The palette is Okabe and Ito's ("Color Universal Design", 2008). Each function draws on
an axes it is given (or a new one) and returns it, so chapters can combine panels.
Used by the chapter "Rooflines and ridge points".
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np

from hwlib._checks import non_negative, positive
from hwlib.data_parallel import cluster_squeeze, time_to_target
from hwlib.energy import machine_balance
from hwlib.hardware import Chip, require_chips
from hwlib.layer_model import TrainingStep, d_min, layer_step, t_min, t_min_large_d
from hwlib.memory import TRAINING_RECIPES, activation_bytes, decode_step_time_s, tokens_that_fit, usable_bytes
from hwlib.roofline import attainable_flops_per_s, ridge_point
from hwlib.units import GiB, TERA

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
"""Okabe-Ito colours, in the order figures use them."""

STYLE = {
    "figure.dpi": 110,
    "savefig.dpi": 110,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.fontsize": 9,
    "legend.frameon": False,
}


def use_book_style() -> None:
    """Apply the book's matplotlib settings (chapters call this once, at the top)."""
    plt.rcParams.update(STYLE)


def _axes(ax: plt.Axes | None, figsize: tuple[float, float] = (7.0, 4.2)) -> plt.Axes:
    return ax if ax is not None else plt.subplots(figsize=figsize, layout="constrained")[1]


def _log_range(name: str, bounds: object) -> tuple[float, float]:
    """(low, high) of a log axis: two positive numbers, low < high."""
    values = positive(name, bounds)
    if values.shape != (2,) or not values[0] < values[1]:
        raise ValueError(f"{name} must be (low, high) with 0 < low < high, got {bounds!r}")
    return float(values[0]), float(values[1])


def plot_roofline(
    chips: Sequence[Chip],
    dtype: str = "bf16",
    *,
    intensity_range: tuple[float, float] = (0.05, 5000.0),
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """Log-log rooflines (TFLOP/s vs FLOP/byte) of ``chips`` with each ridge point marked."""
    low, high = _log_range("intensity_range", intensity_range)
    ax = _axes(ax)
    intensity = np.geomspace(low, high, 400)
    for colour, record in zip(PALETTE, require_chips(chips)):
        ax.plot(intensity, attainable_flops_per_s(intensity, record, dtype) / TERA, color=colour, lw=2,
                label=f"{record.label}: ridge {ridge_point(record, dtype):.0f} FLOP/B")
        ridge = ridge_point(record, dtype)
        ax.plot([ridge], [record.peak(dtype) / TERA], "o", color=colour, ms=5)
    ax.set(xscale="log", yscale="log", xlabel="arithmetic intensity (FLOP/byte)",
           ylabel=f"attainable {dtype} throughput (TFLOP/s)")
    ax.legend(loc="lower right")
    return ax


def mark_kernel(ax: plt.Axes, intensity: float, chip: Chip, label: str, dtype: str = "bf16",
                colour: str = "#000000") -> None:
    """Put a kernel of ``intensity`` (FLOP/byte) on ``chip``'s roofline, labelled unless ``label`` is empty."""
    flops = attainable_flops_per_s(intensity, chip, dtype) / TERA
    ax.plot([intensity], [flops], marker="D", color=colour, ms=7, zorder=5)
    if label:
        ax.annotate(label, (intensity, flops), textcoords="offset points", xytext=(6, -14), fontsize=8.5)


def plot_capacity_and_ridge(
    chips: Sequence[Chip], dtype: str = "bf16", axes: Sequence[plt.Axes] | None = None
) -> Sequence[plt.Axes]:
    """Two panels of horizontal bars: HBM per chip in GiB, and ridge point in FLOP/byte."""
    chips = require_chips(chips)
    if axes is None:
        axes = plt.subplots(1, 2, figsize=(9.0, 0.35 * len(chips) + 1.4), sharey=True, layout="constrained")[1]
    labels = [record.label for record in chips]
    position = np.arange(len(chips))
    colours = [PALETTE[1] if record.source != "vendor" else PALETTE[0] for record in chips]
    capacity = np.array([record.hbm_bytes for record in chips]) / GiB
    ridge = np.array([ridge_point(record, dtype) for record in chips])
    for ax, values, xlabel, digits in (
        (axes[0], capacity, "HBM capacity per chip (GiB)", 1),
        (axes[1], ridge, f"{dtype} ridge point (FLOP/byte)", 1),
    ):
        bars = ax.barh(position, values, color=colours)
        ax.bar_label(bars, labels=[f"{v:.{digits}f}" for v in values], padding=3, fontsize=8)
        ax.set_xlabel(xlabel)
        ax.set_xlim(0, values.max() * 1.22)
        ax.grid(axis="y", visible=False)
    axes[0].set_yticks(position, labels)
    axes[0].invert_yaxis()
    return axes


# --- memory budgets and KV caches (chapters "HBM budgets for training", "KV-cache precision")


def _require_models(models: Sequence) -> None:
    from hwlib.models import ModelShape

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
    hidden: int,
    heads: int,
    layers: int,
    batch: int = 1,
    tensor_parallel: int = 8,
    chip: Chip | None = None,
    usable_fraction: float = 0.8,
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """Activation memory per chip (GiB, all ``layers``) vs sequence length, one line per strategy.

    Solid lines store the attention scores; dashed lines use a FlashAttention-style kernel
    (no s^2 term), which is drawn only where it differs. With ``chip``, a grey line marks
    its usable HBM. Explained in the chapter "HBM budgets for training".
    """
    ax = _axes(ax, (7.0, 4.4))
    for colour, (label, options) in zip(PALETTE, ACTIVATION_STRATEGIES):
        settings = {"tensor_parallel": tensor_parallel, **options}
        values = layers * activation_bytes(seq_lens, batch, hidden, heads, **settings) / GiB
        ax.plot(seq_lens, values, color=colour, lw=2, label=label)
        flash = layers * activation_bytes(seq_lens, batch, hidden, heads, flash_attention=True, **settings) / GiB
        if not np.allclose(flash, values):
            ax.plot(seq_lens, flash, color=colour, lw=1.5, ls="--")
    if chip is not None:
        ax.axhline(usable_bytes(chip, usable_fraction) / GiB, color="0.4", lw=1, ls=":")
        ax.annotate(f"{chip.label}: {usable_fraction:.0%} of HBM", (seq_lens[0], usable_bytes(chip, usable_fraction) / GiB),
                    textcoords="offset points", xytext=(2, 4), fontsize=8, color="0.3")
    ax.plot([], [], color="0.3", ls="--", lw=1.5, label="same, FlashAttention (no s² term)")
    ax.set(xscale="log", yscale="log", xlabel="sequence length s (tokens)",
           ylabel="activations per chip, all layers (GiB)")
    ax.set_xticks(seq_lens[:: max(1, len(seq_lens) // 6)],
                  [f"{int(s):,}" for s in seq_lens[:: max(1, len(seq_lens) // 6)]])
    ax.minorticks_off()
    ax.legend(loc="upper left", fontsize=8)
    return ax


def plot_max_params(
    capacities: dict[str, float],
    recipes: Sequence[str] | None = None,
    *,
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """Largest model (billions of parameters) whose training state fits each usable capacity.

    ``capacities`` maps a label (e.g. "one v5e chip") to usable bytes. Horizontal bars,
    one group per recipe, one bar (colour) per capacity, log scale. Activations are not
    counted. Explained in the chapter "HBM budgets for training".
    """
    keys = list(recipes) if recipes is not None else list(TRAINING_RECIPES)
    unknown = [key for key in keys if key not in TRAINING_RECIPES]
    if unknown:
        raise KeyError(f"recipes must be keys of {tuple(TRAINING_RECIPES)}, got {unknown}")
    if not isinstance(capacities, dict) or not capacities:
        raise TypeError(f"capacities must be a non-empty dict of label -> usable bytes, got {capacities!r}")
    usable_bytes_values = np.array([float(non_negative("capacities", v)) for v in capacities.values()])
    ax = _axes(ax, (7.5, 0.2 * len(keys) * len(capacities) + 1.4))
    height = 0.8 / len(capacities)
    for index, (label, capacity, colour) in enumerate(zip(capacities, usable_bytes_values, PALETTE)):
        values = capacity / np.array([TRAINING_RECIPES[key].total for key in keys]) / 1e9
        position = np.arange(len(keys)) + index * height
        bars = ax.barh(position, values, height=height * 0.92, color=colour, label=label)
        ax.bar_label(bars, labels=[f"{v:,.3g}" for v in values], padding=2, fontsize=7)
    ax.set_yticks(np.arange(len(keys)) + 0.4 - height / 2,
                  [f"{TRAINING_RECIPES[key].label}\n({TRAINING_RECIPES[key].total:.4g} B/param)"
                   for key in keys], fontsize=8)
    ax.invert_yaxis()
    ax.set(xscale="log", xlabel="largest model whose training state fits (billion parameters)")
    ax.set_xlim(right=ax.get_xlim()[1] * 3)
    ax.grid(axis="y", visible=False)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, fontsize=8)
    return ax


def plot_kv_per_token(models: Sequence, dtypes: Sequence[str] = ("fp32", "bf16", "int8", "int4"),
                      *, ax: plt.Axes | None = None) -> plt.Axes:
    """KV-cache KiB per token of each model (hwlib.models shapes), one bar per cache dtype.

    Explained in the chapter "KV-cache precision".
    """
    _require_models(models)
    ax = _axes(ax, (7.5, 0.2 * len(models) * len(dtypes) + 1.0))
    height = 0.8 / len(dtypes)
    for index, (dtype, colour) in enumerate(zip(dtypes, PALETTE)):
        values = np.array([record.kv_bytes_per_token(dtype) for record in models]) / 1024
        bars = ax.barh(np.arange(len(models)) + index * height, values, height=height * 0.92,
                       color=colour, label=dtype)
        ax.bar_label(bars, labels=[f"{v:,.4g}" for v in values], padding=2, fontsize=7)
    ax.set_yticks(np.arange(len(models)) + 0.4 - height / 2,
                  [f"{record.name} ({record.attention})" for record in models])
    ax.invert_yaxis()
    ax.set(xscale="log", xlabel="KV cache per token (KiB, log scale)")
    ax.grid(axis="y", visible=False)
    ax.legend(title="KV dtype", loc="lower right", fontsize=8)
    return ax


def plot_decode_bound(
    model: object,
    chip: Chip,
    context: int,
    batches: np.ndarray,
    *,
    weight_dtype: str = "bf16",
    kv_dtypes: Sequence[str] = ("fp32", "bf16", "int8", "int4"),
    usable_fraction: float = 0.8,
    chips: int = 1,
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """Decode-step lower bound (ms) vs batch, one line per KV dtype, ending where HBM is full.

    Each line is (weight bytes + batch x KV bytes per sequence) / bandwidth; it stops at the
    largest batch whose KV cache still fits beside the weights. Explained in the chapter
    "KV-cache precision".
    """
    _require_models([model])
    ax = _axes(ax, (7.0, 4.2))
    weights = model.weight_bytes(weight_dtype)
    batches = np.asarray(batches)
    for colour, dtype in zip(PALETTE, kv_dtypes):
        per_sequence = model.kv_bytes(context, dtype)
        fit = tokens_that_fit(chip, weights, model.kv_bytes_per_token(dtype), usable_fraction, chips) // context
        # the batches that fit, plus the largest one that does, where HBM is full
        shown = np.union1d(batches[batches <= fit], [fit] if 1 <= fit <= batches.max() else [])
        if shown.size:
            times = decode_step_time_s(weights, per_sequence, shown, chip, chips) * 1e3
            ax.plot(shown, times, color=colour, lw=2, label=f"KV {dtype}: up to batch {int(fit):,}")
            ax.plot(shown[-1:], times[-1:], "o", color=colour, ms=5)
    full = decode_step_time_s(usable_bytes(chip, usable_fraction, chips), 0, 1, chip, chips) * 1e3
    ax.axhline(full, color="0.4", ls=":", lw=1)
    ax.annotate("all usable HBM read once", (batches.min(), full), textcoords="offset points",
                xytext=(2, -11), fontsize=8, color="0.3")
    ax.set(xscale="log", xlabel="batch (sequences decoded together)",
           ylabel="decode step, lower bound (ms)",
           title=f"{model.name}, {weight_dtype} weights, {context:,}-token context, "
           f"{chips} x {chip.label}")
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, 0.9), fontsize=8)
    return ax


# --- the compute-to-commute model (chapters "The training step as compute and commute",
# "The element-wise tax and where the joules go") --------------------------------------


ENERGY_PART_LABELS = {
    "arithmetic_j": "arithmetic (datapath and operand delivery on chip)",
    "hbm_weights_j": "HBM: weights and gradients",
    "hbm_activations_j": "HBM: activations between kernels",
    "static_j": "static / leakage (grows with time)",
}
"""Legend text of each energy part of ``hw.layer_step``, in stacking order."""


def plot_step_intensity(
    chip: Chip,
    ds: Sequence[float] = (768, 2048, 4096, 12288),
    balance_chips: Sequence[Chip] = (),
    *,
    b_w: float = 12.0,
    a: float = 200.0,
    tokens_range: tuple[float, float] = (1.0, 1e5),
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """HBM intensity of one layer's training step (FLOP/byte) vs tokens per weight visit, one line per d.

    Time balances of ``chip`` and ``balance_chips`` are dashed lines, ``chip``'s energy
    balance a dash-dot line, and the small-T asymptote I = 6 T / b_w a thin grey line.
    Panel (a) of document 002's figure; chapter "The training step as compute and commute".
    """
    ax = _axes(ax)
    tokens = np.geomspace(*_log_range("tokens_range", tokens_range), 300)
    intensity = layer_step(np.asarray(ds, dtype=float)[:, None], tokens[None, :], chip, b_w=b_w, a=a).intensity
    for colour, d, values in zip(PALETTE, ds, intensity):
        ax.plot(tokens, values, color=colour, lw=2, label=f"d = {d:,.0f}")
    ax.plot(tokens, 6.0 * tokens / b_w, color="0.6", lw=0.8, label=f"small-T limit I = T/{b_w / 6:g}")
    styles = ("--", ":", (0, (5, 1, 1, 1)), (0, (1, 3)))
    for style, record in zip(styles, (chip, *balance_chips)):
        beta = machine_balance(record)
        ax.axhline(beta.time, color="k", ls=style, lw=1.1)
        ax.annotate(f"{record.label}: time balance {beta.time:.0f} FLOP/B", (tokens[0], beta.time),
                    xytext=(4, 3), textcoords="offset points", fontsize=8)
    energy = machine_balance(chip).energy
    ax.axhline(energy, color="0.45", ls="-.", lw=1)
    ax.annotate(f"{chip.label}: energy balance {energy:.0f} FLOP/B", (tokens[0], energy), xytext=(4, -11),
                textcoords="offset points", fontsize=8, color="0.3")
    ax.set(xscale="log", yscale="log", xlim=tokens_range, ylim=(0.3, 5000),
           xlabel="tokens per weight visit T (micro-batch x sequence length, per device)",
           ylabel="HBM intensity of forward + backward (FLOP/byte)")
    ax.legend(loc="lower right", title=f"traffic model on {chip.label}", title_fontsize=8.5)
    return ax


def plot_t_min(
    chips: Sequence[Chip],
    *,
    b_w: float = 12.0,
    a: float = 200.0,
    d_range: tuple[float, float] = (300.0, 30000.0),
    models: Sequence[tuple[float, str]] = ((768, "GPT-2 small"), (1600, "GPT-2 XL"), (4096, "7B"),
                                           (12288, "GPT-3 175B")),
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """T_min (tokens per weight visit) vs hidden size d for each chip, with d_min and the large-d limit marked.

    The large-d limit drawn is the model's own, including the L2 re-blocking term.
    Panel (b) of document 002's figure; chapter "The training step as compute and commute".
    """
    ax = _axes(ax)
    widths = np.geomspace(*_log_range("d_range", d_range), 400)
    for colour, record in zip(PALETTE, chips):
        ax.plot(widths, t_min(widths, record, b_w=b_w, a=a), color=colour, lw=2,
                label=f"{record.label}: d_min {d_min(record, a=a):.0f}, "
                f"limit {t_min_large_d(record, b_w=b_w):.0f}")
        ax.axhline(t_min_large_d(record, b_w=b_w), color=colour, lw=0.9, ls=":")
    for d, name in models:
        ax.axvline(d, color="0.75", lw=0.8)
        ax.annotate(name, (d, 105), xytext=(3, 0), textcoords="offset points", rotation=90, fontsize=7.5,
                    color="0.35", va="bottom")
    ax.set(xscale="log", yscale="log", xlim=d_range, ylim=(100, 3e4), xlabel="hidden size d",
           ylabel="T_min (tokens per weight visit)")
    ax.legend(loc="upper right", title="chip: d_min, large-d limit of T_min (dotted)", title_fontsize=8.5,
              fontsize=8)
    return ax


def plot_energy_shares(
    d: float,
    chip: Chip,
    *,
    b_w: float = 12.0,
    a: float = 200.0,
    tokens_range: tuple[float, float] = (1.0, 1e5),
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """Stacked shares of one layer step's energy vs tokens per weight visit, with T_min marked.

    The legend sits below the axes, where it covers nothing. Panel (c) of document 002's
    figure; chapter "The element-wise tax and where the joules go".
    """
    ax = _axes(ax, figsize=(7.0, 4.8))
    tokens = np.geomspace(*_log_range("tokens_range", tokens_range), 300)
    shares = layer_step(d, tokens, chip, b_w=b_w, a=a).energy_shares()
    colours = (PALETTE[0], PALETTE[3], PALETTE[1], "#999999")
    ax.stackplot(tokens, *(shares[name] for name in ENERGY_PART_LABELS), colors=colours,
                 labels=list(ENERGY_PART_LABELS.values()), alpha=0.9)
    tokens_min = t_min(d, chip, b_w=b_w, a=a)
    if np.isfinite(tokens_min):
        ax.axvline(tokens_min, color="k", ls="--", lw=1)
        ax.annotate(f"T_min = {tokens_min:.0f}", (tokens_min, 0.5), xytext=(5, 0), textcoords="offset points",
                    fontsize=8.5, color="w", fontweight="bold")
    ax.set(xscale="log", xlim=tokens_range, ylim=(0, 1), xlabel="tokens per weight visit T",
           ylabel="share of the step's energy", title=f"d = {d:,.0f} on {chip.label}")
    ax.grid(axis="both", alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=2, fontsize=8)
    return ax


def plot_energy_per_flop(
    chips: Sequence[Chip],
    *,
    intensity_range: tuple[float, float] = (0.1, 1e4),
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """Dynamic energy per FLOP (pJ) vs HBM intensity, e_flop + e_hbm / I, one line per chip.

    Circles mark each chip's energy balance (where HBM and arithmetic energy are equal, so
    the curve is at twice e_flop), crosses its time balance. Chapter "What moving a byte costs".
    """
    from hwlib.energy import energy_per_flop_j

    ax = _axes(ax)
    intensity = np.geomspace(*intensity_range, 300)
    for colour, record in zip(PALETTE, chips):
        balance = machine_balance(record)
        ax.plot(intensity, np.asarray(energy_per_flop_j(intensity, record)) * 1e12, color=colour, lw=2,
                label=f"{record.label}: energy balance {balance.energy:.0f}, time balance {balance.time:.0f}")
        for x, marker in ((balance.energy, "o"), (balance.time, "X")):
            ax.plot([x], [float(energy_per_flop_j(x, record)) * 1e12], marker, color=colour, ms=7,
                    mec="k", mew=0.6)
    ax.set(xscale="log", yscale="log", xlim=intensity_range, xlabel="HBM intensity (FLOP/byte)",
           ylabel="dynamic energy per FLOP (pJ)")
    ax.legend(loc="upper right", title="balances in FLOP/byte: energy (circle), time (cross)",
              title_fontsize=8.5, fontsize=8)
    return ax


# --- measured rooflines (chapter "Your own roofline") -------------------------------------

_MARKERS = {"matmul": "o", "matvec": "^", "stream": "s"}


def plot_measured_roofline(
    chip: Chip,
    measurements: Sequence,
    *,
    peaks: dict[str, float] | None = None,
    intensity_range: tuple[float, float] = (0.05, 2000.0),
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """The measured roofline of ``chip`` (a ``hw.measured_chip``) per dtype, with each measured kernel on it.

    Lines: min(measured peak, I x measured bandwidth) for every dtype the record has. Points:
    each ``hw.Measurement`` at hwlib's intensity and its achieved FLOP/s (circles: square
    matmuls, labelled by size; triangles: matrix-vector; squares: the stream kernel).
    ``peaks`` maps a label to a theoretical peak (FLOP/s), drawn as a dotted line.
    Axes in GFLOP/s when the peak is under 1 TFLOP/s, else TFLOP/s.
    Chapter "Your own roofline".
    """
    from hwlib.hardware import require_chip

    chip = require_chip(chip)
    ax = _axes(ax, (7.0, 4.6))
    dtypes = list(chip.peak_flops_per_s)
    top = max([chip.peak(d) for d in dtypes] + list((peaks or {}).values()))
    scale, unit = (1e9, "GFLOP/s") if top < 1e12 else (TERA, "TFLOP/s")
    intensity = np.geomspace(*intensity_range, 400)
    colours = dict(zip(dtypes, PALETTE))
    for dtype in dtypes:
        ridge = ridge_point(chip, dtype)
        ax.plot(intensity, attainable_flops_per_s(intensity, chip, dtype) / scale, color=colours[dtype], lw=2,
                label=f"measured {dtype} roof: ridge {ridge:.3g} FLOP/B")
        ax.plot([ridge], [chip.peak(dtype) / scale], "o", color=colours[dtype], ms=5, mfc="white")
    for label, value in (peaks or {}).items():
        ax.axhline(value / scale, color="0.35", ls=":", lw=1.2)
        ax.annotate(label, (intensity_range[0], value / scale), xytext=(3, 3), textcoords="offset points",
                    fontsize=8, color="0.3")
    for record in measurements:
        kind = "matvec" if record.kernel == "matmul" and record.shape[2] == 1 else record.kernel
        colour = colours.get(record.dtype, PALETTE[7])
        ax.plot([record.intensity], [record.flops_per_s / scale], _MARKERS[kind], color=colour, ms=6,
                mec="k", mew=0.5, zorder=5)
        if kind == "matmul":
            ax.annotate(f"{record.shape[0]}", (record.intensity, record.flops_per_s / scale), xytext=(4, -9),
                        textcoords="offset points", fontsize=7, color="0.25")
    for kind, text in (("matmul", "square matmul (size n)"), ("matvec", "matrix-vector"),
                       ("stream", "stream y = a x + b")):
        ax.plot([], [], _MARKERS[kind], color="0.6", mec="k", mew=0.5, label=f"measured: {text}")
    ax.set(xscale="log", yscale="log", xlim=intensity_range, xlabel="arithmetic intensity (FLOP/byte, hwlib's counts)",
           ylabel=f"achieved throughput ({unit})", title=chip.label)
    ax.legend(loc="lower right", fontsize=8)
    return ax


# --- the batch-size squeeze (chapter "The batch-size squeeze") ----------------------------


def plot_time_to_target(
    cluster: object,
    params: float,
    n_devices: Sequence[int] = (8, 64, 256, 1024),
    *,
    min_tokens: float,
    critical_batch_tokens: float = 1e6,
    batch_range: tuple[float, float] = (1e3, 1e9),
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """Days to a target loss vs global batch (tokens) on ``cluster``, one line per N, B_opt marked.

    Each line is S_min (1 + B_crit / B)(t_fixed + B t_token / N) for ``min_tokens`` E_min;
    dotted lines of the same colour are the ideal E_min t_token / N, circles the time-optimal
    batch, the dashed grey line B_crit. Left of the minimum the fixed per-step costs
    dominate, right of it examples are wasted. Chapter "The batch-size squeeze".
    """
    ax = _axes(ax, (7.0, 5.0))
    devices = np.asarray(n_devices, dtype=float)
    squeeze = cluster_squeeze(cluster, params, devices, critical_batch_tokens)
    batches = np.geomspace(*batch_range, 400)
    curves = time_to_target(squeeze, batches[:, None], min_tokens)
    day = 86400.0
    for index, (colour, n) in enumerate(zip(PALETTE, devices)):
        best = float(np.atleast_1d(squeeze.optimal_batch_tokens)[index])
        at_best = time_to_target(cluster_squeeze(cluster, params, n, critical_batch_tokens), best, min_tokens)
        ax.plot(batches, curves.time_s[:, index] / day, color=colour, lw=2,
                label=f"N = {n:,.0f}: B_opt {best / 1e6:.2g} M tokens, {at_best.ratio:.2f} x ideal")
        ax.axhline(curves.ideal_time_s[0, index] / day, color=colour, lw=0.9, ls=":")
        ax.plot([best], [at_best.time_s / day], "o", color=colour, ms=7, mec="k", mew=0.6, zorder=5)
    ax.axvline(critical_batch_tokens, color="0.5", ls="--", lw=1)
    ideal_low = float(np.min(curves.ideal_time_s)) / day
    ax.set_ylim(ideal_low / 4, float(np.max(curves.time_s)) / day * 1.5)
    ax.annotate(f"B_crit = {critical_batch_tokens / 1e6:.3g} M tokens", (critical_batch_tokens, 0.97),
                xycoords=("data", "axes fraction"), xytext=(4, 0), textcoords="offset points", fontsize=8,
                color="0.3", va="top")
    ax.annotate("fixed per-step costs dominate", (0.02, 0.03), xycoords="axes fraction", fontsize=8.5,
                color="0.3")
    ax.annotate("examples wasted", (0.98, 0.03), xycoords="axes fraction", fontsize=8.5, color="0.3", ha="right")
    ax.set(xscale="log", yscale="log", xlim=batch_range, xlabel="global batch B (tokens per optimizer step)",
           ylabel="time to target (days)",
           title=f"{getattr(cluster, 'name', cluster)}, {params / 1e9:.3g}B parameters, "
           f"E_min = {min_tokens:.3g} tokens")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2, fontsize=8,
              title="circles: time-optimal batch; dotted: ideal (no fixed cost, no waste)", title_fontsize=8)
    return ax


def plot_regimes(steps: TrainingStep, labels: Sequence[str], axes: Sequence[plt.Axes] | None = None
                 ) -> Sequence[plt.Axes]:
    """Where each regime's time and energy go: shares of step time and of energy, one bar per regime.

    Left: layers, optimizer update and all-reduce as shares of the step time, labelled with
    ms per token; right: arithmetic, HBM and static energy, labelled with mJ per token.
    ``steps`` is ``hw.regime_steps(...)``; chapter "A 7B model, regime by regime".
    """
    if not isinstance(steps, TrainingStep):
        raise TypeError(f"steps must be a TrainingStep such as hw.regime_steps(chip), got {steps!r}")
    names = list(labels)
    if len(names) != np.size(steps.time_s):
        raise ValueError(f"labels must name each of the {np.size(steps.time_s)} regimes, got {len(names)}")
    if axes is None:
        axes = plt.subplots(1, 2, figsize=(9.0, 0.45 * len(names) + 1.8), sharey=True, layout="constrained")[1]
    panels = (
        (axes[0], steps.time_s, ("layers_time_s", "optimizer_time_s", "allreduce_time_s"),
         ("layers", "optimizer update", "all-reduce"), 1e3 * np.asarray(steps.time_per_token_s), "ms/token",
         "share of step time"),
        (axes[1], steps.energy_j, ("arithmetic_j", "hbm_j", "static_j"), ("arithmetic", "HBM", "static"),
         1e3 * np.asarray(steps.energy_per_token_j), "mJ/token", "share of step energy"),
    )
    position = np.arange(len(names))
    for (ax, total, fields, parts, per_token, unit, xlabel), colours in zip(panels, (PALETTE[:3], PALETTE[3:6])):
        left = np.zeros(len(names))
        for colour, field, part in zip(colours, fields, parts):
            share = np.asarray(getattr(steps, field)) / np.asarray(total)
            ax.barh(position, share, left=left, color=colour, label=part)
            left += share
        for y, value in zip(position, per_token):
            ax.annotate(f"{value:,.0f} {unit}" if value >= 100 else f"{value:.3g} {unit}", (1.0, y), xytext=(4, 0), textcoords="offset points",
                        va="center", fontsize=8)
        ax.set(xlim=(0, 1.34), xlabel=xlabel)
        ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0], ["0", "25 %", "50 %", "75 %", "100 %"])
        ax.grid(axis="y", visible=False)
        ax.legend(loc="upper center", bbox_to_anchor=(0.4, -0.18), ncols=3, fontsize=8)
    axes[0].set_yticks(position, names)
    axes[0].invert_yaxis()
    return axes
