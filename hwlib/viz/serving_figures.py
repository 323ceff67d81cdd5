"""Serving figures: prefill and decode on a chip's roofline, and latency against throughput.

Chapter :ref:`ch-serving`.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FormatStrFormatter, LogLocator, NullLocator

from hwlib._checks import positive
from hwlib.data.records import Chip, ModelShape, require, require_chip
from hwlib.precision import PRECISIONS
from hwlib.serving.plan import serving_curve
from hwlib.serving.step import inference_step
from hwlib.units import TERA
from hwlib.viz.figures import plot_roofline
from hwlib.viz.style import PALETTE, new_axes


def _precision(name: object) -> dict:
    if name not in PRECISIONS:
        raise ValueError(f"precision must be one of {tuple(PRECISIONS)}, got {name!r}")
    return dict(PRECISIONS[name])


def plot_serving_roofline(
    model: ModelShape,
    chip: Chip,
    context_len: int,
    batches: Sequence[int],
    prompt_len: int,
    *,
    precision: str = "bf16",
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """One chip's roofline with a decode step at each batch (context ``context_len``) and one prefill of
    ``prompt_len`` tokens: attained FLOP/s at the step's lower-bound time against its FLOPs per byte."""
    model = require(ModelShape, "model", model, "hw.model('llama-3-8b')")
    chip = require_chip(chip)
    options = _precision(precision)
    sizes = np.atleast_1d(positive("batches", batches, integral=True)).astype(np.int64)
    ax = plot_roofline([chip], options["compute_dtype"], intensity_range=(0.3, 30000.0), ax=new_axes(ax, (7.0, 4.4)))
    decode = inference_step(model, chip, sizes, context_len, 1, **options)
    intensity = np.asarray(decode.flops) / np.asarray(decode.bytes)
    attained = np.asarray(decode.flops) / np.asarray(decode.time_s) / TERA
    ax.plot(
        intensity,
        attained,
        "o-",
        color=PALETTE[3],
        ms=5,
        lw=1,
        label=f"decode, {context_len:,}-token context, batch {sizes[0]:,} to {sizes[-1]:,}",
    )
    for size, x, y in zip(sizes[[0, -1]], intensity[[0, -1]], attained[[0, -1]]):
        ax.annotate(f"batch {size:,}", (x, y), textcoords="offset points", xytext=(6, -12), fontsize=8)
    prefill = inference_step(model, chip, 1, 0, prompt_len, **options)
    ax.plot(
        [prefill.flops / prefill.bytes],
        [prefill.flops / prefill.time_s / TERA],
        "D",
        color=PALETTE[2],
        ms=7,
        label=f"prefill of one {prompt_len:,}-token prompt",
    )
    ax.set_title(f"{model.name}, {precision}, one {chip.label}", fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    return ax


def plot_latency_throughput(
    model: ModelShape,
    systems: Sequence[tuple[Chip, int, str]],
    context_len: int,
    batches: Sequence[int],
    *,
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """Tokens/s per chip against time per output token (ms) as the decode batch grows, one line per
    (chip, n_chips, precision) in ``systems``; each line stops at the largest batch whose caches fit."""
    model = require(ModelShape, "model", model, "hw.model('llama-3-8b')")
    if not len(systems):
        raise ValueError("systems must list at least one (chip, n_chips, precision)")
    sizes = np.atleast_1d(positive("batches", batches, integral=True)).astype(np.int64)
    ax = new_axes(ax, (7.0, 5.2))
    ends = []
    for colour, (chip, n_chips, precision) in zip(PALETTE, systems):
        curve = serving_curve(
            model, require_chip(chip), context_len, sizes, n_chips, include_largest=True, **_precision(precision)
        )
        shown = curve.fits
        if not shown.any():
            continue
        x, y = curve.time_per_token_s[shown] * 1e3, curve.tokens_per_s_per_chip[shown]
        ax.plot(
            x,
            y,
            "o-",
            color=colour,
            ms=3.5,
            lw=1.8,
            label=f"{n_chips} × {chip.label}, {precision}: up to batch {curve.batches[shown][-1]:,}",
        )
        ends.append((x[-1], y[-1], f"{curve.batches[shown][-1]:,}", colour))
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="time per output token, the model's (ms)",
        ylabel="output tokens/s per chip, the model's",
        title=f"{model.name}, {context_len:,}-token context: batch 1 (left) to the largest that fits",
    )
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.xaxis.set_minor_locator(NullLocator())
    if ends:  # room right of the last points for their labels
        ax.set_xlim(right=max(end[0] for end in ends) * 1.45)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize=7.5, frameon=False)
    label_ends(ax, ends)
    return ax


def label_ends(ax: plt.Axes, ends: Sequence[tuple[float, float, str, str]], gap_pt: float = 9.0) -> None:
    """Label each line's last point, ``ends`` = (x, y, text, colour), just right of it; labels that would
    overlap (two lines ending close together) are moved apart vertically, ``gap_pt`` points at least."""
    figure = ax.figure
    figure.draw_without_rendering()  # the layout settles, so points on the page are final
    points_per_pixel = 72.0 / figure.dpi
    heights = [ax.transData.transform((x, y))[1] * points_per_pixel for x, y, _, _ in ends]
    lowest = -np.inf
    for height, (x, y, text, colour) in sorted(zip(heights, ends), key=lambda pair: pair[0]):
        placed = max(height, lowest + gap_pt)
        lowest = placed
        ax.annotate(
            text,
            (x, y),
            textcoords="offset points",
            xytext=(4, placed - height),
            va="center",
            fontsize=7.5,
            color=colour,
        )
