"""Compute-to-commute explorers: one layer step's energy per FLOP and its HBM intensity against T.

The shared controls are the chip, the hidden size d, the tokens per weight visit T and the
traffic constants b_w and a (defaults: document 002's). Used by the chapters :ref:`ch-moving-bytes` and
:ref:`ch-compute-and-commute`; the stacked-share explorers built on the
same base are in ``shares.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets
import numpy as np

from hwlib.data import chip as find_chip
from hwlib.data import chips as all_chips
from hwlib.data import doc002
from hwlib.data import models as all_models
from hwlib.data.records import ENERGY_FIELDS, Chip, ModelShape
from hwlib.energy import ADD_EQUIVALENT_J, energy_per_flop_j, machine_balance
from hwlib.layer_model import d_min, layer_step, t_min
from hwlib.roofline import is_compute_bound
from hwlib.units import format_number, format_seconds
from hwlib.viz.explorers.base import (
    Explorer,
    chip_dropdown,
    choose,
    default_record,
    has_energy,
    number_in,
    options_in,
    records_of,
)
from hwlib.viz.style import PALETTE

COMMUTE_WIDTHS = (256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 5120, 6144, 8192, 12288, 16384)
"""Hidden sizes d the compute-to-commute explorers offer."""
COMMUTE_TOKENS = tuple(2**p for p in range(18))
"""Tokens per weight visit T the explorers offer (powers of two, 1 to 131072)."""
B_W_RANGE = (0.0, 24.0, 1.0)
"""Slider range of b_w (bytes per parameter per visit): low, high, step."""
A_RANGE = (0.0, 400.0, 10.0)
"""Slider range of a (bytes per token per unit d): low, high, step."""
STYLE = {"description_width": "110px"}
SOURCE_LAYER = "GELU 4d, MHA, width d"
"""The layer choice that uses the source documents' layer of the d slider's width."""
_T_CURVE = np.geomspace(1, COMMUTE_TOKENS[-1], 160)


def energy_chips() -> tuple[Chip, ...]:
    """The catalogue chips with every energy parameter (``ENERGY_FIELDS``): document 002's GPUs."""
    return tuple(record for record in all_chips() if has_energy(record))


class CommuteExplorer(Explorer):
    """Base of the compute-to-commute explorers: chip, d, T, b_w and a, then a subclass's ``extra`` controls.

    ``needs_energy`` says whether the explorer's model needs the chip's energy parameters: then
    the default chips are those that have them and a chip without them is a ValueError naming
    what it lacks. ``chip`` defaults to ``hw.chip("A100-80GB", source="doc002")`` where offered.
    """

    needs_energy = True

    def __init__(
        self,
        chips: Sequence[Chip] | None = None,
        chip: Chip | None = None,
        d: int = doc002.D_MODEL,
        T: int = doc002.SEQ_LEN,
        b_w: float = doc002.B_W,
        a: float = doc002.A,
        extra: Sequence[widgets.ValueWidget] = (),
        model: ModelShape | None = None,
    ) -> None:
        if chips is None:
            records = energy_chips() if self.needs_energy else all_chips("vendor")
        else:
            records = records_of("chips", chips, Chip)
        chip = default_record(find_chip("A100-80GB", source="doc002"), records) if chip is None else chip
        if self.needs_energy and isinstance(chip, Chip):
            chip.require(*ENERGY_FIELDS)
        choose("chip", chip, records, Chip, "hw.chip('A100-80GB', source='doc002')")
        if self.needs_energy:
            for record in records:
                record.require(*ENERGY_FIELDS)
        options_in("d", d, COMMUTE_WIDTHS)
        options_in("T", T, COMMUTE_TOKENS)
        number_in("b_w", b_w, *B_W_RANGE[:2], "bytes per parameter")
        number_in("a", a, *A_RANGE[:2], "bytes per token per unit d")
        dense = [m for m in all_models("vendor") if m.d_model is not None and not m.is_moe]
        if model is not None and model not in dense:
            choose("model", model, dense, ModelShape, "hw.model('llama-3-8b')")
        self.chip = chip_dropdown(records, chip, style=STYLE)
        self.layer = widgets.Dropdown(
            options=[(SOURCE_LAYER, None)] + [(m.name, m) for m in dense], value=model, description="layer", style=STYLE
        )
        self.d = widgets.SelectionSlider(options=COMMUTE_WIDTHS, value=d, description="d (hidden)", style=STYLE)
        self.T = widgets.SelectionSlider(options=COMMUTE_TOKENS, value=T, description="T (tokens/visit)", style=STYLE)
        self.b_w = widgets.FloatSlider(
            value=b_w, min=B_W_RANGE[0], max=B_W_RANGE[1], step=B_W_RANGE[2], description="b_w (B/param)", style=STYLE
        )
        self.a = widgets.FloatSlider(
            value=a, min=A_RANGE[0], max=A_RANGE[1], step=A_RANGE[2], description="a (B/token/d)", style=STYLE
        )
        super().__init__([self.chip, self.layer, self.d, self.T, self.b_w, self.a, *extra])

    def background_key(self) -> tuple:
        return (self.chip.value,)

    def width(self) -> int | ModelShape:
        """What the layer model takes: the chosen model's own layer, or the source document's of width d."""
        return self.d.value if self.layer.value is None else self.layer.value

    def step(self):
        """The layer step (``hw.layer_step``) at the current chip, layer, T, b_w and a."""
        return layer_step(self.width(), self.T.value, self.chip.value, b_w=self.b_w.value, a=self.a.value)


class ByteEnergyExplorer(CommuteExplorer):
    """Energy per FLOP against HBM intensity on a chip, with the layer step's point and both balances.

    The curve is e_flop + e_hbm / I; the point is one layer's forward + backward at (d, T, b_w,
    a). Left of the energy balance, fetching bytes costs more than computing on them. Needs the
    chip's energy parameters. Explained in the chapter :ref:`ch-moving-bytes`.
    """

    _INTENSITY = np.geomspace(0.1, 1e4, 200)

    def setup(self) -> list:
        self._ax = ax = self.figure.add_subplot()
        (self._curve,) = ax.plot(self._INTENSITY, self._INTENSITY, color=PALETTE[0], lw=2)
        self._energy = ax.axvline(1.0, color="0.4", ls="-.", lw=1)
        self._time = ax.axvline(1.0, color="k", ls="--", lw=1)
        self._floor = ax.axhline(1.0, color=PALETTE[2], lw=1)
        (self._point,) = ax.plot([1.0], [1.0], "D", color=PALETTE[3], ms=8)
        ax.set(
            xscale="log",
            yscale="log",
            xlabel="HBM intensity (FLOP/byte)",
            ylabel="dynamic energy per FLOP (pJ)",
            xlim=(self._INTENSITY[0], self._INTENSITY[-1]),
        )
        ax.minorticks_off()
        return [self._point]

    def draw_background(self) -> None:
        record = self.chip.value
        balance = machine_balance(record)
        curve = np.asarray(energy_per_flop_j(self._INTENSITY, record)) * 1e12
        self._curve.set_ydata(curve)
        self._energy.set_xdata([balance.energy] * 2)
        self._time.set_xdata([balance.time] * 2)
        floor = record.flop_energy_j * 1e12
        self._floor.set_ydata([floor] * 2)
        self._ax.set_ylim(floor * 0.5, curve[0] * 1.5)
        self._ax.set_title(
            f"{record.label}: balances {balance.energy:.0f} (energy, dash-dot) and {balance.time:.0f} (time)",
            fontsize=8.5,
        )

    def refresh(self) -> str:
        record, step = self.chip.value, self.step()
        intensity = step.intensity
        per_flop = float(energy_per_flop_j(intensity, record))
        self._point.set_data([intensity], [per_flop * 1e12])
        balance = machine_balance(record)
        hbm = step.hbm_weights_j + step.hbm_activations_j
        energy_side = (
            "HBM bytes cost more than the FLOPs"
            if intensity < balance.energy
            else "the FLOPs cost more than the HBM bytes"
        )
        time_side = "waits on HBM" if intensity < balance.time else "is compute-bound"
        return (
            f"<b>I = {format_number(intensity, 4)} FLOP/B</b><br>{energy_side}<br>"
            f"(HBM {format_number(hbm / step.arithmetic_j)} x "
            f"arithmetic)<br>the step {time_side}<br>{format_number(per_flop * 1e12)} pJ per FLOP = "
            f"{per_flop / ADD_EQUIVALENT_J:.0f} int8 adds"
        )


class StepIntensityExplorer(CommuteExplorer):
    """One layer's HBM intensity against T at (d, b_w, a) on a chip: its time balance, T_min and the chosen T.

    A time model: works for every catalogue chip (default: all of them). The chip's energy balance
    is drawn (dash-dot) only where the chip has energy parameters.
    Explained in the chapter :ref:`ch-compute-and-commute`.
    """

    needs_energy = False

    def setup(self) -> list:
        self._ax = ax = self.figure.add_subplot()
        (self._curve,) = ax.plot(_T_CURVE, _T_CURVE, color=PALETTE[0], lw=2)
        self._balance = ax.axhline(1.0, color="k", ls="--", lw=1)
        self._energy = ax.axhline(1.0, color="0.4", ls="-.", lw=1)
        self._tmin = ax.axvline(1.0, color=PALETTE[3], ls=":", lw=1.5)
        self._tmin_label = ax.text(1.0, 5e3, " T_min", color=PALETTE[3], fontsize=8, va="top")
        (self._point,) = ax.plot([1.0], [1.0], "D", color=PALETTE[3], ms=8)
        ax.set(
            xscale="log",
            yscale="log",
            xlabel="tokens per weight visit T",
            ylabel="HBM intensity (FLOP/byte)",
            xlim=(1, COMMUTE_TOKENS[-1]),
            ylim=(0.3, 1e4),
        )
        ax.minorticks_off()
        return [self._curve, self._tmin, self._tmin_label, self._point]

    def draw_background(self) -> None:
        record = self.chip.value
        balance = machine_balance(record)
        self._balance.set_ydata([balance.time] * 2)
        energy = has_energy(record)
        self._energy.set_visible(energy)
        if energy:
            self._energy.set_ydata([balance.energy] * 2)
            title = (
                f"{record.label}: balances {balance.time:.0f} (time, dashed) and "
                f"{balance.energy:.0f} (energy, dash-dot)"
            )
        else:
            title = f"{record.label}: time balance {balance.time:.0f} FLOP/B (dashed)"
        self._ax.set_title(title, fontsize=8.5)

    def refresh(self) -> str:
        record, d, b_w, a = self.chip.value, self.width(), self.b_w.value, self.a.value
        self._curve.set_ydata(layer_step(d, _T_CURVE, record, b_w=b_w, a=a).intensity)
        step = self.step()
        self._point.set_data([self.T.value], [step.intensity])
        tokens = float(t_min(d, record, b_w=b_w, a=a))
        reachable = bool(np.isfinite(tokens))
        self._tmin.set_xdata([tokens if reachable else 1e9] * 2)
        self._tmin_label.set_x(tokens if reachable else 1.0)
        self._tmin_label.set_visible(reachable)
        bound = "compute-bound" if is_compute_bound(step.intensity, record) else "held by HBM"
        gemm = (
            "the matrix units" if is_compute_bound(step.flops / step.weight_hbm_bytes, record) else "weight streaming"
        )
        reach = f"T_min = {tokens:,.0f}" if reachable else "no T reaches it (d < d_min)"
        smallest = float(d_min(record, a=a))
        smallest_text = f"{smallest:,.0f}" if np.isfinite(smallest) else "none (the on-chip memory is too small)"
        return (
            f"<b>I = {format_number(step.intensity, 4)} FLOP/B, {bound}</b><br>{reach}; d_min = {smallest_text}<br>"
            f"GEMM phase set by {gemm}<br>{format_seconds(step.time_s / self.T.value)} per token per layer"
        )
