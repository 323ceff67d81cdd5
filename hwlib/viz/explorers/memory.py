"""Memory explorers: a training budget against a deployment's HBM, and the KV cache against decode time.

Used by the chapters :ref:`ch-hbm-budgets` and :ref:`ch-kv-cache`.
"""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets
import numpy as np

from hwlib._checks import fraction
from hwlib.calibration_fit import forecast_band
from hwlib.data import assumptions, deployment, deployments, doc000
from hwlib.data import chip as find_chip
from hwlib.data import chips as all_chips
from hwlib.data import model as find_model
from hwlib.data import models as all_models
from hwlib.data import recipe as find_recipe
from hwlib.data import recipes as all_recipes
from hwlib.data.records import TRAINING_PARTS, Chip, ModelShape, TrainingRecipe
from hwlib.memory import RECOMPUTE, deployment_chips, deployment_name, kv_cache_bytes
from hwlib.serving.step import inference_step, max_batch
from hwlib.training.zero import SHARDINGS, TrainingMemory, training_memory
from hwlib.units import format_bytes, format_seconds
from hwlib.viz.explorers.base import (
    Explorer,
    chip_dropdown,
    choose,
    default_record,
    number_in,
    offered_records,
    options_in,
    record_dropdown,
    records_of,
)
from hwlib.viz.style import PALETTE

SEQ_LENS = tuple(2**p for p in range(9, 18))
"""Sequence lengths and contexts the memory explorers offer (512 to 131072 tokens)."""
BATCHES = tuple(2**p for p in range(11))
"""Batches (sequences) the KV-cache explorer offers (1 to 1024)."""
WEIGHT_DTYPES = ("bf16", "fp8", "int8", "int4")
"""Weight storage the KV-cache explorer offers."""
KV_DTYPES = ("fp32", "bf16", "int8", "int4")
"""KV-cache element types, one line each."""
_RECOMPUTE_LABELS = {
    "none": "none",
    "up-projections": "norms, MLA up-projections",
    "selective": "selective / FlashAttention",
    "full": "full",
}
_LAYOUT = {"width": "330px"}
_STYLE = {"description_width": "90px"}


def deployable_chips() -> tuple[Chip, ...]:
    """The catalogue chips sold in known deployment sizes (``hw.deployments()``)."""
    keys = {key for plan in deployments() for key in plan.chip_keys}
    return tuple(record for record in all_chips("vendor") if record.key in keys)


def _offered_chips(chips: Sequence[Chip] | None, chip: Chip | None, default: str) -> tuple[tuple[Chip, ...], Chip]:
    return offered_records("chip", chips, chip, deployable_chips(), find_chip(default), Chip, f"hw.chip({default!r})")


def _offered_models(
    models: Sequence[ModelShape] | None, model: ModelShape | None, need_width: bool
) -> tuple[tuple[ModelShape, ...], ModelShape]:
    records = all_models("vendor") if models is None else records_of("models", models, ModelShape)
    if need_width:
        records = tuple(record for record in records if record.d_model is not None and record.n_heads is not None)
        if not records:
            raise ValueError(
                "models must include a ModelShape with d_model and n_heads (the activation model needs them)"
            )
    model = default_record(find_model("Llama 3 8B"), records) if model is None else model
    if need_width and isinstance(model, ModelShape) and model.d_model is None:
        raise ValueError(f"model {model.name!r} gives no d_model and n_heads; the activation model needs them")
    return records, choose("model", model, records, ModelShape, "hw.model('Llama 3 8B')")


class MemoryBudgetExplorer(Explorer):
    """Model, recipe, sharding, chip, usable fraction, sequence length and recomputation -> memory per chip.

    The bar splits what one chip holds (``hw.training_memory``): the four state parts after the
    sharding, the activations of its own micro-batch of one sequence (all layers, no tensor
    parallelism, FlashAttention) and the logits, as shares of the chip's usable HBM, at the fewest
    chips that hold it. Memory is never pooled: where no number of chips holds it the summary says
    why. ``chip``, ``model`` and ``recipe`` are records (defaults ``hw.chip("TPU v5e")``,
    ``hw.model("Llama 3 8B")``, ``hw.recipe("zero_mixed_adam")``); ``chips``, ``models`` and ``recipes``
    narrow what the dropdowns offer (defaults: every deployable vendor chip, every published model and every recipe but
    the source documents'). Chapter :ref:`ch-hbm-budgets`.
    """

    figsize = (6.4, 2.0)
    margins = (0.04, 0.3, 0.97, 0.72)

    def __init__(
        self,
        chips: Sequence[Chip] | None = None,
        chip: Chip | None = None,
        models: Sequence[ModelShape] | None = None,
        model: ModelShape | None = None,
        recipe: TrainingRecipe | None = None,
        usable_fraction: float = assumptions.USABLE_HBM_FRACTION,
        seq_len: int = doc000.KV_TOKENS_1P5B,
        recompute: str = "none",
        sharding: str = "zero-3",
        recipes: Sequence[TrainingRecipe] | None = None,
    ) -> None:
        chip_records, chip = _offered_chips(chips, chip, "TPU v5e")
        for record in chip_records:
            deployment(record)  # a KeyError naming a chip sold in no known deployment size
        model_records, model = _offered_models(models, model, need_width=True)
        recipe_records = (
            tuple(r for r in all_recipes() if not r.key.startswith("doc"))
            if recipes is None
            else records_of("recipes", recipes, TrainingRecipe)
        )
        recipe = default_record(find_recipe("zero_mixed_adam"), recipe_records) if recipe is None else recipe
        choose("recipe", recipe, recipe_records, TrainingRecipe, "hw.recipe('zero_mixed_adam')")
        options_in("seq_len", seq_len, SEQ_LENS, f"a power of two from {SEQ_LENS[0]} to {SEQ_LENS[-1]}")
        number_in("usable_fraction", usable_fraction, 0.5, 1.0, "(a share of HBM)")
        options_in("recompute", recompute, RECOMPUTE)
        options_in("sharding", sharding, tuple(SHARDINGS))
        layout, style = widgets.Layout(**_LAYOUT), _STYLE
        self.model = record_dropdown(model_records, model, "model", layout=layout, style=style)
        self.recipe = record_dropdown(recipe_records, recipe, "recipe", layout=layout, style=style)
        self.sharding = widgets.Dropdown(
            options=list(SHARDINGS), value=sharding, description="sharding", layout=layout, style=style
        )
        self.chip = chip_dropdown(chip_records, chip, layout=layout, style=style)
        self.usable = widgets.FloatSlider(
            value=usable_fraction,
            min=0.5,
            max=1.0,
            step=0.05,
            description="usable HBM",
            readout_format=".0%",
            layout=layout,
            style=style,
        )
        self.seq_len = widgets.SelectionSlider(
            options=SEQ_LENS, value=seq_len, description="sequence", layout=layout, style=style
        )
        self.recompute = widgets.Dropdown(
            options=[(_RECOMPUTE_LABELS[r], r) for r in RECOMPUTE],
            value=recompute,
            description="recompute",
            layout=layout,
            style=style,
        )
        super().__init__([self.model, self.recipe, self.sharding, self.chip, self.usable, self.seq_len, self.recompute])

    def arrange(self) -> widgets.Widget:
        controls = widgets.HBox(
            [
                widgets.VBox([self.model, self.recipe, self.sharding, self.chip]),
                widgets.VBox([self.usable, self.seq_len, self.recompute]),
            ]
        )
        return widgets.VBox([controls, self.summary, self.image])

    def setup(self) -> list:
        labels = [*TRAINING_PARTS, "activations", "logits"]
        self._ax = ax = self.figure.add_subplot()
        self._bars = list(
            ax.barh(
                [0] * len(labels),
                [0.0] * len(labels),
                left=[0.0] * len(labels),
                color=PALETTE[: len(labels)],
                height=0.6,
            )
        )
        ax.set(
            xlim=(0, 105),
            ylim=(-0.5, 0.5),
            yticks=[],
            xlabel="share of what one chip holds (%); black line: its usable HBM",
        )
        ax.legend(
            self._bars,
            labels,
            ncol=6,
            loc="lower center",
            bbox_to_anchor=(0.5, 1.02),
            fontsize=8,
            handlelength=1.0,
            columnspacing=0.8,
        )
        ax.grid(axis="y", visible=False)
        self._limit = ax.axvline(100.0, color="k", lw=2)
        return [*self._bars, self._limit]

    def memory(self) -> TrainingMemory:
        """What one chip holds for the current settings (``hw.training_memory``)."""
        return training_memory(
            self.model.value,
            self.recipe.value,
            self.chip.value,
            self.seq_len.value,
            sharding=self.sharding.value,
            recompute=self.recompute.value,
            usable_fraction=self.usable.value,
        )

    def parts_bytes(self) -> dict[str, float]:
        """Bytes of each part one chip holds for the current settings."""
        return dict(self.memory().parts)

    def refresh(self) -> str:
        memory = self.memory()
        chip = self.chip.value
        widths = 100 * np.array(list(memory.parts.values())) / memory.per_chip_bytes
        for bar, left, width in zip(self._bars, np.cumsum(widths) - widths, widths):
            bar.set_x(left)
            bar.set_width(width)
        limit = min(100 * memory.usable_bytes / memory.per_chip_bytes, 104.0)
        self._limit.set_xdata([limit, limit])
        where = "per chip" if memory.n_chips else "on one chip"
        head = (
            f"<b>{format_bytes(memory.per_chip_bytes)} {where}</b> (activations "
            f"{format_bytes(memory.parts['activations'])}, logits {format_bytes(memory.parts['logits'])}) of "
            f"{format_bytes(memory.usable_bytes)} usable"
        )
        if memory.n_chips is None:
            return f"{head}: <b>does not fit</b>: {memory.reason}"
        plan = deployment_chips(memory.n_chips * chip.capacity_bytes * self.usable.value, chip, self.usable.value)
        return (
            f"{head}: <b>{memory.n_chips:,} chips</b> under {memory.sharding}; smallest deployment "
            f"<b>{deployment_name(plan, chip)}</b>"
        )


class KVCacheExplorer(Explorer):
    """Model, chip, weight dtype, context length and batch -> KV-cache size and the decode step, forecast and bound.

    One line per KV-cache dtype: ``hw.inference_step``'s lower bound against the batch, ending at the largest batch
    whose caches fit beside the weights; the markers sit at the chosen batch. The summary gives each dtype's step at
    that batch by the forecast, with the bound after it, and the forecast's error band for the kind of run
    (``hw.forecast_band``). ``chip`` and ``model`` are records (defaults ``hw.chip("H100-SXM")``,
    ``hw.model("Llama 3 8B")``). Explained in the chapter :ref:`ch-kv-cache`.
    """

    figsize = (6.0, 3.4)
    margins = (0.13, 0.16, 0.97, 0.9)

    def __init__(
        self,
        chips: Sequence[Chip] | None = None,
        chip: Chip | None = None,
        models: Sequence[ModelShape] | None = None,
        model: ModelShape | None = None,
        weight_dtype: str = "bf16",
        seq_len: int = 8192,
        batch: int = 16,
        usable_fraction: float = assumptions.USABLE_HBM_FRACTION,
    ) -> None:
        chip_records, chip = _offered_chips(chips, chip, "H100-SXM")
        model_records, model = _offered_models(models, model, need_width=True)
        options_in("weight_dtype", weight_dtype, WEIGHT_DTYPES)
        options_in("seq_len", seq_len, SEQ_LENS, f"a power of two from {SEQ_LENS[0]} to {SEQ_LENS[-1]}")
        options_in("batch", batch, BATCHES, f"a power of two from 1 to {BATCHES[-1]}")
        self.usable_fraction = float(fraction("usable_fraction", usable_fraction))
        layout, style = widgets.Layout(**_LAYOUT), _STYLE
        self.model = record_dropdown(model_records, model, "model", layout=layout, style=style)
        self.chip = chip_dropdown(chip_records, chip, layout=layout, style=style)
        self.weight_dtype = widgets.Dropdown(
            options=WEIGHT_DTYPES, value=weight_dtype, description="weights", layout=layout, style=style
        )
        self.seq_len = widgets.SelectionSlider(
            options=SEQ_LENS, value=seq_len, description="context", layout=layout, style=style
        )
        self.batch = widgets.SelectionSlider(
            options=BATCHES, value=batch, description="batch", layout=layout, style=style
        )
        self._x = np.array(BATCHES, dtype=float)
        super().__init__([self.model, self.chip, self.weight_dtype, self.seq_len, self.batch])

    def arrange(self) -> widgets.Widget:
        controls = widgets.HBox(
            [widgets.VBox([self.model, self.chip, self.weight_dtype]), widgets.VBox([self.seq_len, self.batch])]
        )
        return widgets.VBox([controls, self.summary, self.image])

    def setup(self) -> list:
        self._ax = ax = self.figure.add_subplot()
        self._lines = [ax.plot(self._x, self._x, color=c, lw=2, label=f"KV {d}")[0] for c, d in zip(PALETTE, KV_DTYPES)]
        self._points = [ax.plot([1.0], [1.0], "o", color=c, ms=7)[0] for c in PALETTE[: len(KV_DTYPES)]]
        ax.set(
            xscale="log",
            xlabel="batch (sequences)",
            ylabel="decode step, lower bound (ms)",
            xlim=(0.8, BATCHES[-1] * 1.25),
        )
        ax.minorticks_off()
        ax.legend(handles=self._lines, loc="upper left", fontsize=8)
        return self._points

    def background_key(self) -> tuple:
        return (self.model.value, self.chip.value, self.weight_dtype.value, self.seq_len.value)

    def curves(self) -> dict[str, tuple[float, int, np.ndarray, np.ndarray]]:
        """Per KV dtype: cache bytes per sequence, the largest batch that fits, and the decode step's bound and
        forecast (s) per batch."""
        record, chip, seq_len = self.model.value, self.chip.value, self.seq_len.value
        weights = self.weight_dtype.value
        result = {}
        for dtype in KV_DTYPES:
            step = inference_step(record, chip, self._x, seq_len, 1, 1, weights, dtype)
            result[dtype] = (
                kv_cache_bytes(seq_len, record, dtype=dtype),
                max_batch(record, chip, seq_len, 1, weights, dtype, self.usable_fraction),
                np.asarray(step.time_s),
                np.asarray(step.forecast_time_s),
            )
        return result

    def draw_background(self) -> None:
        self._curves = self.curves()
        self._band = forecast_band("serving", self.model.value, self.chip.value)  # stored values: no refit
        for line, (_, fit, times, _) in zip(self._lines, self._curves.values()):
            line.set_ydata(np.where(self._x <= fit, times * 1e3, np.nan))
        shown = np.concatenate([line.get_ydata() for line in self._lines])
        top = np.nanmax(shown) if np.isfinite(shown).any() else 1.0
        self._ax.set_ylim(0, top * 1.15)
        self._ax.set_title(f"{self.model.value.name} on one {self.chip.value.label}", fontsize=10)

    def refresh(self) -> str:
        batch = self.batch.value
        index = BATCHES.index(batch)
        rows = []
        for point, (dtype, (per_sequence, fit, times, forecasts)) in zip(self._points, self._curves.items()):
            fits = batch <= fit
            point.set_data([batch], [times[index] * 1e3])
            point.set_visible(fits)
            verdict = (
                f"{format_seconds(forecasts[index])} (bound {format_seconds(times[index])})" if fits else "does not fit"
            )
            rows.append(
                f"<tr><td>{dtype}</td><td>{format_bytes(per_sequence)}</td><td>{fit:,}</td><td>{verdict}</td></tr>"
            )
        return (
            "<table><tr><th>KV dtype</th><th>cache per sequence</th><th>max batch</th>"
            f"<th>step at batch {batch}: forecast (bound)</th></tr>" + "".join(rows) + "</table>"
            f"forecast error: {self._band.text}"
        )
