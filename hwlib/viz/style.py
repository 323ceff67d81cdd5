"""The book's look: one palette, one set of matplotlib settings, and the axes helpers every figure uses.

The palette is Okabe and Ito's ("Color Universal Design", 2008), safe for colour-blind readers.
Used by every chapter's figures and explorers.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from hwlib._checks import positive
from hwlib.viz.latex import register_latex_forms

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
"""matplotlib settings of every figure in the book."""


def use_book_style() -> None:
    """The book's display settings, which every chapter applies once, at the top: its matplotlib settings, and
    under IPython a ``text/latex`` form for tables, which the PDF book prints (``hwlib.viz.latex``).
    ``import hwlib`` alone changes neither."""
    plt.rcParams.update(STYLE)
    register_latex_forms()


def new_axes(ax: plt.Axes | None, figsize: tuple[float, float] = (7.0, 4.2)) -> plt.Axes:
    """``ax`` itself, or the axes of a new figure of ``figsize`` inches."""
    return ax if ax is not None else plt.subplots(figsize=figsize, layout="constrained")[1]


def log_range(name: str, bounds: object) -> tuple[float, float]:
    """(low, high) of a log axis: two positive numbers, low < high, else a ValueError naming ``name``."""
    values = positive(name, bounds)
    if values.shape != (2,) or not values[0] < values[1]:
        raise ValueError(f"{name} must be (low, high) with 0 < low < high, got {bounds!r}")
    return float(values[0]), float(values[1])
