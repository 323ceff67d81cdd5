"""Tables that chapters render from hwlib's data (pandas DataFrames, never retyped numbers).

Used by the chapter "Rooflines and ridge points" and the hardware appendix.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from hwlib.hardware import Chip, require_chip, require_chips
from hwlib.roofline import ridge_point
from hwlib.units import GB, GiB, TERA


def chip_table(chips: Sequence[Chip], dtype: str = "bf16") -> pd.DataFrame:
    """One row per chip: dense ``dtype`` peak, HBM in GiB and GB, bandwidth and ridge point."""
    rows = [
        {
            "chip": record.label,
            f"{dtype} peak (TFLOP/s)": record.peak(dtype) / TERA,
            "HBM (GiB)": record.hbm_bytes / GiB,
            "HBM (GB)": record.hbm_bytes / GB,
            "HBM bandwidth (GB/s)": record.hbm_bytes_per_s / GB,
            "ridge point (FLOP/byte)": ridge_point(record, dtype),
        }
        for record in require_chips(chips)
    ]
    return pd.DataFrame(rows).set_index("chip")


def provenance_table(chip: Chip) -> pd.DataFrame:
    """Every sourced number of one record: value, unit, text as quoted, source, date read, note."""
    rows = [
        {"field": name, "value": q.value, "unit": q.unit, "quoted": q.quoted, "source": q.source,
         "read on": q.read_on, "note": q.note}
        for name, q in require_chip(chip).sourced_values().items()
    ]
    return pd.DataFrame(rows).set_index("field")
