"""Where a step's time and joules go: one layer step, and a whole model's data-parallel training step.

Two stacked bars (time, energy) on the compute-to-commute controls. Used by the chapters :ref:`ch-elementwise-tax` and
:ref:`ch-seven-b-regimes`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import ipywidgets as widgets
import numpy as np

from hwlib._checks import non_negative, positive
from hwlib.data import doc002
from hwlib.data.records import FABRIC_KINDS, Chip, Fabric, ModelShape
from hwlib.training.regimes import regime_fabric, training_step, transformer_params
from hwlib.units import format_number, format_seconds
from hwlib.viz.explorers.base import options_in
from hwlib.viz.explorers.commute import STYLE, CommuteExplorer
from hwlib.viz.style import PALETTE

MICRO_BATCHES = tuple(2**p for p in range(8))
"""Micro-batches per step the regime explorer offers (1 to 128)."""
DP_CHIPS = tuple(2**p for p in range(11))
"""Data-parallel chip counts the regime explorer offers (1 to 1024)."""
FABRIC_LABELS = {"scale-up": "NVLink (scale-up)", "scale-out": "IB (scale-out)"}
"""How the regime explorer's fabric dropdown names each fabric kind (``regime_fabric`` picks the fabric)."""
_STATIC = "#999999"


class _StackedShares(CommuteExplorer):
    """Two horizontal stacked bars, the step's time parts and its energy parts, as shares of each total."""

    figsize = (5.6, 3.0)
    margins = (0.16, 0.4, 0.97, 0.9)
    time_parts: tuple[tuple[str, str], ...] = ()
    energy_parts: tuple[tuple[str, str], ...] = ()

    def setup(self) -> list:
        self._ax = ax = self.figure.add_subplot()
        self._bars = []
        for row, parts in ((1, self.time_parts), (0, self.energy_parts)):
            for name, colour in parts:
                (bar,) = ax.barh([row], [0.0], left=[0.0], color=colour, label=name, height=0.6)
                self._bars.append(bar)
        ax.set(xlim=(0, 1), ylim=(-0.5, 1.5), xlabel="share of the step")
        ax.set_yticks([0, 1], ["energy", "time"])
        ax.grid(axis="y", visible=False)
        ax.legend(loc="upper center", bbox_to_anchor=(0.45, -0.3), ncol=3, fontsize=7.5)
        return self._bars

    def draw_background(self) -> None:
        self._ax.set_title(self.chip.value.label, fontsize=9)

    def place(self, time_parts: np.ndarray, energy_parts: np.ndarray) -> None:
        """Set the bars to these shares (each array sums to 1, in the order of the parts)."""
        widths = np.concatenate([time_parts, energy_parts])
        lefts = np.concatenate([np.cumsum(time_parts) - time_parts, np.cumsum(energy_parts) - energy_parts])
        for bar, left, width in zip(self._bars, lefts, widths):
            bar.set_x(left)
            bar.set_width(width)
            bar.set_visible(True)


class EnergyShareExplorer(_StackedShares):
    """Where one layer step's time and joules go at (d, T, b_w, a) on a chip: two stacked bars.

    Needs the chip's energy parameters. Explained in the chapter :ref:`ch-elementwise-tax`.
    """

    time_parts = (("GEMM phase", PALETTE[0]), ("element-wise phase", PALETTE[1]))
    energy_parts = (
        ("arithmetic", PALETTE[0]),
        ("HBM weights", PALETTE[3]),
        ("HBM activations", PALETTE[1]),
        ("static", _STATIC),
    )

    def refresh(self) -> str:
        step = self.step()
        time_parts = np.array([step.gemm_time_s, step.elementwise_time_s]) / step.time_s
        energy_parts = (
            np.array([step.arithmetic_j, step.hbm_weights_j, step.hbm_activations_j, step.static_j]) / step.energy_j
        )
        self.place(time_parts, energy_parts)
        ratio = step.elementwise_time_s / step.gemm_time_s
        return (
            f"<b>element-wise / GEMM time = {format_number(ratio)}</b><br>element-wise share of time "
            f"{100 * time_parts[1]:.1f} %<br>HBM activations / arithmetic energy "
            f"{100 * step.hbm_activations_j / step.arithmetic_j:.1f} %<br>"
            f"{format_number(step.energy_j / step.flops * 1e12)} pJ per FLOP all-in"
        )


class RegimeExplorer(_StackedShares):
    """A whole model's training step per chip: time and energy per token, and what they are made of.

    Adds micro-batches per step, data-parallel chips and the fabric kind ("scale-up" or
    "scale-out", resolved per chip by ``regime_fabric``) to the shared controls; layers,
    vocabulary and sequence length are fixed when it is built (defaults: document 002's Table 5
    model). ``fabrics`` maps a chip to its own fabrics by kind (``{a100: {"scale-up": nvlink,
    "scale-out": ib}}``), for chips ``regime_fabric`` does not know (``hw.custom_chip``); a kind it
    leaves out falls back to ``regime_fabric``. Needs the chip's energy parameters. Explained in the
    chapter :ref:`ch-seven-b-regimes`.
    """

    time_parts = (("layers", PALETTE[0]), ("optimizer", PALETTE[1]), ("all-reduce", PALETTE[2]))
    energy_parts = (("arithmetic", PALETTE[3]), ("HBM", PALETTE[4]), ("static", PALETTE[5]))  # as hw.viz.plot_regimes

    def __init__(
        self,
        chips: Sequence[Chip] | None = None,
        chip: Chip | None = None,
        d: int = doc002.D_MODEL,
        T: int = doc002.SEQ_LEN,
        b_w: float = doc002.B_W,
        a: float = doc002.A,
        n_layers: int = doc002.N_LAYERS,
        vocab: int = doc002.VOCAB,
        seq_len: int = doc002.SEQ_LEN,
        micro_batches: int = 1,
        n_chips: int = 1,
        fabric: str = "scale-out",
        model: ModelShape | None = None,
        fabrics: Mapping[Chip, Mapping[str, Fabric]] | None = None,
    ) -> None:
        self._fabrics = _chip_fabrics(fabrics)
        positive("n_layers", n_layers, integral=True)
        non_negative("vocab", vocab, integral=True)
        positive("seq_len", seq_len, integral=True)
        self.n_layers, self.vocab, self.seq_len = int(n_layers), int(vocab), int(seq_len)
        options_in("micro_batches", micro_batches, MICRO_BATCHES)
        options_in("n_chips", n_chips, DP_CHIPS)
        options_in("fabric", fabric, FABRIC_KINDS)
        self.micro_batches = widgets.SelectionSlider(
            options=MICRO_BATCHES, value=micro_batches, description="micro-batches", style=STYLE
        )
        self.n_chips = widgets.SelectionSlider(options=DP_CHIPS, value=n_chips, description="chips (DP)", style=STYLE)
        self.fabric = widgets.Dropdown(
            options=[(FABRIC_LABELS[kind], kind) for kind in FABRIC_KINDS],
            value=fabric,
            description="fabric",
            style=STYLE,
        )
        super().__init__(chips, chip, d, T, b_w, a, extra=[self.micro_batches, self.n_chips, self.fabric], model=model)
        offered = self.chip.options
        for record in self._fabrics:
            if not any(record is option for _, option in offered):
                raise ValueError(
                    f"fabrics names chip {record.label!r}, which is not among the explorer's chips "
                    f"{[option.label for _, option in offered]}"
                )

    def fabric_for(self, chip: Chip, kind: str) -> Fabric:
        """The fabric of ``kind`` the explorer runs ``chip`` over: its entry in ``fabrics``, else ``regime_fabric``."""
        for record, chosen in self._fabrics.items():
            if record is chip and kind in chosen:
                return chosen[kind]
        return regime_fabric(chip, kind)

    def training_step(self):
        """The training step (``hw.training_step``) at the current controls; a KeyError if no fabric is known."""
        record, width, count = self.chip.value, self.width(), self.n_chips.value
        bandwidth = None if count == 1 else self.fabric_for(record, self.fabric.value).bytes_per_s
        shape = not isinstance(width, int)
        return training_step(
            width,
            self.T.value,
            record,
            None if shape else self.n_layers,
            micro_batches=self.micro_batches.value,
            n_chips=count,
            fabric_bytes_per_s=bandwidth,
            n_params=None if shape else transformer_params(width, self.n_layers, self.vocab),
            seq_len=self.seq_len,
            b_w=self.b_w.value,
            a=self.a.value,
        )

    def refresh(self) -> str:
        try:
            step = self.training_step()
        except KeyError:
            for bar in self._bars:
                bar.set_visible(False)
            return f"<b>no {self.fabric.value} fabric known for {self.chip.value.label}</b>"
        time_parts = np.array([step.layers_time_s, step.optimizer_time_s, step.allreduce_time_s]) / step.time_s
        energy_parts = np.array([step.arithmetic_j, step.hbm_j, step.static_j]) / step.energy_j
        self.place(time_parts, energy_parts)
        over = "" if self.n_chips.value == 1 else f" over {self.fabric_for(self.chip.value, self.fabric.value).label}"
        return (
            f"<b>{format_seconds(step.time_per_token_s)} and {format_number(step.energy_per_token_j * 1e3)} mJ "
            f"per token</b><br>{step.tokens_per_step:,.0f} tokens per step per chip{over}<br>"
            f"slowdown vs peak {format_number(step.slowdown)}x<br>"
            f"step intensity {format_number(step.intensity)} FLOP/B"
        )


def _chip_fabrics(fabrics: object) -> dict:
    """``fabrics`` (None, or a mapping from Chip to a mapping from fabric kind to Fabric) as a dict, else an error."""
    if fabrics is None:
        return {}
    if not isinstance(fabrics, Mapping):
        raise TypeError(
            f"fabrics must map a Chip to {{kind: Fabric}}, e.g. {{a100: {{'scale-out': ib}}}}, got {fabrics!r}"
        )
    checked = {}
    for record, chosen in fabrics.items():
        if not isinstance(record, Chip):
            raise TypeError(f"fabrics must be keyed by Chip records, got {record!r}")
        if not isinstance(chosen, Mapping) or not chosen:
            raise TypeError(f"fabrics[{record.label!r}] must map a fabric kind to a Fabric, got {chosen!r}")
        for kind, value in chosen.items():
            options_in("fabric kind", kind, FABRIC_KINDS)
            if not isinstance(value, Fabric):
                raise TypeError(f"fabrics[{record.label!r}][{kind!r}] must be a Fabric record, got {value!r}")
        checked[record] = dict(chosen)
    return checked
