"""Figures with one look: labelled axes with units, a colour-blind-safe palette, page width.

The palette is Okabe and Ito's ("Color Universal Design", 2008). Each function draws on
an axes it is given (or a new one) and returns it, so chapters can combine panels.
Used by the chapter "Rooflines and ridge points".
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np

from hwlib.hardware import Chip
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


def plot_roofline(
    chips: Sequence[Chip],
    dtype: str = "bf16",
    *,
    intensity_range: tuple[float, float] = (0.05, 5000.0),
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """Log-log rooflines (TFLOP/s vs FLOP/byte) of ``chips`` with each ridge point marked."""
    ax = _axes(ax)
    intensity = np.geomspace(*intensity_range, 400)
    for colour, record in zip(PALETTE, chips):
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
