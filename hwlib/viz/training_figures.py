"""Training-step figures: where the time of one step goes, mesh by mesh.

Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch

from hwlib.training.step import STEP_PARTS, TrainStep
from hwlib.viz.style import PALETTE, new_axes


def plot_step_breakdown(
    steps: Sequence[TrainStep], labels: Sequence[str] | None = None, *, ax: plt.Axes | None = None
) -> plt.Axes:
    """Horizontal stacked bars, one per step: compute, pipeline bubble and each collective's exposed time (s),
    with the MFU at the end of each bar; steps that do not fit are hatched and say so."""
    if not len(steps) or not all(isinstance(step, TrainStep) for step in steps):
        raise TypeError(f"steps must be a non-empty sequence of TrainStep results of hw.train_step, got {steps!r}")
    names = [str(step.mesh) for step in steps] if labels is None else list(labels)
    if len(names) != len(steps):
        raise ValueError(f"labels must have one entry per step ({len(steps)}), got {len(names)}")
    ax = new_axes(ax, (7.2, 0.45 * len(steps) + 2.2))
    rows = np.arange(len(steps))[::-1]
    left = np.zeros(len(steps))
    shown = [name for name in STEP_PARTS if any(s.parts_s[name] > 0 for s in steps)]
    colours = dict(zip(STEP_PARTS, ("#999999", "#DDDDDD", *PALETTE)))
    hatches = ["" if step.fits else "///" for step in steps]
    for name in shown:
        widths = np.array([s.parts_s[name] for s in steps])
        bars = ax.barh(
            rows, widths, left=left, color=colours[name], label=name, height=0.6, edgecolor="white", linewidth=0.5
        )
        for bar, hatch in zip(bars, hatches):
            bar.set_hatch(hatch)
        left += widths
    for row, step, end in zip(rows, steps, left):
        note = f"MFU {100 * step.mfu:.0f} %" if step.fits else "does not fit"
        ax.annotate(note, (end, row), textcoords="offset points", xytext=(4, -3), fontsize=8)
    ax.set_yticks(rows, names, fontsize=8)
    ax.set(xlabel="time of one step (s)", xlim=(0, left.max() * 1.3))
    handles = [Patch(facecolor=colours[name], edgecolor="white", label=name) for name in shown]
    if not all(step.fits for step in steps):  # one hatched swatch says what hatching means
        handles.append(Patch(facecolor="white", edgecolor="#555555", hatch="///", label="does not fit"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=3, fontsize=7.5, frameon=False)
    return ax
