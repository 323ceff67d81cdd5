"""The cost explorer: chip, precision, batch, price, PUE and grid -> dollars, joules and CO2e per million tokens.

Used by the chapter :ref:`ch-costs`.
"""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets
import numpy as np

from hwlib.costs import serving_cost
from hwlib.data import chip as find_chip
from hwlib.data import chips as all_chips
from hwlib.data import model as find_model
from hwlib.data import prices
from hwlib.data.records import Chip, ModelShape
from hwlib.precision import PRECISIONS
from hwlib.serving.step import inference_step, max_batch
from hwlib.units import element_dtype, format_number
from hwlib.viz.explorers.base import Explorer, chip_dropdown, choose, options_in, records_of
from hwlib.viz.style import PALETTE

BATCHES = tuple(2**p for p in range(12))
"""Batches the cost explorer offers (sequences, 1 to 2048; those whose caches fit)."""
COST_CONTEXT = 4096
"""Tokens in each sequence's cache in the cost explorer."""
COST_CHIPS = 8
"""Chips the cost explorer serves on: one node, tensor parallel."""
OFFERED_PRECISIONS = ("bf16", "fp8", "nvfp4, fp8 KV")
COST_RANGE = (0.05, 5000.0)
"""The cost axis, $ per million output tokens: fixed, so that a price moves the curve."""
"""Precisions the cost explorer offers (where the chip multiplies them)."""


def _priced_chips() -> tuple[Chip, ...]:
    return tuple(c for c in all_chips("vendor") if c.key in prices.DEFAULT_PRICES and c.tdp_w is not None)


class CostExplorer(Explorer):
    """Chip, precision, batch, price per chip-hour, PUE and grid -> a model's dollars per million output tokens
    against the batch on one node, and at the chosen batch its dollars, joules and grams of CO2e.

    ``chips``: the Chip records offered (default every catalogue chip with a price and a TDP); ``chip``: the
    record shown first (default the H100); ``model``: the model served (default Llama 3 70B). Explained in the
    chapter :ref:`ch-costs`.
    """

    margins = (0.14, 0.15, 0.97, 0.9)

    def __init__(
        self,
        chips: Sequence[Chip] | None = None,
        chip: Chip | None = None,
        model: ModelShape | None = None,
        precision: str = "fp8",
        batch: int = 64,
    ) -> None:
        records = _priced_chips() if chips is None else records_of("chips", chips, Chip)
        chip = find_chip("H100-SXM") if chip is None else chip
        choose("chip", chip, records, Chip, "hw.chip('H100-SXM')")
        self.model = find_model("llama-3-70b") if model is None else model
        if not isinstance(self.model, ModelShape):
            raise TypeError(f"model must be a ModelShape record such as hw.model('llama-3-70b'), got {model!r}")
        options_in("precision", precision, OFFERED_PRECISIONS)
        options_in("batch", batch, BATCHES, f"a power of two from 1 to {BATCHES[-1]}")
        layout, style = widgets.Layout(width="330px"), {"description_width": "110px"}
        self.chip = chip_dropdown(records, chip, layout=layout, style=style)
        self.precision = widgets.Dropdown(
            options=list(OFFERED_PRECISIONS), value=precision, description="precision", layout=layout, style=style
        )
        self.batch = widgets.SelectionSlider(
            options=BATCHES, value=batch, description="batch", layout=layout, style=style
        )
        default = prices.PRICE_BY_KEY[prices.DEFAULT_PRICES[chip.key]].usd_per_chip_hour
        self.price = widgets.FloatSlider(
            value=round(default, 2), min=0.5, max=20.0, step=0.05, description="$ per chip-hour", layout=layout,
            style=style,
        )  # fmt: skip
        self.pue = widgets.FloatSlider(
            value=prices.PUES[prices.DEFAULT_PUE].value, min=1.0, max=2.0, step=0.01, description="PUE",
            layout=layout, style=style,
        )  # fmt: skip
        self.grid = widgets.Dropdown(
            options=[
                (f"{key} ({record.value:.0f} g/kWh)", key)
                for key, record in sorted(prices.GRIDS.items(), key=lambda item: item[1].value)
            ],
            value=prices.DEFAULT_GRID, description="grid", layout=layout, style=style,
        )  # fmt: skip
        super().__init__([self.chip, self.precision, self.batch, self.price, self.pue, self.grid])

    def arrange(self) -> widgets.Widget:
        controls = widgets.HBox(
            [widgets.VBox([self.chip, self.precision, self.batch]), widgets.VBox([self.price, self.pue, self.grid])]
        )
        return widgets.VBox([controls, widgets.HBox([self.image, self.summary])])

    def setup(self) -> list:
        self._ax = ax = self.figure.add_subplot()
        (self._curve,) = ax.plot([1, 2], [1, 1], "o-", color=PALETTE[0], ms=3)
        (self._point,) = ax.plot([1.0], [1.0], "D", color=PALETTE[3], ms=8)
        ax.set(xscale="log", yscale="log", xlabel="batch (sequences)", ylabel="$ per million output tokens")
        ax.set(xlim=(0.7, BATCHES[-1] * 1.4), ylim=COST_RANGE)
        ax.minorticks_off()
        return [self._curve, self._point]

    def background_key(self) -> tuple:
        return (self.chip.value, self.precision.value)

    def _rates(self) -> tuple[np.ndarray, np.ndarray]:
        """The batches that fit on the node and the forecast output tokens/s per chip at each (none where the chip
        cannot multiply in the precision, or the weights leave no room for a cache)."""
        record, precision = self.chip.value, PRECISIONS[self.precision.value]
        if element_dtype(precision.compute_dtype) not in record.peak_flops_per_s:
            return np.array([], dtype=int), np.array([])
        room = max_batch(self.model, record, COST_CONTEXT, COST_CHIPS, precision.weight_dtype, precision.kv_dtype)
        fits = np.array([b for b in BATCHES if b <= room]) if room >= 1 else np.array([], dtype=int)
        if not fits.size:
            return fits, np.array([])
        step = inference_step(self.model, record, fits, COST_CONTEXT, 1, COST_CHIPS, **precision)
        return fits, np.asarray(step.forecast_tokens_per_s, dtype=float) / COST_CHIPS

    def draw_background(self) -> None:
        self._fits, self._rate = self._rates()
        self._ax.set_title(f"{self.model.name} on {COST_CHIPS} x {self.chip.value.label}", fontsize=10)

    def refresh(self) -> str:
        record = self.chip.value
        if not self._fits.size:
            self._curve.set_data([], [])
            self._point.set_data([], [])
            return (
                f"<b>{self.model.name} does not run in {self.precision.value} on {COST_CHIPS} x {record.label}</b>: "
                "no peak for its matmuls, or no room for a cache beside its weights"
            )
        options = dict(price=self.price.value, pue=self.pue.value, grid=self.grid.value)
        curve = serving_cost(self._rate, record, **options).usd_per_million_tokens
        self._curve.set_data(self._fits, curve)
        shown = min(self.batch.value, int(self._fits[-1]))
        rate = self._rate[list(self._fits).index(shown)]
        cost = serving_cost(rate, record, **options)
        self._point.set_data([shown], [cost.usd_per_million_tokens])
        note = "" if shown == self.batch.value else f" (the most that fit; {self.batch.value:,} do not)"
        return (
            f"<b>batch {shown:,}</b>{note}<br>{rate:,.0f} tokens/s per chip<br>"
            f"${cost.usd_per_million_tokens:,.2f} per million output tokens<br>"
            f"{format_number(cost.joules_per_token)} J per token at the wall, PUE {cost.pue:g}<br>"
            f"{cost.co2e_kg_per_million_tokens * 1e3:,.0f} g CO2e per million tokens"
        )
