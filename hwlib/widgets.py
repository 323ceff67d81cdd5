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

from hwlib.hardware import Chip, chips as all_chips, require_chips
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


def _png(canvas: FigureCanvasAgg) -> bytes:
    """The canvas as it stands, as PNG bytes for an ipywidgets.Image (fast, light compression)."""
    rgba = canvas.buffer_rgba()
    buffer = io.BytesIO()
    PIL.Image.frombuffer("RGBA", (rgba.shape[1], rgba.shape[0]), rgba).save(buffer, "png", compress_level=1)
    return buffer.getvalue()


class RooflineExplorer:
    """Chip, dtype and matmul shape (m x k) @ (k x n) -> the kernel's point on the roofline."""

    def __init__(self, chips: Sequence[Chip] | None = None, chip: str = "TPU v5e", m: int = 1024,
                 k: int = 1024, n: int = 1024, dtype: str = "bf16") -> None:
        records = all_chips() if chips is None else require_chips(chips)
        by_label = {record.label: record for record in records}
        if chip not in by_label:
            raise KeyError(f"chip {chip!r} is not among the explorer's chips {sorted(by_label)}")
        if dtype not in by_label[chip].peak_flops_per_s:
            raise ValueError(f"dtype must be one of {sorted(by_label[chip].peak_flops_per_s)} for {chip}, "
                             f"got {dtype!r}")
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
        self.image.value = _png(self._canvas)

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



# --- memory explorers (chapters "HBM budgets for training" and "KV-cache precision") -----

from hwlib.memory import (  # noqa: E402
    PARTS,
    TRAINING_RECIPES,
    activation_bytes,
    chips_needed,
    decode_step_time_s,
    deployment_chips,
    deployment_name,
    tokens_that_fit,
    training_state_breakdown,
    usable_bytes,
)
from hwlib.models import MODELS, ModelShape  # noqa: E402
from hwlib.units import GiB  # noqa: E402

_LAYOUT = {"width": "330px"}
_STYLE = {"description_width": "90px"}
_SEQ_LENS = tuple(2**p for p in range(9, 18))
_BATCHES = tuple(2**p for p in range(0, 11))
_KV_DTYPES = ("fp32", "bf16", "int8", "int4")
_RECOMPUTE_OPTIONS = (("none", "none"), ("selective / FlashAttention", "selective"), ("full", "full"))


def _chip_options(chips: Sequence[Chip] | None, default: str) -> tuple[list, Chip]:
    from hwlib.memory import DEPLOYMENTS

    records = require_chips(chips) if chips is not None else tuple(c for c in all_chips() if c.key in DEPLOYMENTS)
    by_label = {record.label: record for record in records}
    if default not in by_label:
        raise KeyError(f"chip {default!r} is not among the explorer's chips {sorted(by_label)}")
    return list(by_label.items()), by_label[default]


def _model_options(models: Sequence[ModelShape] | None, default: str, need_width: bool) -> tuple[list, ModelShape]:
    records = tuple(models) if models is not None else MODELS
    if not records or not all(isinstance(record, ModelShape) for record in records):
        raise TypeError(f"models must be a non-empty sequence of ModelShape records, got {models!r}")
    if need_width:
        records = tuple(record for record in records if record.hidden is not None)
    by_name = {record.name: record for record in records}
    if default not in by_name:
        raise KeyError(f"model {default!r} is not among the explorer's models {sorted(by_name)}")
    return list(by_name.items()), by_name[default]


class MemoryBudgetExplorer:
    """Model, recipe, chip, usable fraction and sequence length -> training memory and chips.

    The bar splits weights, gradients, master copy, optimizer state and the activations
    of one sequence (micro-batch 1, all layers, no tensor parallelism) as shares of the
    usable HBM of the smallest real deployment that holds them, counting memory as
    pooled (state perfectly sharded, as the source notebook does).
    Explained in the chapter "HBM budgets for training".
    """

    def __init__(self, chips: Sequence[Chip] | None = None, chip: str = "TPU v5e",
                 models: Sequence[ModelShape] | None = None, model: str = "Llama 3 8B",
                 recipe: str = "zero_mixed_adam", usable_fraction: float = 0.8, seq_len: int = 4096) -> None:
        chip_options, chip_value = _chip_options(chips, chip)
        model_options, model_value = _model_options(models, model, need_width=True)
        if recipe not in TRAINING_RECIPES:
            raise KeyError(f"recipe must be one of {tuple(TRAINING_RECIPES)}, got {recipe!r}")
        if seq_len not in _SEQ_LENS:
            raise ValueError(f"seq_len must be a power of two from {_SEQ_LENS[0]} to {_SEQ_LENS[-1]}, got {seq_len!r}")
        if not 0.5 <= usable_fraction <= 1.0:
            raise ValueError(f"usable_fraction must be in [0.5, 1], got {usable_fraction!r}")
        layout, style = widgets.Layout(**_LAYOUT), _STYLE
        self.model = widgets.Dropdown(options=model_options, value=model_value, description="model",
                                      layout=layout, style=style)
        self.recipe = widgets.Dropdown(options=[(r.label, key) for key, r in TRAINING_RECIPES.items()],
                                       value=recipe, description="recipe", layout=layout, style=style)
        self.chip = widgets.Dropdown(options=chip_options, value=chip_value, description="chip",
                                     layout=layout, style=style)
        self.usable = widgets.FloatSlider(value=usable_fraction, min=0.5, max=1.0, step=0.05,
                                          description="usable HBM", readout_format=".0%",
                                          layout=layout, style=style)
        self.seq_len = widgets.SelectionSlider(options=_SEQ_LENS, value=seq_len, description="sequence",
                                               layout=layout, style=style)
        self.recompute = widgets.Dropdown(options=_RECOMPUTE_OPTIONS, value="none", description="recompute",
                                          layout=layout, style=style)
        self.summary = widgets.HTML()
        self.image = widgets.Image(format="png")
        labels = [*PARTS, "activations"]
        with mpl.rc_context(STYLE):
            self.figure = Figure(figsize=(6.4, 2.0), dpi=80)
            self.figure.subplots_adjust(left=0.04, right=0.97, bottom=0.3, top=0.72)
            self._canvas = FigureCanvasAgg(self.figure)
            self._ax = self.figure.add_subplot()
            self._bars = self._ax.barh([0] * len(labels), [0.0] * len(labels), left=[0.0] * len(labels),
                                       color=PALETTE[: len(labels)], height=0.6)
            self._ax.set(xlim=(0, 100), ylim=(-0.5, 0.5), yticks=[],
                         xlabel="share of the deployment's usable HBM (%)")
            self._ax.legend(self._bars, labels, ncol=5, loc="lower center", bbox_to_anchor=(0.5, 1.02),
                            fontsize=8, handlelength=1.0, columnspacing=1.0)
            self._ax.grid(axis="y", visible=False)
            for bar in self._bars:
                bar.set_animated(True)
            self._canvas.draw()
            self._background = self._canvas.copy_from_bbox(self.figure.bbox)
        for control in (self.model, self.recipe, self.chip, self.usable, self.seq_len, self.recompute):
            control.observe(self.update, names="value")
        self.update()
        controls = widgets.HBox([widgets.VBox([self.model, self.recipe, self.chip]),
                                 widgets.VBox([self.usable, self.seq_len, self.recompute])])
        self.widget = widgets.VBox([controls, self.summary, self.image])

    def parts_bytes(self) -> dict[str, float]:
        """Bytes of each part for the current settings (state parts and activations)."""
        record = self.model.value
        parts = training_state_breakdown(record.params, self.recipe.value)
        per_layer = activation_bytes(self.seq_len.value, 1, record.hidden, record.heads,
                                     recompute=self.recompute.value)
        return {**parts, "activations": record.layers * per_layer}

    def update(self, change: dict | None = None) -> None:
        """Recompute the budget and move the bars (called on every control change)."""
        parts = self.parts_bytes()
        total = sum(parts.values())
        chip, share = self.chip.value, self.usable.value
        needed = chips_needed(total, chip, share)
        plan = deployment_chips(total, chip, share)
        capacity = usable_bytes(chip, share, plan)
        left = 0.0
        self._canvas.restore_region(self._background)
        for bar, value in zip(self._bars, parts.values()):
            width = 100 * value / capacity
            bar.set_x(left)
            bar.set_width(width)
            left += width
            self._ax.draw_artist(bar)
        self._canvas.blit(self.figure.bbox)
        self.summary.value = (
            f"<b>{total / GiB:,.1f} GiB</b> (state {sum(list(parts.values())[:4]) / GiB:,.1f} GiB, "
            f"activations {parts['activations'] / GiB:,.2f} GiB): <b>{needed:,} chips</b> at "
            f"{share:.0%} of {chip.hbm_bytes / GiB:.4g} GiB; smallest deployment "
            f"<b>{deployment_name(plan, chip)}</b>, {left:.0f} % full"
        )
        self.image.value = _png(self._canvas)

    def _repr_mimebundle_(self, **kwargs: object) -> dict:
        return self.widget._repr_mimebundle_(**kwargs)


class KVCacheExplorer:
    """Model, chip, weight dtype, context and batch -> KV-cache size and the decode-step bound.

    One line per KV-cache dtype: (weight bytes + batch x KV bytes) / HBM bandwidth against
    the batch, ending at the largest batch whose caches fit beside the weights; the
    markers sit at the chosen batch. Explained in the chapter "KV-cache precision".
    """

    def __init__(self, chips: Sequence[Chip] | None = None, chip: str = "H100-SXM",
                 models: Sequence[ModelShape] | None = None, model: str = "Llama 3 8B",
                 weight_dtype: str = "bf16", context: int = 8192, batch: int = 16,
                 usable_fraction: float = 0.8) -> None:
        chip_options, chip_value = _chip_options(chips, chip)
        model_options, model_value = _model_options(models, model, need_width=False)
        if weight_dtype not in ("bf16", "fp8", "int8", "int4"):
            raise ValueError(f"weight_dtype must be one of ('bf16', 'fp8', 'int8', 'int4'), got {weight_dtype!r}")
        if context not in _SEQ_LENS:
            raise ValueError(f"context must be a power of two from {_SEQ_LENS[0]} to {_SEQ_LENS[-1]}, got {context!r}")
        if batch not in _BATCHES:
            raise ValueError(f"batch must be a power of two from 1 to {_BATCHES[-1]}, got {batch!r}")
        layout, style = widgets.Layout(**_LAYOUT), _STYLE
        self.usable_fraction = usable_fraction
        self.model = widgets.Dropdown(options=model_options, value=model_value, description="model",
                                      layout=layout, style=style)
        self.chip = widgets.Dropdown(options=chip_options, value=chip_value, description="chip",
                                     layout=layout, style=style)
        self.weight_dtype = widgets.Dropdown(options=["bf16", "fp8", "int8", "int4"], value=weight_dtype,
                                             description="weights", layout=layout, style=style)
        self.context = widgets.SelectionSlider(options=_SEQ_LENS, value=context, description="context",
                                               layout=layout, style=style)
        self.batch = widgets.SelectionSlider(options=_BATCHES, value=batch, description="batch",
                                             layout=layout, style=style)
        self.summary = widgets.HTML()
        self.image = widgets.Image(format="png")
        self._x = np.array(_BATCHES, dtype=float)
        with mpl.rc_context(STYLE):
            self.figure = Figure(figsize=(6.0, 3.4), dpi=80)
            self.figure.subplots_adjust(left=0.13, right=0.97, bottom=0.16, top=0.9)
            self._canvas = FigureCanvasAgg(self.figure)
            self._ax = self.figure.add_subplot()
            self._lines = [self._ax.plot(self._x, self._x, color=c, lw=2, label=f"KV {d}")[0]
                           for c, d in zip(PALETTE, _KV_DTYPES)]
            self._points = [self._ax.plot([1.0], [1.0], "o", color=c, ms=7, animated=True)[0]
                            for c in PALETTE[: len(_KV_DTYPES)]]
            self._ax.set(xscale="log", xlabel="batch (sequences)",
                         ylabel="decode step, lower bound (ms)", xlim=(0.8, _BATCHES[-1] * 1.25))
            self._ax.minorticks_off()
            self._ax.legend(loc="upper left", fontsize=8)
        for control in (self.model, self.chip, self.weight_dtype, self.context, self.batch):
            control.observe(self.update, names="value")
        self.update()
        controls = widgets.HBox([widgets.VBox([self.model, self.chip, self.weight_dtype]),
                                 widgets.VBox([self.context, self.batch])])
        self.widget = widgets.VBox([controls, self.summary, self.image])

    def _curves(self) -> dict[str, tuple[float, float, np.ndarray]]:
        record, chip = self.model.value, self.chip.value
        weights = record.weight_bytes(self.weight_dtype.value)
        curves = {}
        for dtype in _KV_DTYPES:
            per_sequence = record.kv_bytes(self.context.value, dtype)
            fit = tokens_that_fit(chip, weights, record.kv_bytes_per_token(dtype), self.usable_fraction)
            fit = fit // self.context.value
            curves[dtype] = (per_sequence, fit, decode_step_time_s(weights, per_sequence, self._x, chip) * 1e3)
        return curves

    def update(self, change: dict | None = None) -> None:
        """Recompute the curves (model, chip, dtype or context changed) or move the markers (batch)."""
        owner = None if change is None else change.get("owner")
        curves = self._curves()
        batch = self.batch.value
        if owner is not self.batch:
            for line, (_, fit, times) in zip(self._lines, curves.values()):
                line.set_ydata(np.where(self._x <= fit, times, np.nan))
            shown = np.concatenate([line.get_ydata() for line in self._lines])
            top = np.nanmax(shown) if np.isfinite(shown).any() else 1.0
            self._ax.set_ylim(0, top * 1.15)
            self._ax.set_title(f"{self.model.value.name} on one {self.chip.value.label}", fontsize=10)
            self._canvas.draw()
            self._background = self._canvas.copy_from_bbox(self.figure.bbox)
        else:
            self._canvas.restore_region(self._background)
        index = _BATCHES.index(batch)
        rows = []
        for point, (dtype, (per_sequence, fit, times)) in zip(self._points, curves.items()):
            fits = batch <= fit
            point.set_data([batch], [times[index]])
            point.set_visible(bool(fits))
            self._ax.draw_artist(point)
            verdict = f"{times[index]:.3g} ms" if fits else "does not fit"
            rows.append(f"<tr><td>{dtype}</td><td>{per_sequence / GiB:,.3g} GiB</td>"
                        f"<td>{int(fit):,}</td><td>{verdict}</td></tr>")
        self._canvas.blit(self.figure.bbox)
        self.summary.value = (
            "<table><tr><th>KV dtype</th><th>cache per sequence</th><th>max batch</th>"
            f"<th>step at batch {batch}</th></tr>" + "".join(rows) + "</table>"
        )
        self.image.value = _png(self._canvas)

    def _repr_mimebundle_(self, **kwargs: object) -> dict:
        return self.widget._repr_mimebundle_(**kwargs)


# --- compute-to-commute explorers (chapters "What moving a byte costs", "The training step
# as compute and commute", "The element-wise tax and where the joules go", "A 7B model,
# regime by regime") ------------------------------------------------------------------------

from hwlib.energy import ENERGY_FIELDS, energy_per_flop_j, machine_balance  # noqa: E402
from hwlib.layer_model import (  # noqa: E402
    FABRICS,
    d_min,
    fabric_bytes_per_s,
    layer_step,
    t_min,
    training_step,
    transformer_params,
)

COMMUTE_WIDTHS = (256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 5120, 6144, 8192, 12288, 16384)
"""Hidden sizes d the compute-to-commute explorers offer."""
COMMUTE_TOKENS = tuple(2**p for p in range(0, 18))
"""Tokens per weight visit T the explorers offer (powers of two, 1 to 131072)."""
_COMMUTE_T_CURVE = np.geomspace(1, 2**17, 160)


class _CommuteExplorer:
    """Shared controls (chip, d, T, b_w, a) and the draw-once, blit-on-change machinery."""

    figsize = (5.6, 3.5)
    extra_controls: tuple = ()

    def __init__(self, chips: Sequence[Chip] | None = None, chip: str = "A100-80GB [doc002]", d: int = 4096,
                 T: int = 2048, b_w: float = 12.0, a: float = 200.0) -> None:
        records = require_chips(chips) if chips is not None else tuple(
            c for c in all_chips() if c.l2 is not None and all(getattr(c, f) is not None for f in ENERGY_FIELDS))
        by_label = {record.label: record for record in records}
        if chip not in by_label:
            raise KeyError(f"chip {chip!r} is not among the explorer's chips {sorted(by_label)}")
        for name, value, options in (("d", d, COMMUTE_WIDTHS), ("T", T, COMMUTE_TOKENS)):
            if value not in options:
                raise ValueError(f"{name} must be one of {options}, got {value!r}")
        if not (isinstance(b_w, (int, float)) and 0 <= b_w <= 24):
            raise ValueError(f"b_w must be a number from 0 to 24 bytes per parameter, got {b_w!r}")
        if not (isinstance(a, (int, float)) and 0 <= a <= 400):
            raise ValueError(f"a must be a number from 0 to 400 bytes per token per unit d, got {a!r}")
        for record in records:
            machine_balance(record)  # raises naming missing energy fields
        style = {"description_width": "110px"}
        self.chip = widgets.Dropdown(options=list(by_label.items()), value=by_label[chip], description="chip",
                                     style=style)
        self.d = widgets.SelectionSlider(options=COMMUTE_WIDTHS, value=d, description="d (hidden)", style=style)
        self.T = widgets.SelectionSlider(options=COMMUTE_TOKENS, value=T, description="T (tokens/visit)",
                                         style=style)
        self.b_w = widgets.FloatSlider(value=b_w, min=0, max=24, step=1, description="b_w (B/param)", style=style)
        self.a = widgets.FloatSlider(value=a, min=0, max=400, step=10, description="a (B/token/d)", style=style)
        self._make_extra_controls(style)
        self.summary = widgets.HTML()
        self.image = widgets.Image(format="png")
        with mpl.rc_context(STYLE):
            self.figure = Figure(figsize=self.figsize, dpi=80)
            self._canvas = FigureCanvasAgg(self.figure)
            self._setup()
        self._background_key = None
        controls = [self.chip, self.d, self.T, self.b_w, self.a, *self._extra()]
        for control in controls:
            control.observe(self.update, names="value")
        self.update()
        self.widget = widgets.HBox([widgets.VBox([*controls, self.summary]), self.image])

    def _make_extra_controls(self, style: dict) -> None:
        """Subclasses add controls here."""

    def _extra(self) -> list:
        return []

    def _setup(self) -> None:
        raise NotImplementedError

    def _background(self, record: Chip) -> None:
        """Set what stays fixed until the background key changes."""

    def _background_for(self) -> tuple:
        return (self.chip.value.label,)

    def _dynamic(self) -> list:
        raise NotImplementedError

    def _refresh(self) -> str:
        raise NotImplementedError

    def update(self, change: dict | None = None) -> None:
        """Recompute the model and redraw only what moved (called on every control change)."""
        summary = self._refresh()
        key = self._background_for()
        if key != self._background_key:
            self._background(self.chip.value)
            for artist in self._dynamic():
                artist.set_visible(False)
            self._canvas.draw()
            self._saved = self._canvas.copy_from_bbox(self.figure.bbox)
            for artist in self._dynamic():
                artist.set_visible(True)
            self._background_key = key
        else:
            self._canvas.restore_region(self._saved)
        for artist in self._dynamic():
            artist.axes.draw_artist(artist)
        self.summary.value = summary
        self.image.value = _png(self._canvas)

    def _repr_mimebundle_(self, **kwargs: object) -> dict:
        return self.widget._repr_mimebundle_(**kwargs)


class ByteEnergyExplorer(_CommuteExplorer):
    """Energy per FLOP vs HBM intensity on a chip, with the layer step's point and both balances.

    The curve is e_flop + e_hbm / I; the point is one layer's forward + backward at (d, T,
    b_w, a). Left of the energy balance, fetching bytes costs more than computing on them.
    Explained in the chapter "What moving a byte costs".
    """

    _INTENSITY = np.geomspace(0.1, 1e4, 200)

    def _setup(self) -> None:
        self.figure.subplots_adjust(left=0.14, right=0.97, bottom=0.15, top=0.9)
        self._ax = ax = self.figure.add_subplot()
        (self._curve,) = ax.plot(self._INTENSITY, self._INTENSITY, color=PALETTE[0], lw=2)
        self._energy = ax.axvline(1.0, color="0.4", ls="-.", lw=1)
        self._time = ax.axvline(1.0, color="k", ls="--", lw=1)
        self._floor = ax.axhline(1.0, color=PALETTE[2], lw=1)
        (self._point,) = ax.plot([1.0], [1.0], "D", color=PALETTE[3], ms=8)
        ax.set(xscale="log", yscale="log", xlabel="HBM intensity (FLOP/byte)",
               ylabel="dynamic energy per FLOP (pJ)", xlim=(self._INTENSITY[0], self._INTENSITY[-1]))
        ax.minorticks_off()

    def _background(self, record: Chip) -> None:
        balance = machine_balance(record)
        self._curve.set_ydata(np.asarray(energy_per_flop_j(self._INTENSITY, record)) * 1e12)
        self._energy.set_xdata([balance.energy] * 2)
        self._time.set_xdata([balance.time] * 2)
        floor = record.flop_energy.value * 1e12
        self._floor.set_ydata([floor] * 2)
        self._ax.set_ylim(floor * 0.5, float(energy_per_flop_j(self._INTENSITY[0], record)) * 1e12 * 1.5)
        self._ax.set_title(f"{record.label}: balances {balance.energy:.0f} (energy, dash-dot) and "
                           f"{balance.time:.0f} (time)", fontsize=8.5)

    def _dynamic(self) -> list:
        return [self._point]

    def _refresh(self) -> str:
        record = self.chip.value
        step = layer_step(self.d.value, self.T.value, record, b_w=self.b_w.value, a=self.a.value)
        intensity = step.intensity
        per_flop = float(energy_per_flop_j(intensity, record))
        self._point.set_data([intensity], [per_flop * 1e12])
        balance = machine_balance(record)
        hbm = step.hbm_weights_j + step.hbm_activations_j
        energy_side = "HBM bytes cost more than the FLOPs" if intensity < balance.energy else \
            "the FLOPs cost more than the HBM bytes"
        time_side = "waits on HBM" if intensity < balance.time else "is compute-bound"
        return (f"<b>I = {intensity:.4g} FLOP/B</b><br>{energy_side}<br>(HBM {hbm / step.arithmetic_j:.3g} x "
                f"arithmetic)<br>the step {time_side}<br>{per_flop * 1e12:.3g} pJ per FLOP = "
                f"{per_flop / 8e-15:.0f} int8 adds")


class StepIntensityExplorer(_CommuteExplorer):
    """One layer's HBM intensity vs T at (d, b_w, a) on a chip, its time balance, T_min and the chosen T.

    Explained in the chapter "The training step as compute and commute".
    """

    def _setup(self) -> None:
        self.figure.subplots_adjust(left=0.14, right=0.97, bottom=0.15, top=0.9)
        self._ax = ax = self.figure.add_subplot()
        (self._curve,) = ax.plot(_COMMUTE_T_CURVE, _COMMUTE_T_CURVE, color=PALETTE[0], lw=2)
        self._balance = ax.axhline(1.0, color="k", ls="--", lw=1)
        self._tmin = ax.axvline(1.0, color=PALETTE[3], ls=":", lw=1.5)
        (self._point,) = ax.plot([1.0], [1.0], "D", color=PALETTE[3], ms=8)
        ax.set(xscale="log", yscale="log", xlabel="tokens per weight visit T",
               ylabel="HBM intensity (FLOP/byte)", xlim=(1, 2**17), ylim=(0.3, 1e4))
        ax.minorticks_off()

    def _background(self, record: Chip) -> None:
        beta = machine_balance(record).time
        self._balance.set_ydata([beta] * 2)
        self._ax.set_title(f"{record.label}: time balance {beta:.0f} FLOP/B (dashed), T_min dotted",
                           fontsize=9)

    def _dynamic(self) -> list:
        return [self._curve, self._tmin, self._point]

    def _refresh(self) -> str:
        record, d, T, b_w, a = self.chip.value, self.d.value, self.T.value, self.b_w.value, self.a.value
        curve = layer_step(d, _COMMUTE_T_CURVE, record, b_w=b_w, a=a).intensity
        step = layer_step(d, T, record, b_w=b_w, a=a)
        self._curve.set_ydata(curve)
        self._point.set_data([T], [step.intensity])
        tokens = float(t_min(d, record, b_w=b_w, a=a))
        self._tmin.set_xdata([tokens if np.isfinite(tokens) else 1e9] * 2)
        beta = machine_balance(record).time
        bound = "compute-bound" if step.intensity >= beta else "held by HBM"
        gemm = "tensor cores" if step.flops / record.peak("bf16") >= step.weight_bytes / record.hbm_bytes_per_s \
            else "weight streaming"
        reach = f"T_min = {tokens:,.0f}" if np.isfinite(tokens) else "no T reaches it (d < d_min)"
        return (f"<b>I = {step.intensity:.4g} FLOP/B, {bound}</b><br>{reach}; d_min = "
                f"{float(d_min(record, a=a)):,.0f}<br>GEMM phase set by {gemm}<br>"
                f"{step.time_s / T * 1e6:.3g} us per token per layer")


class EnergyShareExplorer(_CommuteExplorer):
    """Where one layer step's time and joules go at (d, T, b_w, a) on a chip: two stacked bars.

    Explained in the chapter "The element-wise tax and where the joules go".
    """

    figsize = (5.6, 3.0)
    _TIME = (("GEMM phase", PALETTE[0]), ("element-wise phase", PALETTE[1]))
    _ENERGY = (("arithmetic", PALETTE[0]), ("HBM weights", PALETTE[3]), ("HBM activations", PALETTE[1]),
               ("static", "#999999"))

    def _setup(self) -> None:
        self.figure.subplots_adjust(left=0.16, right=0.97, bottom=0.4, top=0.9)
        self._ax = ax = self.figure.add_subplot()
        self._bars = []
        for row, parts in ((1, self._TIME), (0, self._ENERGY)):
            for name, colour in parts:
                (bar,) = ax.barh([row], [0.0], left=[0.0], color=colour, label=name, height=0.6)
                self._bars.append(bar)
        ax.set(xlim=(0, 1), ylim=(-0.5, 1.5), xlabel="share of the step")
        ax.set_yticks([0, 1], ["energy", "time"])
        ax.grid(axis="y", visible=False)
        ax.legend(loc="upper center", bbox_to_anchor=(0.45, -0.3), ncol=3, fontsize=7.5)

    def _background(self, record: Chip) -> None:
        self._ax.set_title(record.label, fontsize=9)

    def _dynamic(self) -> list:
        return self._bars

    def _refresh(self) -> str:
        record = self.chip.value
        step = layer_step(self.d.value, self.T.value, record, b_w=self.b_w.value, a=self.a.value)
        time_parts = np.array([step.gemm_time_s, step.elementwise_time_s]) / step.time_s
        energy_parts = np.array([step.arithmetic_j, step.hbm_weights_j, step.hbm_activations_j,
                                 step.static_j]) / step.energy_j
        for bar, left, width in zip(self._bars, np.concatenate([np.cumsum(time_parts) - time_parts,
                                                                np.cumsum(energy_parts) - energy_parts]),
                                    np.concatenate([time_parts, energy_parts])):
            bar.set_x(left)
            bar.set_width(width)
        ratio = step.elementwise_time_s / step.gemm_time_s
        return (f"<b>element-wise / GEMM time = {ratio:.3g}</b><br>element-wise share of time "
                f"{100 * time_parts[1]:.1f} %<br>HBM activations / arithmetic energy "
                f"{100 * step.hbm_activations_j / step.arithmetic_j:.1f} %<br>"
                f"{step.energy_j / step.flops * 1e12:.3g} pJ per FLOP all-in")


class RegimeExplorer(_CommuteExplorer):
    """A whole model's training step per device: time and energy per token, and what they are made of.

    Adds micro-batches per step, data-parallel devices and the fabric to the shared
    controls; layers, vocabulary and sequence length are fixed when it is built.
    Explained in the chapter "A 7B model, regime by regime".
    """

    figsize = (5.6, 3.0)
    _TIME = (("layers", PALETTE[0]), ("optimizer", PALETTE[2]), ("all-reduce", PALETTE[4]))
    _ENERGY = (("arithmetic", PALETTE[0]), ("HBM", PALETTE[3]), ("static", "#999999"))

    def __init__(self, chips: Sequence[Chip] | None = None, chip: str = "A100-80GB [doc002]", d: int = 4096,
                 T: int = 2048, b_w: float = 12.0, a: float = 200.0, n_layers: int = 32, vocab: int = 50000,
                 seq_len: int = 2048) -> None:
        self.n_layers, self.vocab, self.seq_len = n_layers, vocab, seq_len
        transformer_params(d, n_layers, vocab)  # validates them
        super().__init__(chips, chip, d, T, b_w, a)

    def _make_extra_controls(self, style: dict) -> None:
        self.micro_batches = widgets.SelectionSlider(options=tuple(2**p for p in range(0, 8)), value=1,
                                                     description="micro-batches", style=style)
        self.n_devices = widgets.SelectionSlider(options=tuple(2**p for p in range(0, 11)), value=1,
                                                 description="GPUs (DP)", style=style)
        self.fabric = widgets.Dropdown(options=FABRICS, value="ib", description="fabric", style=style)

    def _extra(self) -> list:
        return [self.micro_batches, self.n_devices, self.fabric]

    _setup = EnergyShareExplorer._setup
    _background = EnergyShareExplorer._background
    _dynamic = EnergyShareExplorer._dynamic

    def _refresh(self) -> str:
        record, d = self.chip.value, self.d.value
        devices = self.n_devices.value
        try:
            bandwidth = fabric_bytes_per_s(record, self.fabric.value)
        except KeyError:
            bandwidth = None
        if bandwidth is None and devices > 1:
            return f"<b>no {self.fabric.value} bandwidth stored for {record.label}</b>"
        step = training_step(d, self.T.value, record, self.n_layers, micro_batches=self.micro_batches.value,
                             n_devices=devices, fabric_bytes_per_s=bandwidth,
                             n_params=transformer_params(d, self.n_layers, self.vocab), seq_len=self.seq_len,
                             b_w=self.b_w.value, a=self.a.value)
        time_parts = np.array([step.layers_time_s, step.optimizer_time_s, step.allreduce_time_s]) / step.time_s
        energy_parts = np.array([step.arithmetic_j, step.hbm_j, step.static_j]) / step.energy_j
        for bar, left, width in zip(self._bars, np.concatenate([np.cumsum(time_parts) - time_parts,
                                                                np.cumsum(energy_parts) - energy_parts]),
                                    np.concatenate([time_parts, energy_parts])):
            bar.set_x(left)
            bar.set_width(width)
        return (f"<b>{step.time_per_token_s * 1e3:.3g} ms and {step.energy_per_token_j * 1e3:.3g} mJ per "
                f"token</b><br>{step.tokens:,.0f} tokens per step per GPU<br>slowdown vs peak "
                f"{step.slowdown:.3g}x<br>step intensity {step.intensity:.3g} FLOP/B")


# --- the batch-size squeeze explorer (chapter "The batch-size squeeze") --------------------

from hwlib.data_parallel import cluster_squeeze, time_to_target  # noqa: E402
from hwlib.fabrics import CLUSTERS, Cluster, fabrics as all_fabrics  # noqa: E402

SQUEEZE_PARAMS = (1.3e9, 2.7e9, 6.7e9, 13e9, 30e9, 70e9, 175e9, 405e9)
"""Model sizes (parameters) the squeeze explorer offers."""
SQUEEZE_DEVICES = tuple(2**p for p in range(0, 14))
"""Device counts N the squeeze explorer offers (1 to 8192)."""
SQUEEZE_CRITICAL = (1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 2e7, 5e7)
"""Critical batch sizes (tokens) the squeeze explorer offers (0.1 M to 50 M)."""
_SQUEEZE_BATCHES = np.geomspace(1e3, 1e9, 240)
_OWN_NETWORK = "own"


class BatchSqueezeExplorer:
    """System (chip and node fabric), scale-out network, model size, N and B_crit -> the batch squeeze.

    The curve is the time to a target loss over the ideal time (no fixed cost, no wasted
    examples) against the global batch; the circle marks B_opt, the dashed line B_crit.
    The model size moves only the absolute times in the summary: T_fixed and B_opt do not
    depend on P. Explained in the chapter "The batch-size squeeze".
    """

    def __init__(self, clusters: Sequence[Cluster] | None = None, cluster: str = "hgx-a100-hdr",
                 params: float = 6.7e9, n_devices: int = 64, critical_batch_tokens: float = 1e6) -> None:
        records = CLUSTERS if clusters is None else tuple(clusters)
        if not records or not all(isinstance(record, Cluster) for record in records):
            raise TypeError(f"clusters must be a non-empty sequence of Cluster records, got {clusters!r}")
        by_key = {record.key: record for record in records}
        if cluster not in by_key:
            raise KeyError(f"cluster {cluster!r} is not among the explorer's clusters {sorted(by_key)}")
        for name, value, options in (("params", params, SQUEEZE_PARAMS), ("n_devices", n_devices, SQUEEZE_DEVICES),
                                     ("critical_batch_tokens", critical_batch_tokens, SQUEEZE_CRITICAL)):
            if value not in options:
                raise ValueError(f"{name} must be one of {options}, got {value!r}")
        layout, style = widgets.Layout(width="280px"), {"description_width": "95px"}
        self.system = widgets.Dropdown(options=[(r.name, r) for r in records], value=by_key[cluster],
                                       description="system", layout=layout, style=style)
        networks = [("system's own", _OWN_NETWORK)] + [(f.name, f) for f in all_fabrics("vendor", "scale-out")]
        self.network = widgets.Dropdown(options=networks, value=_OWN_NETWORK, description="network",
                                        layout=layout, style=style)
        self.params = widgets.SelectionSlider(options=[(f"{p / 1e9:g}B", p) for p in SQUEEZE_PARAMS], value=params,
                                              description="model size", layout=layout, style=style)
        self.n_devices = widgets.SelectionSlider(options=SQUEEZE_DEVICES, value=n_devices, description="devices N",
                                                 layout=layout, style=style)
        self.critical = widgets.SelectionSlider(options=[(f"{b / 1e6:g} M", b) for b in SQUEEZE_CRITICAL],
                                                value=critical_batch_tokens, description="B_crit (tokens)",
                                                layout=layout, style=style)
        self.summary = widgets.HTML()
        self.image = widgets.Image(format="png")
        with mpl.rc_context(STYLE):
            self.figure = Figure(figsize=(5.0, 3.4), dpi=80)
            self.figure.subplots_adjust(left=0.15, right=0.96, bottom=0.15, top=0.9)
            self._canvas = FigureCanvasAgg(self.figure)
            self._ax = ax = self.figure.add_subplot()
            ax.axhline(1.0, color="0.4", lw=1, ls=":")
            (self._curve,) = ax.plot(_SQUEEZE_BATCHES, np.ones_like(_SQUEEZE_BATCHES), color=PALETTE[0], lw=2)
            (self._best,) = ax.plot([1e6], [1.0], "o", color=PALETTE[3], ms=8, mec="k", mew=0.6)
            self._critical = ax.axvline(1e6, color="0.5", ls="--", lw=1)
            ax.set(xscale="log", yscale="log", xlim=(_SQUEEZE_BATCHES[0], _SQUEEZE_BATCHES[-1]), ylim=(0.9, 100),
                   xlabel="global batch B (tokens)", ylabel="time to target / ideal")
            ax.set_title("circle: B_opt; dashed: B_crit; dotted: ideal", fontsize=9)
            ax.minorticks_off()
            self._dynamic = (self._curve, self._best, self._critical)
            for artist in self._dynamic:
                artist.set_visible(False)
            self._canvas.draw()
            self._background = self._canvas.copy_from_bbox(self.figure.bbox)
            for artist in self._dynamic:
                artist.set_visible(True)
        controls = (self.system, self.network, self.params, self.n_devices, self.critical)
        for control in controls:
            control.observe(self.update, names="value")
        self.update()
        self.widget = widgets.HBox([widgets.VBox([*controls, self.summary]), self.image])

    def current_cluster(self) -> Cluster:
        """The chosen system, with the chosen network in place of its own where it has one."""
        record, network = self.system.value, self.network.value
        if network == _OWN_NETWORK or record.network is None:
            return record
        return Cluster(f"{record.key}+{network.key}", f"{record.chip.name} node + {network.name}", record.chip,
                       record.node_fabric, network)

    def update(self, change: dict | None = None) -> None:
        """Recompute the squeeze and move the curve, the marker and B_crit (called on every change)."""
        record = self.current_cluster()
        devices, params, critical = self.n_devices.value, self.params.value, self.critical.value
        self._canvas.restore_region(self._background)
        if record.max_devices is not None and devices > record.max_devices:
            self.summary.value = (f"<b>{devices:,} devices exceed one {record.node_fabric.name} domain "
                                  f"({record.max_devices:,})</b>; no network is modelled for {record.name}")
            self.image.value = _png(self._canvas)
            return
        squeeze = cluster_squeeze(record, params, devices, critical)
        curve = time_to_target(squeeze, _SQUEEZE_BATCHES, critical)
        self._curve.set_ydata(np.clip(curve.ratio, 0.9, 1e3))
        self._best.set_data([squeeze.optimal_batch_tokens], [squeeze.optimal_time_ratio])
        self._critical.set_xdata([critical, critical])
        for artist in self._dynamic:
            self._ax.draw_artist(artist)
        ignored = "" if record.network is not None or self.network.value == _OWN_NETWORK else \
            " (this system has no network to replace)"
        self.summary.value = (
            f"<b>{record.name}</b>{ignored}<br>all-reduce {squeeze.allreduce_time_s * 1e3:,.3g} ms + optimizer "
            f"{squeeze.optimizer_time_s * 1e3:,.3g} ms per step<br>T_fixed = <b>{squeeze.fixed_cost_tokens:,.0f}</b> "
            f"tokens per device<br>B_opt = <b>{squeeze.optimal_batch_tokens / 1e6:,.3g} M</b> tokens "
            f"({squeeze.tokens_per_device:,.0f} per device)<br>step at B_opt {squeeze.optimal_step_time_s:,.3g} s; "
            f"time to target {squeeze.optimal_time_ratio:.3g} x ideal"
        )
        self.image.value = _png(self._canvas)

    def _repr_mimebundle_(self, **kwargs: object) -> dict:
        return self.widget._repr_mimebundle_(**kwargs)
