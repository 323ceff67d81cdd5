"""Compute-to-commute figures: step intensity, T_min, energy shares, energy per FLOP, regimes, time to target.

Chapters :ref:`ch-moving-bytes`, :ref:`ch-compute-and-commute`, :ref:`ch-elementwise-tax`, :ref:`ch-seven-b-regimes`
and :ref:`ch-batch-squeeze`. Panels (a) to (c) redraw document 002's figure without its flaws (its legend covers
panel c; its title formula leaves out the re-blocking term).
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np

from hwlib.data import doc002
from hwlib.data.records import Chip, Cluster, require, require_chip, require_chips
from hwlib.energy import energy_per_flop_j, machine_balance
from hwlib.layer_model import d_min, layer_step, t_min, t_min_large_d
from hwlib.training.regimes import TrainingStep
from hwlib.training.squeeze import CRITICAL_BATCH, cluster_squeeze, time_to_target
from hwlib.units import format_number, format_quantity
from hwlib.viz.style import PALETTE, log_range, new_axes

ENERGY_PART_LABELS = {
    "arithmetic_j": "arithmetic (datapath and operand delivery on chip)",
    "hbm_weights_j": "HBM: weights and gradients",
    "hbm_activations_j": "HBM: activations between kernels",
    "static_j": "static / leakage (grows with time)",
}
"""Legend text of each energy part of ``hw.layer_step``, in stacking order."""


def plot_step_intensity(
    chip: Chip,
    ds: Sequence[float] = doc002.FIGURE_WIDTHS,
    balance_chips: Sequence[Chip] = (),
    *,
    b_w: float = doc002.B_W,
    a: float = doc002.A,
    tokens_range: tuple[float, float] = (1.0, 1e5),
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """HBM intensity of one layer's training step (FLOP/byte) vs tokens per weight visit, one line per d.

    Time balances of ``chip`` and ``balance_chips`` are dashed lines, ``chip``'s energy
    balance (where it has one) a dash-dot line, and the small-T asymptote I = 6 T / b_w a thin grey line.
    Panel (a) of document 002's figure; chapter :ref:`ch-compute-and-commute`.
    """
    chip = require_chip(chip)
    ax = new_axes(ax)
    tokens = np.geomspace(*log_range("tokens_range", tokens_range), 300)
    intensity = layer_step(np.asarray(ds, dtype=float)[:, None], tokens[None, :], chip, b_w=b_w, a=a).intensity
    for colour, d, values in zip(PALETTE, ds, intensity):
        ax.plot(tokens, values, color=colour, lw=2, label=f"d = {d:,.0f}")
    ax.plot(tokens, 6.0 * tokens / b_w, color="0.6", lw=0.8, label=f"small-T limit I = T/{b_w / 6:g}")
    styles = ("--", ":", (0, (5, 1, 1, 1)), (0, (1, 3)))
    for style, record in zip(styles, (chip, *balance_chips)):
        beta = machine_balance(record)
        ax.axhline(beta.time, color="k", ls=style, lw=1.1)
        ax.annotate(
            f"{record.label}: time balance {beta.time:.0f} FLOP/B",
            (tokens[0], beta.time),
            xytext=(4, 3),
            textcoords="offset points",
            fontsize=8,
        )
    if chip.hbm_energy is not None and chip.flop_energy is not None:
        energy = machine_balance(chip).energy
        ax.axhline(energy, color="0.45", ls="-.", lw=1)
        ax.annotate(
            f"{chip.label}: energy balance {energy:.0f} FLOP/B",
            (tokens[0], energy),
            xytext=(4, -11),
            textcoords="offset points",
            fontsize=8,
            color="0.3",
        )
    ax.set(
        xscale="log",
        yscale="log",
        xlim=tokens_range,
        ylim=(0.3, 5000),
        xlabel="tokens per weight visit T (micro-batch × sequence length, per device)",
        ylabel="HBM intensity of forward + backward (FLOP/byte)",
    )
    ax.legend(loc="lower right", title=f"traffic model on {chip.label}", title_fontsize=8.5)
    return ax


def plot_t_min(
    chips: Sequence[Chip],
    *,
    b_w: float = doc002.B_W,
    a: float = doc002.A,
    d_range: tuple[float, float] = (300.0, 30000.0),
    models: Sequence[tuple[float, str]] = doc002.FIGURE_MODELS,
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """T_min (tokens per weight visit) vs hidden size d for each chip, with d_min and the large-d limit marked.

    The large-d limit drawn is the model's own, including the L2 re-blocking term.
    Panel (b) of document 002's figure; chapter :ref:`ch-compute-and-commute`.
    """
    ax = new_axes(ax)
    widths = np.geomspace(*log_range("d_range", d_range), 400)
    for colour, record in zip(PALETTE, require_chips(chips)):
        ax.plot(
            widths,
            t_min(widths, record, b_w=b_w, a=a),
            color=colour,
            lw=2,
            label=f"{record.label}: d_min {d_min(record, a=a):.0f}, limit {t_min_large_d(record, b_w=b_w):.0f}",
        )
        ax.axhline(t_min_large_d(record, b_w=b_w), color=colour, lw=0.9, ls=":")
    for d, name in models:
        ax.axvline(d, color="0.75", lw=0.8)
        ax.annotate(
            name,
            (d, 105),
            xytext=(3, 0),
            textcoords="offset points",
            rotation=90,
            fontsize=7.5,
            color="0.35",
            va="bottom",
        )
    ax.set(
        xscale="log",
        yscale="log",
        xlim=d_range,
        ylim=(100, 3e4),
        xlabel="hidden size d",
        ylabel="T_min (tokens per weight visit)",
    )
    ax.legend(loc="upper right", title="chip: d_min, large-d limit of T_min (dotted)", title_fontsize=8.5, fontsize=8)
    return ax


def plot_energy_shares(
    d: float,
    chip: Chip,
    *,
    b_w: float = doc002.B_W,
    a: float = doc002.A,
    tokens_range: tuple[float, float] = (1.0, 1e5),
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """Stacked shares of one layer step's energy vs tokens per weight visit, with T_min marked.

    The legend sits below the axes, where it covers nothing. Panel (c) of document 002's
    figure; chapter :ref:`ch-elementwise-tax`.
    """
    ax = new_axes(ax, figsize=(7.0, 4.8))
    tokens = np.geomspace(*log_range("tokens_range", tokens_range), 300)
    shares = layer_step(d, tokens, chip, b_w=b_w, a=a).energy_shares()
    colours = (PALETTE[0], PALETTE[3], PALETTE[1], "#999999")
    ax.stackplot(
        tokens,
        *(shares[name] for name in ENERGY_PART_LABELS),
        colors=colours,
        labels=list(ENERGY_PART_LABELS.values()),
        alpha=0.9,
    )
    tokens_min = t_min(d, chip, b_w=b_w, a=a)
    if np.isfinite(tokens_min):
        ax.axvline(tokens_min, color="k", ls="--", lw=1)
        ax.annotate(
            f"T_min = {tokens_min:.0f}",
            (tokens_min, 0.5),
            xytext=(5, 0),
            textcoords="offset points",
            fontsize=8.5,
            color="w",
            fontweight="bold",
        )
    ax.set(
        xscale="log",
        xlim=tokens_range,
        ylim=(0, 1),
        xlabel="tokens per weight visit T",
        ylabel="share of the step's energy",
        title=f"d = {d:,.0f} on {chip.label}",
    )
    ax.grid(axis="both", alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=2, fontsize=8)
    return ax


def plot_energy_per_flop(
    chips: Sequence[Chip], *, intensity_range: tuple[float, float] = (0.1, 1e4), ax: plt.Axes | None = None
) -> plt.Axes:
    """Dynamic energy per FLOP (pJ) vs HBM intensity, e_flop + e_hbm / I, one line per chip.

    Circles mark each chip's energy balance (where HBM and arithmetic energy are equal, so
    the curve is at twice e_flop), crosses its time balance. Chapter :ref:`ch-moving-bytes`.
    """
    ax = new_axes(ax)
    intensity = np.geomspace(*log_range("intensity_range", intensity_range), 300)
    for colour, record in zip(PALETTE, chips):
        balance = machine_balance(record)
        ax.plot(
            intensity,
            np.asarray(energy_per_flop_j(intensity, record)) * 1e12,
            color=colour,
            lw=2,
            label=f"{record.label}: energy balance {balance.energy:.0f}, time balance {balance.time:.0f}",
        )
        for x, marker in ((balance.energy, "o"), (balance.time, "X")):
            ax.plot([x], [float(energy_per_flop_j(x, record)) * 1e12], marker, color=colour, ms=7, mec="k", mew=0.6)
    ax.set(
        xscale="log",
        yscale="log",
        xlim=intensity_range,
        xlabel="HBM intensity (FLOP/byte)",
        ylabel="dynamic energy per FLOP (pJ)",
    )
    ax.legend(
        loc="upper right", title="balances in FLOP/byte: energy (circle), time (cross)", title_fontsize=8.5, fontsize=8
    )
    return ax


# --- the batch-size squeeze (chapter :ref:`ch-batch-squeeze`) ----------------------------


def plot_time_to_target(
    cluster: Cluster,
    n_params: float,
    n_chips: Sequence[int] = doc002.TABLE6_CHIP_COUNTS,
    *,
    min_tokens: float,
    critical_batch_tokens: float = CRITICAL_BATCH,
    batch_range: tuple[float, float] = (1e3, 1e9),
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """Days to a target loss vs global batch (tokens) on ``cluster``, one line per N, B_opt marked.

    Each line is S_min (1 + B_crit / B)(t_fixed + B t_token / N) for ``min_tokens`` E_min;
    dotted lines of the same colour are the ideal E_min t_token / N, circles the time-optimal
    batch, the dashed grey line B_crit. Left of the minimum the fixed per-step costs
    dominate, right of it examples are wasted. Chapter :ref:`ch-batch-squeeze`.
    """
    cluster = require(Cluster, "cluster", cluster, "hw.cluster('hgx-h100-ndr')")
    ax = new_axes(ax, (7.0, 5.0))
    chips = np.asarray(n_chips, dtype=float)
    squeeze = cluster_squeeze(cluster, n_params, chips, critical_batch_tokens)
    batches = np.geomspace(*log_range("batch_range", batch_range), 400)
    curves = time_to_target(squeeze, batches[:, None], min_tokens)
    day = 86400.0
    for index, (colour, n) in enumerate(zip(PALETTE, chips)):
        best = float(np.atleast_1d(squeeze.optimal_batch_tokens)[index])
        at_best = time_to_target(cluster_squeeze(cluster, n_params, n, critical_batch_tokens), best, min_tokens)
        ax.plot(
            batches,
            curves.time_s[:, index] / day,
            color=colour,
            lw=2,
            label=f"N = {n:,.0f}: B_opt {best / 1e6:.2g} M tokens, {at_best.ratio:.2f} × ideal",
        )
        ax.axhline(curves.ideal_time_s[0, index] / day, color=colour, lw=0.9, ls=":")
        ax.plot([best], [at_best.time_s / day], "o", color=colour, ms=7, mec="k", mew=0.6, zorder=5)
    ax.axvline(critical_batch_tokens, color="0.5", ls="--", lw=1)
    ideal_low = float(np.min(curves.ideal_time_s)) / day
    # a decade under the lowest ideal line that no line enters (every time is at least its ideal): the notes
    # on the two regions go there, over no data
    ax.set_ylim(ideal_low / 10, float(np.max(curves.time_s)) / day * 1.5)
    notes_at = ideal_low / np.sqrt(10)
    ax.annotate(
        f"B_crit = {critical_batch_tokens / 1e6:.3g} M tokens",
        (critical_batch_tokens, 0.97),
        xycoords=("data", "axes fraction"),
        xytext=(4, 0),
        textcoords="offset points",
        fontsize=8,
        color="0.3",
        va="top",
    )
    for text, x, align in (("fixed per-step costs dominate", 0.02, "left"), ("examples wasted", 0.98, "right")):
        ax.annotate(
            text, (x, notes_at), xycoords=("axes fraction", "data"), fontsize=8.5, color="0.3", ha=align, va="center"
        )
    ax.set(
        xscale="log",
        yscale="log",
        xlim=batch_range,
        xlabel="global batch B (tokens per optimizer step)",
        ylabel="time to target (days)",
        title=f"{cluster.name}, {n_params / 1e9:.3g}B parameters, E_min = {format_quantity(min_tokens, 'tokens')}",
    )
    ax.legend(
        loc="upper center",
        bbox_to_anchor=(0.5, -0.15),
        ncol=2,
        fontsize=8,
        title="circles: time-optimal batch; dotted: ideal (no fixed cost, no waste)",
        title_fontsize=8,
    )
    return ax


def plot_regimes(
    steps: TrainingStep, labels: Sequence[str], axes: Sequence[plt.Axes] | None = None
) -> Sequence[plt.Axes]:
    """Where each regime's time and energy go: shares of step time and of energy, one bar per regime.

    Left: layers, optimizer update and all-reduce as shares of the step time, labelled with
    ms per token; right: arithmetic, HBM and static energy, labelled with mJ per token.
    ``steps`` is ``hw.regime_steps(...)``; chapter :ref:`ch-seven-b-regimes`.
    """
    if not isinstance(steps, TrainingStep):
        raise TypeError(f"steps must be a TrainingStep such as hw.regime_steps(chip), got {steps!r}")
    names = list(labels)
    if len(names) != np.size(steps.time_s):
        raise ValueError(f"labels must name each of the {np.size(steps.time_s)} regimes, got {len(names)}")
    if axes is None:
        axes = plt.subplots(1, 2, figsize=(9.0, 0.45 * len(names) + 1.8), sharey=True, layout="constrained")[1]
    panels = (
        (
            axes[0],
            steps.time_s,
            ("layers_time_s", "optimizer_time_s", "allreduce_time_s"),
            ("layers", "optimizer update", "all-reduce"),
            1e3 * np.asarray(steps.time_per_token_s),
            "ms/token",
            "share of step time",
        ),
        (
            axes[1],
            steps.energy_j,
            ("arithmetic_j", "hbm_j", "static_j"),
            ("arithmetic", "HBM", "static"),
            1e3 * np.asarray(steps.energy_per_token_j),
            "mJ/token",
            "share of step energy",
        ),
    )
    position = np.arange(len(names))
    for (ax, total, fields, parts, per_token, unit, xlabel), colours in zip(panels, (PALETTE[:3], PALETTE[3:6])):
        left = np.zeros(len(names))
        for colour, field, part in zip(colours, fields, parts):
            share = np.asarray(getattr(steps, field)) / np.asarray(total)
            ax.barh(position, share, left=left, color=colour, label=part)
            left += share
        for y, value in zip(position, per_token):
            ax.annotate(
                f"{format_number(value)} {unit}",
                (1.0, y),
                xytext=(4, 0),
                textcoords="offset points",
                va="center",
                fontsize=8,
            )
        ax.set(xlim=(0, 1.34), xlabel=xlabel)
        ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0], ["0", "25 %", "50 %", "75 %", "100 %"])
        ax.grid(axis="y", visible=False)
        ax.legend(loc="upper center", bbox_to_anchor=(0.4, -0.18), ncols=3, fontsize=8)
    axes[0].set_yticks(position, names)
    axes[0].invert_yaxis()
    return axes
