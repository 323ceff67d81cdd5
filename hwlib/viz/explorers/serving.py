"""The serving explorer: a model on n tensor-parallel chips at a precision, context and batch.

Used by the chapters :ref:`ch-serving` and :ref:`ch-serving-experts`.
"""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets
import numpy as np
from matplotlib.ticker import FormatStrFormatter, LogLocator, NullLocator

from hwlib.calibration_fit import forecast_band
from hwlib.data import chip as find_chip
from hwlib.data import model as find_model
from hwlib.data import models as all_models
from hwlib.data.records import Chip, ModelShape
from hwlib.precision import PRECISIONS
from hwlib.serving.plan import serving_curve, serving_name, tensor_parallel_sizes
from hwlib.serving.step import compute_bound_batch, inference_step, max_batch
from hwlib.units import format_seconds
from hwlib.viz.explorers.base import Explorer, chip_dropdown, offered_records, options_in, record_dropdown
from hwlib.viz.explorers.memory import deployable_chips
from hwlib.viz.style import PALETTE

CONTEXTS = tuple(2**p for p in range(9, 18))
BATCHES = tuple(2**p for p in range(13))
_LAYOUT = {"width": "330px"}
_STYLE = {"description_width": "90px"}


def servable_models() -> tuple[ModelShape, ...]:
    """Catalogue models with every dimension an inference step needs (MLP width and kind, vocabulary)."""
    return tuple(
        m for m in all_models("vendor") if m.d_model and m.n_heads and m.mlp and m.vocab and (m.d_ff or m.d_ff_expert)
    )


class ServingExplorer(Explorer):
    """Model, chip, chips, precision, context and batch -> the latency-throughput curve and one point on it.

    The solid line is ``hw.serving_curve``, the bound (tokens/s per chip against time per output token), over
    batches 1 to 4,096 up to the largest that fits, and the dashed line the forecast of the same steps; the markers
    are the chosen batch. The summary leads with the forecast at that
    batch (time per output token, tokens/s) and its error band for the kind of run (``hw.forecast_band``), then the
    bound as the ceiling, the first token of one prompt of the context's length (forecast, then bound) and the
    batch at which decode turns compute-bound; a batch that does not fit says so first. ``chips`` offers
    ``hw.tensor_parallel_sizes``.
    ``chip`` and ``model`` are records (defaults ``hw.chip("H100-SXM")``, ``hw.model("Llama 3 70B")``).
    Chapters :ref:`ch-serving` and :ref:`ch-serving-experts`.
    """

    figsize = (5.8, 3.6)
    margins = (0.14, 0.15, 0.97, 0.9)

    def __init__(
        self,
        chips: Sequence[Chip] | None = None,
        chip: Chip | None = None,
        models: Sequence[ModelShape] | None = None,
        model: ModelShape | None = None,
        n_chips: int = 8,
        precision: str = "bf16",
        context_len: int = CONTEXTS[3],
        batch: int = 32,
    ) -> None:
        chip_records, chip = offered_records(
            "chip", chips, chip, deployable_chips(), find_chip("H100-SXM"), Chip, "hw.chip('H100-SXM')"
        )
        model_records, model = offered_records(
            "model", models, model, servable_models(), find_model("Llama 3 70B"), ModelShape, "hw.model('Llama 3 70B')"
        )
        options_in("n_chips", n_chips, tensor_parallel_sizes(model, chip))
        options_in("precision", precision, tuple(PRECISIONS))
        options_in("context_len", context_len, CONTEXTS, f"a power of two from {CONTEXTS[0]} to {CONTEXTS[-1]}")
        options_in("batch", batch, BATCHES, f"a power of two from 1 to {BATCHES[-1]}")
        layout, style = widgets.Layout(**_LAYOUT), _STYLE
        self.model = record_dropdown(model_records, model, "model", layout=layout, style=style)
        self.chip = chip_dropdown(chip_records, chip, layout=layout, style=style)
        self.n_chips = widgets.Dropdown(
            options=tensor_parallel_sizes(model, chip), value=n_chips, description="chips", layout=layout, style=style
        )
        self.precision = widgets.Dropdown(
            options=tuple(PRECISIONS), value=precision, description="precision", layout=layout, style=style
        )
        self.context_len = widgets.SelectionSlider(
            options=CONTEXTS, value=context_len, description="context", layout=layout, style=style
        )
        self.batch = widgets.SelectionSlider(
            options=BATCHES, value=batch, description="batch", layout=layout, style=style
        )
        self._x = np.array(BATCHES)
        super().__init__([self.model, self.chip, self.n_chips, self.precision, self.context_len, self.batch])

    def arrange(self) -> widgets.Widget:
        controls = widgets.HBox(
            [
                widgets.VBox([self.model, self.chip, self.n_chips]),
                widgets.VBox([self.precision, self.context_len, self.batch]),
            ]
        )
        return widgets.VBox([controls, self.image, self.summary])

    def sync(self, owner: object) -> None:
        if owner in (None, self.chip, self.model):
            sizes = tensor_parallel_sizes(self.model.value, self.chip.value)
            wanted = self.n_chips.value if self.n_chips.value in sizes else sizes[-1]
            self.n_chips.options, self.n_chips.value = sizes, wanted

    def setup(self) -> list:
        self._ax = ax = self.figure.add_subplot()
        self._line = ax.plot([1.0], [1.0], "o-", color=PALETTE[0], ms=3, lw=1.8, label="bound")[0]
        self._forecast_line = ax.plot([1.0], [1.0], "s--", color=PALETTE[1], ms=3, lw=1.5, label="forecast")[0]
        self._point = ax.plot([1.0], [1.0], "o", color=PALETTE[3], ms=9)[0]
        self._forecast_point = ax.plot([1.0], [1.0], "s", color=PALETTE[3], ms=8)[0]
        ax.set(xscale="log", yscale="log", xlabel="time per output token (ms)", ylabel="tokens/s per chip")
        ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.legend(loc="lower right", fontsize=8)
        return [self._point, self._forecast_point]

    def background_key(self) -> tuple:
        return (self.model.value, self.chip.value, self.n_chips.value, self.precision.value, self.context_len.value)

    def _why_not(self) -> str:
        chip, options = self.chip.value, PRECISIONS[self.precision.value]
        if options["compute_dtype"] not in chip.peak_flops_per_s:
            return f"{chip.label} has no sourced {options['compute_dtype']} peak: choose another precision"
        if self.n_chips.value > 1 and chip.interconnect_bytes_per_s is None:
            return f"{chip.label} has no interconnect record: tensor parallelism is not modelled on it"
        return ""

    def draw_background(self) -> None:
        self._problem, self._curve = self._why_not(), None
        model, chip, count = self.model.value, self.chip.value, self.n_chips.value
        self._ax.set_title(f"{model.name} on {count} x {chip.label}, {self.precision.value}", fontsize=10)
        if self._problem:
            self._line.set_visible(False)
            self._forecast_line.set_visible(False)
            return
        options = PRECISIONS[self.precision.value]
        self._curve = curve = serving_curve(model, chip, self.context_len.value, self._x, count, **options)
        self._turn = compute_bound_batch(model, chip, self.context_len.value, count, **options)
        self._largest = max_batch(
            model, chip, self.context_len.value, count, options["weight_dtype"], options["kv_dtype"]
        )
        self._first = inference_step(model, chip, 1, 0, self.context_len.value, count, **options)
        self._forecast = inference_step(model, chip, self._x, self.context_len.value, 1, count, **options)
        self._band = forecast_band("serving", model, chip)  # stored values: no refit
        fits = curve.fits
        self._line.set_visible(bool(fits.any()))
        self._forecast_line.set_visible(bool(fits.any()))
        if fits.any():
            x, y = curve.time_per_token_s[fits] * 1e3, curve.tokens_per_s_per_chip[fits]
            fx = np.asarray(self._forecast.forecast_time_s)[fits] * 1e3
            fy = np.asarray(self._forecast.forecast_tokens_per_s)[fits] / count
            self._line.set_data(x, y)
            self._forecast_line.set_data(fx, fy)
            self._ax.set_xlim(x.min() / 1.5, fx.max() * 1.5)
            self._ax.set_ylim(fy.min() / 2, y.max() * 2)

    def refresh(self) -> str:
        chip, count, batch = self.chip.value, self.n_chips.value, self.batch.value
        where = serving_name(count, chip)
        if self._problem:
            self._point.set_visible(False)
            self._forecast_point.set_visible(False)
            return f"<b>{self._problem}</b>"
        curve, index = self._curve, BATCHES.index(batch)
        fits = bool(curve.fits[index])
        self._point.set_visible(fits)
        self._forecast_point.set_visible(fits)
        self._point.set_data([curve.time_per_token_s[index] * 1e3], [curve.tokens_per_s_per_chip[index]])
        self._forecast_point.set_data(
            [self._forecast.forecast_time_s[index] * 1e3], [self._forecast.forecast_tokens_per_s[index] / count]
        )
        turn = "never: each sequence's cache reads outlast its FLOPs" if np.isinf(self._turn) else f"{self._turn:,.0f}"
        forecast_rate = self._forecast.forecast_tokens_per_s[index]
        if fits:
            rows = [
                (
                    f"forecast at batch {batch:,}: time per output token, tokens/s system / per chip",
                    f"{format_seconds(self._forecast.forecast_time_s[index])}, "
                    f"{forecast_rate:,.0f} / {forecast_rate / count:,.0f}",
                ),
                ("forecast error", self._band.text),
                (
                    "bound, every chip at its peak (the ceiling): time per output token, tokens/s system / per chip",
                    f"{format_seconds(curve.time_per_token_s[index])}, "
                    f"{curve.tokens_per_s[index]:,.0f} / {curve.tokens_per_s_per_chip[index]:,.0f}",
                ),
                ("the bound's limit", str(curve.bound[index])),
            ]
        else:
            rows = [(f"batch {batch:,}", "does not fit")]
        rows += [
            ("runs on", where),
            ("largest batch that fits", f"{self._largest:,}"),
            (
                "first token of one prompt: forecast, bound",
                f"{format_seconds(self._first.forecast_time_s)}, {format_seconds(self._first.time_s)}",
            ),
            ("decode turns compute-bound at batch", turn),
        ]
        return "<table>" + "".join(f"<tr><td>{a}</td><td><b>{b}</b></td></tr>" for a, b in rows) + "</table>"
