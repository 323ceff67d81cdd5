"""The roofline explorer: chip, dtype and matmul shape -> the kernel's point on the roofline.

Used by the chapters :ref:`ch-rooflines` and :ref:`ch-own-roofline`.
"""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets
import numpy as np

from hwlib.data import chip as find_chip
from hwlib.data import chips as all_chips
from hwlib.data.records import Chip
from hwlib.roofline import (
    attainable_flops_per_s,
    is_compute_bound,
    matmul_bytes,
    matmul_flops,
    matmul_intensity,
    ridge_point,
    roofline_time_s,
)
from hwlib.units import TERA, dtype_bytes, format_bytes, format_flops, format_flops_per_s, format_number, format_seconds
from hwlib.viz.explorers.base import Explorer, chip_dropdown, choose, default_record, options_in, records_of
from hwlib.viz.style import PALETTE

MATMUL_SIZES = tuple(2**p for p in range(17))
"""Sizes m, k, n the roofline explorer offers (powers of two, 1 to 65536)."""
_INTENSITY = np.geomspace(0.01, 1e5, 200)


class RooflineExplorer(Explorer):
    """Chip, dtype and matmul shape (m x k) @ (k x n) -> the kernel's point on the chip's roofline.

    ``chips``: the Chip records offered (default every catalogue chip); ``chip``: the record shown
    first (default ``hw.chip("TPU v5e")``); works for every chip, measured ones included.
    Explained in the chapter :ref:`ch-rooflines`.
    """

    margins = (0.14, 0.15, 0.97, 0.9)

    def __init__(
        self,
        chips: Sequence[Chip] | None = None,
        chip: Chip | None = None,
        m: int = 1024,
        k: int = 1024,
        n: int = 1024,
        dtype: str = "bf16",
    ) -> None:
        records = all_chips("vendor") if chips is None else records_of("chips", chips, Chip)
        chip = default_record(find_chip("TPU v5e"), records) if chip is None else chip
        choose("chip", chip, records, Chip, "hw.chip('TPU v5e')")
        if dtype not in chip.peak_flops_per_s:
            raise ValueError(f"dtype must be one of {sorted(chip.peak_flops_per_s)} for {chip.label}, got {dtype!r}")
        for name, value in (("m", m), ("k", k), ("n", n)):
            options_in(name, value, MATMUL_SIZES, f"a power of two from 1 to {MATMUL_SIZES[-1]}")
        layout, style = widgets.Layout(width="330px"), {"description_width": "70px"}
        self.chip = chip_dropdown(records, chip, layout=layout, style=style)
        self.dtype = widgets.Dropdown(
            options=list(chip.peak_flops_per_s), value=dtype, description="dtype", layout=layout, style=style
        )
        self.m, self.k, self.n = (
            widgets.SelectionSlider(options=MATMUL_SIZES, value=value, description=label, layout=layout, style=style)
            for value, label in ((m, "m (rows)"), (k, "k (inner)"), (n, "n (cols)"))
        )
        super().__init__([self.chip, self.dtype, self.m, self.k, self.n])

    def arrange(self) -> widgets.Widget:
        controls = widgets.HBox(
            [widgets.VBox([self.chip, self.dtype, self.summary]), widgets.VBox([self.m, self.k, self.n])]
        )
        return widgets.VBox([controls, self.image])

    def setup(self) -> list:
        self._ax = ax = self.figure.add_subplot()
        (self._roof,) = ax.plot(_INTENSITY, _INTENSITY, color=PALETTE[0], lw=2)
        self._ridge = ax.axvline(1.0, color="0.5", ls="--", lw=1)
        (self._point,) = ax.plot([1.0], [1.0], "D", color=PALETTE[3], ms=8)
        ax.set(
            xscale="log",
            yscale="log",
            xlabel="arithmetic intensity (FLOP/byte)",
            ylabel="attainable (TFLOP/s)",
            xlim=(_INTENSITY[0], _INTENSITY[-1]),
        )
        ax.minorticks_off()
        return [self._point]

    def sync(self, owner: object) -> None:
        """A new chip offers its own dtypes; keep the chosen one where it has it."""
        available = list(self.chip.value.peak_flops_per_s)
        if list(self.dtype.options) != available:
            keep = self.dtype.value if self.dtype.value in available else available[0]
            self.dtype.options = available
            self.dtype.value = keep

    def background_key(self) -> tuple:
        return (self.chip.value, self.dtype.value)

    def draw_background(self) -> None:
        record, dtype = self.chip.value, self.dtype.value
        ridge, peak = ridge_point(record, dtype), record.peak(dtype) / TERA
        self._roof.set_ydata(np.asarray(attainable_flops_per_s(_INTENSITY, record, dtype)) / TERA)
        self._ridge.set_xdata([ridge, ridge])
        self._ax.set_ylim(peak * 1e-6, peak * 3)
        self._ax.set_title(f"{record.label}, {dtype}: ridge {format_number(ridge, 4)} FLOP/B", fontsize=10)

    def refresh(self) -> str:
        record, dtype = self.chip.value, self.dtype.value
        m, k, n, size = self.m.value, self.k.value, self.n.value, dtype_bytes(dtype)
        intensity = matmul_intensity(m, k, n, size)
        flops, n_bytes = matmul_flops(m, k, n), matmul_bytes(m, k, n, size)
        attained = attainable_flops_per_s(intensity, record, dtype)
        bound = "compute-bound" if is_compute_bound(intensity, record, dtype) else "memory-bound"
        self._point.set_data([intensity], [attained / TERA])
        return (
            f"<b>{bound}</b><br>intensity {format_number(intensity, 4)} FLOP/B "
            f"(ridge {format_number(ridge_point(record, dtype), 4)})<br>"
            f"{format_flops(flops)}, {format_bytes(n_bytes)} moved<br>"
            f"attainable {format_flops_per_s(attained)}<br>"
            f"time at least {format_seconds(roofline_time_s(flops, n_bytes, record, dtype))}"
        )
