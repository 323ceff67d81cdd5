"""Explorer widgets: change an assumption with a control and see the model answer at once.

Each explorer draws one matplotlib figure once and, on every change, only moves its
artists and re-encodes a small PNG, which keeps an update well under 100 ms. The image
and the text live in ordinary ipywidgets, so a built page shows the saved state.
Used by the chapter "Rooflines and ridge points".
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import ipywidgets as widgets
import matplotlib as mpl
import numpy as np
import PIL.Image
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from hwlib.hardware import Chip, chips as all_chips
from hwlib.plotting import PALETTE, STYLE
from hwlib.roofline import (
    attainable_flops_per_s,
    matmul_bytes,
    matmul_flops,
    matmul_intensity,
    ridge_point,
    roofline_time_s,
)
from hwlib.units import TERA, dtype_bytes, format_bytes, format_flops, format_flops_per_s, format_seconds

_SIZES = tuple(2**p for p in range(0, 17))
_INTENSITY = np.geomspace(0.01, 1e5, 200)


class RooflineExplorer:
    """Chip, dtype and matmul shape (m x k) @ (k x n) -> the kernel's point on the roofline."""

    def __init__(self, chips: Sequence[Chip] | None = None, chip: str = "TPU v5e", m: int = 1024,
                 k: int = 1024, n: int = 1024, dtype: str = "bf16") -> None:
        records = tuple(chips) if chips is not None else all_chips()
        if not records or not all(isinstance(record, Chip) for record in records):
            raise TypeError(f"chips must be a non-empty sequence of Chip records, got {chips!r}")
        by_label = {record.label: record for record in records}
        if chip not in by_label:
            raise KeyError(f"chip {chip!r} is not among the explorer's chips {sorted(by_label)}")
        for name, value in (("m", m), ("k", k), ("n", n)):
            if value not in _SIZES:
                raise ValueError(f"{name} must be a power of two from 1 to {_SIZES[-1]}, got {value!r}")
        layout, style = widgets.Layout(width="330px"), {"description_width": "70px"}
        self.chip = widgets.Dropdown(options=list(by_label.items()), value=by_label[chip],
                                     description="chip", layout=layout, style=style)
        self.dtype = widgets.Dropdown(description="dtype", layout=layout, style=style)
        self.m, self.k, self.n = (
            widgets.SelectionSlider(options=_SIZES, value=value, description=label, layout=layout, style=style)
            for value, label in ((m, "m (rows)"), (k, "k (inner)"), (n, "n (cols)"))
        )
        self.summary = widgets.HTML()
        self.image = widgets.Image(format="png")
        with mpl.rc_context(STYLE):
            self.figure = Figure(figsize=(5.6, 3.5), dpi=80)
            self.figure.subplots_adjust(left=0.14, right=0.97, bottom=0.15, top=0.9)
            self._canvas = FigureCanvasAgg(self.figure)
            self._ax = self.figure.add_subplot()
            (self._roof,) = self._ax.plot(_INTENSITY, _INTENSITY, color=PALETTE[0], lw=2)
            (self._point,) = self._ax.plot([1.0], [1.0], "D", color=PALETTE[3], ms=8)
            self._ridge = self._ax.axvline(1.0, color="0.5", ls="--", lw=1)
            self._ax.set(xscale="log", yscale="log", xlabel="arithmetic intensity (FLOP/byte)",
                         ylabel="attainable (TFLOP/s)", xlim=(_INTENSITY[0], _INTENSITY[-1]))
            self._ax.minorticks_off()
        self._syncing = False
        self._set_dtypes(dtype)
        for control in (self.chip, self.dtype, self.m, self.k, self.n):
            control.observe(self.update, names="value")
        self.update()
        controls = widgets.HBox([widgets.VBox([self.chip, self.dtype, self.summary]),
                                 widgets.VBox([self.m, self.k, self.n])])
        self.widget = widgets.VBox([controls, self.image])

    def _set_dtypes(self, preferred: str) -> None:
        available = list(self.chip.value.peak_flops_per_s)
        self._syncing = True
        self.dtype.options = available
        self.dtype.value = preferred if preferred in available else available[0]
        self._syncing = False

    def update(self, change: dict | None = None) -> None:
        """Recompute the kernel's point and redraw (called on every control change)."""
        if self._syncing:
            return
        owner = None if change is None else change.get("owner")
        if owner is self.chip:
            self._set_dtypes(self.dtype.value)
        record, dtype = self.chip.value, self.dtype.value
        m, k, n, size = self.m.value, self.k.value, self.n.value, dtype_bytes(dtype)
        intensity = matmul_intensity(m, k, n, size)
        flops, n_bytes = matmul_flops(m, k, n), matmul_bytes(m, k, n, size)
        ridge = ridge_point(record, dtype)
        attained = attainable_flops_per_s(intensity, record, dtype)
        bound = "compute-bound" if intensity >= ridge else "memory-bound"
        if owner in (None, self.chip, self.dtype):
            self._draw_background(record, dtype, ridge)
        else:
            self._canvas.restore_region(self._background)
        self._point.set_data([intensity], [attained / TERA])
        self._ax.draw_artist(self._point)
        self.summary.value = (
            f"<b>{bound}</b><br>intensity {intensity:.4g} FLOP/B (ridge {ridge:.4g})<br>"
            f"{format_flops(flops)}, {format_bytes(n_bytes)} moved<br>"
            f"attainable {format_flops_per_s(attained)}<br>"
            f"time at least {format_seconds(roofline_time_s(flops, n_bytes, record, dtype))}"
        )
        rgba = self._canvas.buffer_rgba()
        buffer = io.BytesIO()
        PIL.Image.frombuffer("RGBA", (rgba.shape[1], rgba.shape[0]), rgba).save(buffer, "png", compress_level=1)
        self.image.value = buffer.getvalue()

    def _draw_background(self, record: Chip, dtype: str, ridge: float) -> None:
        """Draw everything but the kernel's point once per chip and dtype, and keep it."""
        peak = record.peak(dtype) / TERA
        self._roof.set_ydata(attainable_flops_per_s(_INTENSITY, record, dtype) / TERA)
        self._ridge.set_xdata([ridge, ridge])
        self._ax.set_ylim(peak * 1e-6, peak * 3)
        self._ax.set_title(f"{record.label}, {dtype}: ridge {ridge:.4g} FLOP/B", fontsize=10)
        self._point.set_visible(False)
        self._canvas.draw()
        self._background = self._canvas.copy_from_bbox(self.figure.bbox)
        self._point.set_visible(True)

    def _repr_mimebundle_(self, **kwargs: object) -> dict:
        return self.widget._repr_mimebundle_(**kwargs)

