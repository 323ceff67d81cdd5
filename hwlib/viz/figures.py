"""Roofline figures: rooflines of catalogue chips, a kernel on them, capacity against ridge point, a measured roofline.

Each function draws on an axes it is given (or a new one) and returns it, so chapters can
combine panels. Chapters :ref:`ch-rooflines` and :ref:`ch-own-roofline`.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np

from hwlib.data.records import Chip, require_chip, require_chips
from hwlib.roofline import attainable_flops_per_s, ridge_point
from hwlib.units import TERA, GiB
from hwlib.viz.style import PALETTE, log_range, new_axes


def plot_roofline(
    chips: Sequence[Chip],
    dtype: str = "bf16",
    *,
    intensity_range: tuple[float, float] = (0.05, 5000.0),
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """Log-log rooflines (TFLOP/s vs FLOP/byte) of ``chips`` with each ridge point marked."""
    low, high = log_range("intensity_range", intensity_range)
    ax = new_axes(ax)
    intensity = np.geomspace(low, high, 400)
    for colour, record in zip(PALETTE, require_chips(chips)):
        ax.plot(
            intensity,
            attainable_flops_per_s(intensity, record, dtype) / TERA,
            color=colour,
            lw=2,
            label=f"{record.label}: ridge {ridge_point(record, dtype):.0f} FLOP/B",
        )
        ridge = ridge_point(record, dtype)
        ax.plot([ridge], [record.peak(dtype) / TERA], "o", color=colour, ms=5)
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="arithmetic intensity (FLOP/byte)",
        ylabel=f"attainable {dtype} throughput (TFLOP/s)",
    )
    ax.legend(loc="lower right")
    return ax


def mark_kernel(
    ax: plt.Axes, intensity: float, chip: Chip, label: str, dtype: str = "bf16", colour: str = "#000000"
) -> None:
    """Put a kernel of ``intensity`` (FLOP/byte) on ``chip``'s roofline, labelled unless ``label`` is empty."""
    flops = attainable_flops_per_s(intensity, chip, dtype) / TERA
    ax.plot([intensity], [flops], marker="D", color=colour, ms=7, zorder=5)
    if label:
        ax.annotate(label, (intensity, flops), textcoords="offset points", xytext=(6, -14), fontsize=8.5)


def plot_capacity_and_ridge(
    chips: Sequence[Chip], dtype: str = "bf16", axes: Sequence[plt.Axes] | None = None
) -> Sequence[plt.Axes]:
    """Two panels of horizontal bars: HBM per chip a program sees (GiB), and ridge point (FLOP/byte)."""
    chips = require_chips(chips)
    if axes is None:
        axes = plt.subplots(1, 2, figsize=(9.0, 0.35 * len(chips) + 1.4), sharey=True, layout="constrained")[1]
    labels = [record.label for record in chips]
    position = np.arange(len(chips))
    colours = [PALETTE[1] if record.source != "vendor" else PALETTE[0] for record in chips]
    capacity = np.array([record.capacity_bytes for record in chips]) / GiB
    ridge = np.array([ridge_point(record, dtype) for record in chips])
    for ax, values, xlabel, digits in (
        (axes[0], capacity, "HBM per chip a program sees (GiB)", 1),
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


# --- measured rooflines (chapter :ref:`ch-own-roofline`) -------------------------------------

_MARKERS = {"matmul": "o", "matvec": "^", "stream": "s"}


def plot_measured_roofline(
    chip: Chip,
    measurements: Sequence,
    *,
    peaks: dict[str, float] | None = None,
    intensity_range: tuple[float, float] = (0.05, 2000.0),
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """The measured roofline of ``chip`` (a ``hw.measure.measured_chip``) per dtype, with each measured kernel on it.

    Lines: min(measured peak, I x measured bandwidth) for every dtype the record has. Points:
    each ``hw.Measurement`` at hwlib's intensity and its achieved FLOP/s (circles: square
    matmuls, labelled by size; triangles: matrix-vector; squares: the stream kernel).
    ``peaks`` maps a label to a theoretical peak (FLOP/s), drawn as a dotted line.
    Axes in GFLOP/s when the peak is under 1 TFLOP/s, else TFLOP/s.
    Chapter :ref:`ch-own-roofline`.
    """
    chip = require_chip(chip)
    ax = new_axes(ax, (7.0, 4.6))
    dtypes = list(chip.peak_flops_per_s)
    top = max([chip.peak(d) for d in dtypes] + list((peaks or {}).values()))
    scale, unit = (1e9, "GFLOP/s") if top < 1e12 else (TERA, "TFLOP/s")
    intensity = np.geomspace(*log_range("intensity_range", intensity_range), 400)
    colours = dict(zip(dtypes, PALETTE))
    for dtype in dtypes:
        ridge = ridge_point(chip, dtype)
        ax.plot(
            intensity,
            attainable_flops_per_s(intensity, chip, dtype) / scale,
            color=colours[dtype],
            lw=2,
            label=f"measured {dtype} roof: ridge {ridge:.3g} FLOP/B",
        )
        ax.plot([ridge], [chip.peak(dtype) / scale], "o", color=colours[dtype], ms=5, mfc="white")
    for label, value in (peaks or {}).items():
        ax.axhline(value / scale, color="0.35", ls=":", lw=1.2)
        ax.annotate(
            label,
            (intensity_range[0], value / scale),
            xytext=(3, 3),
            textcoords="offset points",
            fontsize=8,
            color="0.3",
        )
    for record in measurements:
        kind = "matvec" if record.kernel == "matmul" and record.shape[2] == 1 else record.kernel
        colour = colours.get(record.dtype, PALETTE[7])
        ax.plot(
            [record.intensity],
            [record.flops_per_s / scale],
            _MARKERS[kind],
            color=colour,
            ms=6,
            mec="k",
            mew=0.5,
            zorder=5,
        )
        if kind == "matmul":
            ax.annotate(
                f"{record.shape[0]}",
                (record.intensity, record.flops_per_s / scale),
                xytext=(4, -9),
                textcoords="offset points",
                fontsize=7,
                color="0.25",
            )
    for kind, text in (
        ("matmul", "square matmul (size n)"),
        ("matvec", "matrix-vector"),
        ("stream", "stream y = a x + b"),
    ):
        ax.plot([], [], _MARKERS[kind], color="0.6", mec="k", mew=0.5, label=f"measured: {text}")
    ax.set(
        xscale="log",
        yscale="log",
        xlim=intensity_range,
        xlabel="arithmetic intensity (FLOP/byte, hwlib's counts)",
        ylabel=f"achieved throughput ({unit})",
        title=chip.label,
    )
    ax.legend(loc="lower right", fontsize=8)
    return ax
