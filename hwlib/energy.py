"""What moving a byte costs: energy per bit on wires and in adders, document 002's Table 1, a chip's balances.

Per-bit costs are W. J. Dally's (``hw.literature``): on-chip wire ~100 fJ/bit/mm, an add
~1 fJ/bit, a small SRAM ~50 fJ/bit, an HBM access ~5 pJ/bit at the interface. The
**add-equivalent** is the energy of one int8 add (8 bits x 1 fJ/bit = 8 fJ), the same as
moving one byte 10 um of wire.

A chip has two balances (document 002, section 2, ``balance``):

* the time balance, its ridge point I* = peak FLOP/s / HBM bytes/s (``hw.ridge_point``;
  Williams, Waterman and Patterson, CACM 52(4), 2009): below it a kernel waits on HBM;
* the energy balance I*_E = e_hbm / e_flop (FLOP/byte): below it a kernel spends more joules
  fetching bytes from HBM than computing on them.

Explained in the chapter :ref:`ch-moving-bytes`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwlib._checks import Number, non_negative, positive, scalar_or_array
from hwlib.data import doc002, literature
from hwlib.data.records import ENERGY_FIELDS, Chip, require_chip
from hwlib.roofline import ridge_point
from hwlib.units import BITS_PER_BYTE

ADD_EQUIVALENT_J = BITS_PER_BYTE * literature.ADD_ENERGY_PER_BIT.value
"""One int8 add: 8 bits x 1 fJ/bit = 8 fJ (J). Document 002's unit ``AE``."""


def add_equivalents(joules: Number) -> Number:
    """Energy in int8-add equivalents: ``joules`` / 8 fJ. Chapter :ref:`ch-moving-bytes`."""
    return scalar_or_array(non_negative("joules", joules, allow_inf=True) / ADD_EQUIVALENT_J)


def wire_energy_j(n_bytes: Number, distance_mm: Number) -> Number:
    """Energy (J) to move ``n_bytes`` over ``distance_mm`` of on-chip wire at 100 fJ/bit/mm (Dally 2023).

    Chapter :ref:`ch-moving-bytes`.
    """
    size = non_negative("n_bytes", n_bytes)
    distance = non_negative("distance_mm", distance_mm)
    return scalar_or_array(size * BITS_PER_BYTE * distance * literature.WIRE_ENERGY_PER_BIT_MM.value)


def add_equivalent_distance_mm() -> float:
    """Wire length (mm) over which moving one byte costs one int8 add: 8 fJ / (8 x 100 fJ/mm) = 0.01 mm.

    Chapter :ref:`ch-moving-bytes`.
    """
    return ADD_EQUIVALENT_J / float(wire_energy_j(1.0, 1.0))


@dataclass(frozen=True)
class ByteCost:
    """One row of document 002's Table 1: the energy (J) of one operation or one byte at a boundary.

    ``printed`` is the document's value; ``derivation`` says how ``joules`` follows from the
    per-bit costs where it does (rows without one are the document's own estimates).
    Chapter :ref:`ch-moving-bytes`.
    """

    item: str
    joules: float
    printed: float
    note: str
    source: str
    derivation: str = ""


def _derived_rows() -> dict[str, tuple[float, str]]:
    a100 = next(chip for chip in doc002.CHIPS if chip.key == "a100-80gb")
    wire = float(wire_energy_j(1.0, 1.0))
    hbm_interface = BITS_PER_BYTE * literature.HBM_INTERFACE_ENERGY_PER_BIT.value
    return {
        "int8 add (datapath)": (ADD_EQUIVALENT_J, "8 x add per bit"),
        "BF16 FLOP, all-in on A100": (a100.flop_energy_j, "the doc002 A100's flop_energy"),
        "1 byte moved 1 mm": (wire, "8 x wire per bit per mm"),
        "1 byte across a 16 mm die": (16 * wire, "16 mm x 8 x wire per bit per mm"),
        "1 byte from HBM2e (interface)": (hbm_interface, "8 x HBM interface per bit"),
        "1 byte from HBM2e (all-in)": (a100.hbm_energy_j_per_byte, "the doc002 A100's hbm_energy"),
    }


def byte_costs() -> tuple[ByteCost, ...]:
    """Document 002's Table 1 as data: energy (J) per int8 add, per BF16 FLOP and per byte moved.

    Rows that follow from Dally's per-bit costs or the A100 record are computed (tests check
    them against the printed values); the others are the document's estimates.
    Chapter :ref:`ch-moving-bytes`.
    """
    derived = _derived_rows()
    rows = []
    for item, printed in doc002.TABLE1:
        joules, how = derived.get(item, (printed.value, ""))
        rows.append(ByteCost(item, float(joules), printed.value, printed.note, printed.source, how))
    return tuple(rows)


def rebuilt_byte_costs() -> dict[str, float]:
    """Table 1's SMEM, L2 and HBM rows rebuilt from per-bit costs: array or interface + wire (J per byte).

    SMEM: small SRAM + 0.5 mm; L2: 0.5 pJ/bit array + 10 mm; HBM: 5 pJ/bit interface + 25 mm
    (all-in) or 48 mm (far corner), at 100 fJ/bit/mm (Dally 2023). Chapter :ref:`ch-moving-bytes`.
    """
    start = {
        "1 byte from SMEM/L1 (192 KB)": literature.SRAM_ENERGY_PER_BIT.value,
        "1 byte from L2 (40 MB)": doc002.L2_ARRAY_ENERGY_PER_BIT.value,
        "1 byte from HBM2e (all-in)": literature.HBM_INTERFACE_ENERGY_PER_BIT.value,
        "1 byte from HBM2e (far corner)": literature.HBM_INTERFACE_ENERGY_PER_BIT.value,
    }
    return {
        item: BITS_PER_BYTE * per_bit + float(wire_energy_j(1.0, doc002.ROUND_TRIP_MM[item]))
        for item, per_bit in start.items()
    }


@dataclass(frozen=True)
class MachineBalance:
    """A chip's two balances in FLOP/byte: ``time`` (the ridge point) and ``energy`` (e_hbm / e_flop).

    ``energy`` needs the chip's energy parameters and raises a ValueError naming what is missing.
    Chapter :ref:`ch-moving-bytes`.
    """

    chip: Chip
    time: float

    @property
    def energy(self) -> float:
        chip = self.chip.require("hbm_energy", "flop_energy")
        return chip.hbm_energy_j_per_byte / chip.flop_energy_j


def machine_balance(chip: Chip, dtype: str = "bf16") -> MachineBalance:
    """Time balance (the ridge point, every chip) and energy balance e_hbm / e_flop of ``chip`` (FLOP/byte).

    Document 002, section 2; chapter :ref:`ch-moving-bytes`.
    """
    chip = require_chip(chip)
    return MachineBalance(chip=chip, time=ridge_point(chip, dtype))


def hbm_power_w(chip: Chip) -> float:
    """HBM power (W) when HBM streams at full bandwidth: e_hbm (J/B) x bandwidth (B/s).

    Chapter :ref:`ch-moving-bytes`.
    """
    chip = require_chip(chip).require("hbm_energy")
    return chip.hbm_energy_j_per_byte * chip.hbm_bytes_per_s


def flop_energy_from_power(chip: Chip, hbm_w: Number | None = None, dtype: str = "bf16") -> Number:
    """All-in J/FLOP at peak from the power budget: (TDP - static - HBM power) / peak.

    Document 002's header derives e_flop this way. ``hbm_w`` defaults to the model's own
    full-bandwidth HBM power (``hbm_power_w``); Table 1's note uses 40 W.
    Chapter :ref:`ch-moving-bytes`.
    """
    chip = require_chip(chip).require("static_power", "tdp", "hbm_energy")
    power = hbm_power_w(chip) if hbm_w is None else non_negative("hbm_w", hbm_w)
    budget = chip.tdp_w - chip.static_power_w - power
    if np.any(budget <= 0):
        raise ValueError(
            f"hbm_w must leave power for compute: TDP {chip.tdp_w:g} W - static "
            f"{chip.static_power_w:g} W - HBM {float(np.max(power)):g} W is not positive"
        )
    return scalar_or_array(budget / chip.peak(dtype))


def implied_hbm_power_w(chip: Chip, dtype: str = "bf16") -> float:
    """The HBM power (W) that the stored e_flop implies: TDP - static - e_flop x peak.

    Chapter :ref:`ch-moving-bytes`.
    """
    chip = require_chip(chip).require(*ENERGY_FIELDS)
    return chip.tdp_w - chip.static_power_w - chip.flop_energy_j * chip.peak(dtype)


def full_load_power_w(chip: Chip, dtype: str = "bf16") -> float:
    """Power (W) at peak FLOP/s and full HBM bandwidth together: e_flop x peak + e_hbm x bw + static.

    Document 002's model lets both run at once without a power cap; compare with ``chip.tdp_w``.
    Chapter :ref:`ch-moving-bytes`.
    """
    chip = require_chip(chip).require(*ENERGY_FIELDS)
    return chip.flop_energy_j * chip.peak(dtype) + hbm_power_w(chip) + chip.static_power_w


def energy_per_flop_j(intensity: Number, chip: Chip) -> Number:
    """Dynamic energy per FLOP (J) of a kernel of ``intensity`` FLOP/byte at HBM: e_flop + e_hbm / I.

    Equals twice e_flop at the energy balance. Chapter :ref:`ch-moving-bytes`.
    """
    chip = require_chip(chip).require("hbm_energy", "flop_energy")
    values = positive("intensity", intensity, allow_inf=True)
    return scalar_or_array(chip.flop_energy_j + chip.hbm_energy_j_per_byte / values)
