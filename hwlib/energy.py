"""What moving a byte costs: energy per bit on wires, in adders, SRAM and HBM, and a chip's balances.

Per-bit costs are W. J. Dally's, "Hardware for deep learning" / "Trends in deep learning
hardware", keynote at the AHA retreat, 31 Aug 2023, as document 002
(``002_501c62d3c87c2a8c.txt``, header and section 1) quotes them: on-chip wire
~100 fJ/bit/mm, an add ~1 fJ/bit, a small SRAM ~50 fJ/bit, an HBM access ~5 pJ/bit at the
interface. The **add-equivalent** is the energy of one int8 add (8 bits x 1 fJ/bit = 8 fJ),
the same as moving one byte 10 um of wire.

The two balances of a chip (document 002, section 2, ``balance``; the time balance is the
roofline ridge point of Williams, Waterman and Patterson, CACM 52(4), 2009):

* time balance ``beta_t = peak FLOP/s / HBM bytes/s`` (FLOP/byte): below it, a kernel waits
  on HBM;
* energy balance ``beta_E = HBM J/byte / J per FLOP`` (FLOP/byte): below it, a kernel spends
  more joules fetching bytes from HBM than computing on them.

Explained in the chapter "What moving a byte costs" (book/moving_bytes.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from hwlib._checks import Number, non_negative, positive, scalar_or_array
from hwlib.hardware import READ_ON, Chip, Sourced, require_chip

DALLY_2023 = (
    "W. J. Dally, keynote at the AHA retreat, 31 Aug 2023, as quoted in "
    "002_501c62d3c87c2a8c.txt (header and section 1)"
)
DOC002_TABLE1 = "002_501c62d3c87c2a8c.txt, Table 1 (table_boundaries)"

WIRE_ENERGY_PER_BIT_MM = Sourced(100e-15, "J/bit/mm", DALLY_2023, READ_ON, "~100 fJ/bit-mm",
                                 "on-chip wire; document 002 stores it as E_WIRE_BIT_MM but never uses it")
ADD_ENERGY_PER_BIT = Sourced(1e-15, "J/bit", DALLY_2023, READ_ON, "add ~1 fJ/bit")
SRAM_ENERGY_PER_BIT = Sourced(50e-15, "J/bit", DALLY_2023, READ_ON, "small RAM ~50 fJ/bit",
                              "small local SRAM array; document 002 stores it as E_SRAM_BIT but never uses it")
HBM_INTERFACE_ENERGY_PER_BIT = Sourced(5e-12, "J/bit", DALLY_2023, READ_ON, "HBM access ~5 pJ/bit",
                                       "at the HBM interface, before the on-die trip to the cores")
BITS_PER_BYTE = 8

ADD_EQUIVALENT_J = BITS_PER_BYTE * ADD_ENERGY_PER_BIT.value
"""One int8 add: 8 bits x 1 fJ/bit = 8 fJ (J). Document 002's unit ``AE``."""


def add_equivalents(joules: Number) -> Number:
    """Energy in int8-add equivalents: ``joules`` / 8 fJ (chapter "What moving a byte costs")."""
    return scalar_or_array(non_negative("joules", joules, allow_inf=True) / ADD_EQUIVALENT_J)


def wire_energy_j(n_bytes: Number, distance_mm: Number) -> Number:
    """Energy (J) to move ``n_bytes`` over ``distance_mm`` of on-chip wire at 100 fJ/bit/mm (Dally 2023).

    Chapter "What moving a byte costs".
    """
    size = non_negative("n_bytes", n_bytes)
    distance = non_negative("distance_mm", distance_mm)
    return scalar_or_array(size * BITS_PER_BYTE * distance * WIRE_ENERGY_PER_BIT_MM.value)


def add_equivalent_distance_mm() -> float:
    """Wire length (mm) over which moving one byte costs one int8 add: 8 fJ / (8 x 100 fJ/mm) = 0.01 mm.

    Chapter "What moving a byte costs".
    """
    return ADD_EQUIVALENT_J / (BITS_PER_BYTE * WIRE_ENERGY_PER_BIT_MM.value)


@dataclass(frozen=True)
class ByteCost:
    """One row of document 002's Table 1: the energy of one operation or of one byte at a boundary.

    ``derivation`` says how the value follows from the per-bit costs where it does; rows
    without one are the document's own estimates, stored as printed.
    Chapter "What moving a byte costs".
    """

    item: str
    joules: float
    note: str
    source: str
    derivation: str = ""


def _a100_doc002() -> Chip:
    from hwlib.hardware import chip

    return chip("A100-80GB", source="doc002")


def byte_costs() -> tuple[ByteCost, ...]:
    """Document 002's Table 1 as data: energy (J) per int8 add, per BF16 FLOP and per byte moved.

    Rows built from Dally's per-bit costs are computed here (and tested to equal the printed
    values); the A100 rows come from the doc002 chip record. Chapter "What moving a byte costs".
    """
    wire_byte_mm = BITS_PER_BYTE * WIRE_ENERGY_PER_BIT_MM.value
    a100 = _a100_doc002()
    return (
        ByteCost("int8 add (datapath)", ADD_EQUIVALENT_J, "1 fJ/bit x 8 bits", DALLY_2023,
                 "8 x add per bit"),
        ByteCost("BF16 FLOP, datapath only", 0.10e-12, "HMMA-class MAC scaled from 45 nm to 7 nm",
                 DOC002_TABLE1 + " (e_dp of the A100, never used by the model)"),
        ByteCost("BF16 FLOP, all-in on A100", a100.flop_energy.value,
                 "(400 W - 60 W static - 40 W HBM) / 312 TFLOP/s in the document's note; see flop_energy_from_power",
                 a100.flop_energy.source, "the doc002 record's flop_energy"),
        ByteCost("1 byte moved 1 mm", wire_byte_mm, "100 fJ/bit/mm", DALLY_2023, "8 x wire per bit per mm"),
        ByteCost("1 byte across a 16 mm die", 16 * wire_byte_mm, "= 1600 int8 adds (Dally's slide)",
                 DALLY_2023, "16 mm x 8 x wire per bit per mm"),
        ByteCost("1 byte from register file", 0.3e-12, "~40 fJ/bit including local wire", DOC002_TABLE1),
        ByteCost("1 byte from SMEM/L1 (192 KB)", 1.0e-12, "50 fJ/bit array + ~0.5 mm round trip",
                 DOC002_TABLE1),
        ByteCost("1 byte from L2 (40 MB)", 12e-12, "~0.5 pJ/bit array + ~10-20 mm round trip",
                 DOC002_TABLE1),
        ByteCost("1 byte from HBM2e (interface)", BITS_PER_BYTE * HBM_INTERFACE_ENERGY_PER_BIT.value,
                 "5 pJ/bit access", DALLY_2023, "8 x HBM interface per bit"),
        ByteCost("1 byte from HBM2e (all-in)", a100.hbm_energy.value, "+ ~25 mm on-die round trip",
                 a100.hbm_energy.source, "the doc002 record's hbm_energy"),
        ByteCost("1 byte from HBM2e (far corner)", 78e-12, "+ 48 mm round trip (Dally's 28 mm die)",
                 DOC002_TABLE1),
    )


def byte_cost_table() -> pd.DataFrame:
    """Table 1 as a DataFrame: pJ and int8-add equivalents per row, with notes (chapter "What moving a byte costs")."""
    rows = byte_costs()
    joules = np.array([row.joules for row in rows])
    return pd.DataFrame(
        {"pJ": joules * 1e12, "int8-adds": add_equivalents(joules), "note": [row.note for row in rows]},
        index=pd.Index([row.item for row in rows], name="item"),
    )


TABLE1_NOTE_HBM_POWER = Sourced(40.0, "W", DOC002_TABLE1, READ_ON, "40 W HBM",
                                "the HBM power in Table 1's note on e_flop; the model's own e_hbm x bw is larger")
L2_ARRAY_ENERGY_PER_BIT = Sourced(0.5e-12, "J/bit", DOC002_TABLE1, READ_ON, "~0.5 pJ/bit array",
                                  "a 40 MB L2's SRAM array, without the wire to it")

ROUND_TRIP_MM = {
    "1 byte from SMEM/L1 (192 KB)": 0.5,
    "1 byte from L2 (40 MB)": 10.0,
    "1 byte from HBM2e (all-in)": 25.0,
    "1 byte from HBM2e (far corner)": 48.0,
}
"""On-die wire (mm) each Table 1 note adds to the array or interface cost (the L2's is the
low end of the note's 10-20 mm)."""


def rebuilt_byte_costs() -> dict[str, float]:
    """Table 1's SMEM, L2 and HBM rows rebuilt from per-bit costs: array or interface + wire (J per byte).

    SMEM: small SRAM + 0.5 mm; L2: 0.5 pJ/bit array + 10 mm; HBM: 5 pJ/bit interface + 25 mm
    (all-in) or 48 mm (far corner), at 100 fJ/bit/mm (Dally 2023). Chapter "What moving a byte costs".
    """
    start = {
        "1 byte from SMEM/L1 (192 KB)": SRAM_ENERGY_PER_BIT.value,
        "1 byte from L2 (40 MB)": L2_ARRAY_ENERGY_PER_BIT.value,
        "1 byte from HBM2e (all-in)": HBM_INTERFACE_ENERGY_PER_BIT.value,
        "1 byte from HBM2e (far corner)": HBM_INTERFACE_ENERGY_PER_BIT.value,
    }
    return {item: BITS_PER_BYTE * per_bit + float(wire_energy_j(1.0, ROUND_TRIP_MM[item]))
            for item, per_bit in start.items()}


# --- a chip's power and energy parameters --------------------------------------------

ENERGY_FIELDS = ("hbm_energy", "flop_energy", "static_power", "tdp")


def require_energy(chip: object, fields: tuple[str, ...] = ENERGY_FIELDS) -> Chip:
    """Return ``chip`` if it has every energy field in ``fields``, else raise naming the missing ones.

    Chapter "What moving a byte costs".
    """
    chip = require_chip(chip)
    missing = [name for name in fields if getattr(chip, name) is None]
    if missing:
        raise ValueError(
            f"chip {chip.label} has no {', '.join(missing)}: the energy model needs them. Records with "
            f"energy parameters: {[c.label for c in _energy_chips()]} (hw.chip(name, source='doc002'))"
        )
    return chip


def _energy_chips() -> tuple[Chip, ...]:
    from hwlib.hardware import chips

    return tuple(c for c in chips() if all(getattr(c, name) is not None for name in ENERGY_FIELDS))


@dataclass(frozen=True)
class MachineBalance:
    """A chip's two balances in FLOP/byte: ``time`` (peak / HBM bandwidth), ``energy`` (HBM J/byte / J per FLOP).

    Chapter "What moving a byte costs".
    """

    time: float
    energy: float


def machine_balance(chip: Chip, dtype: str = "bf16") -> MachineBalance:
    """Time balance peak/bandwidth and energy balance e_hbm/e_flop of ``chip`` (FLOP/byte).

    Document 002, section 2 (``balance``); chapter "What moving a byte costs".
    """
    chip = require_energy(chip, ("hbm_energy", "flop_energy"))
    return MachineBalance(
        time=chip.peak(dtype) / chip.hbm_bytes_per_s,
        energy=chip.hbm_energy.value / chip.flop_energy.value,
    )


def hbm_power_w(chip: Chip) -> float:
    """HBM power (W) when HBM streams at full bandwidth: e_hbm (J/B) x bandwidth (B/s).

    Chapter "What moving a byte costs".
    """
    chip = require_energy(chip, ("hbm_energy",))
    return chip.hbm_energy.value * chip.hbm_bytes_per_s


def flop_energy_from_power(chip: Chip, hbm_w: Number | None = None, dtype: str = "bf16") -> Number:
    """All-in J/FLOP at peak from the power budget: (TDP - static - HBM power) / peak.

    Document 002's header derives e_flop this way. ``hbm_w`` defaults to the model's own
    full-bandwidth HBM power (``hbm_power_w``); the document's Table 1 note uses 40 W.
    Chapter "What moving a byte costs".
    """
    chip = require_energy(chip, ("static_power", "tdp", "hbm_energy"))
    power = hbm_power_w(chip) if hbm_w is None else non_negative("hbm_w", hbm_w)
    budget = chip.tdp.value - chip.static_power.value - power
    if np.any(budget <= 0):
        raise ValueError(
            f"hbm_w must leave power for compute: TDP {chip.tdp.value:g} W - static "
            f"{chip.static_power.value:g} W - HBM {hbm_w!r} W is not positive"
        )
    return scalar_or_array(budget / chip.peak(dtype))


def implied_hbm_power_w(chip: Chip, dtype: str = "bf16") -> float:
    """The HBM power (W) that the stored e_flop implies: TDP - static - e_flop x peak.

    Chapter "What moving a byte costs".
    """
    chip = require_energy(chip)
    return chip.tdp.value - chip.static_power.value - chip.flop_energy.value * chip.peak(dtype)


def full_load_power_w(chip: Chip, dtype: str = "bf16") -> float:
    """Power (W) at peak FLOP/s and full HBM bandwidth together: e_flop x peak + e_hbm x bw + static.

    Document 002's model lets both run at once without a power cap; compare with ``chip.tdp``.
    Chapter "What moving a byte costs".
    """
    chip = require_energy(chip)
    return chip.flop_energy.value * chip.peak(dtype) + hbm_power_w(chip) + chip.static_power.value


def energy_per_flop_j(intensity: Number, chip: Chip) -> Number:
    """Dynamic energy per FLOP (J) of a kernel of ``intensity`` FLOP/byte at HBM: e_flop + e_hbm / I.

    Equals twice e_flop at the energy balance. Chapter "What moving a byte costs".
    """
    chip = require_energy(chip, ("hbm_energy", "flop_energy"))
    values = positive("intensity", intensity, allow_inf=True)
    return scalar_or_array(chip.flop_energy.value + chip.hbm_energy.value / values)
