"""The quoted number: a value in SI units with its unit, source, date read, the text as quoted and a note.

Stored as astropy.constants stores constants. Explained in the introduction.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from hwlib.units import format_quantity

READ_ON = "2026-11-30"
"""The date the sources of this edition were read (pages as stored that day)."""

SOURCES = ("vendor", "doc000", "doc002")
"""Where a catalogue record's numbers come from: vendors' pages, or one of the two source
documents (``doc000``: the TPU budgeting notebook; ``doc002``: the compute-to-commute
script), kept so that their results can be reproduced exactly."""


@dataclass(frozen=True)
class Sourced:
    """One quoted number: ``value`` in ``unit`` (SI, no prefix), with its provenance."""

    value: float
    unit: str
    source: str
    read_on: str
    quoted: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.value, (int, float)) or isinstance(self.value, bool) or not self.value > 0:
            raise ValueError(f"Sourced.value must be a positive number, got {self.value!r}")
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", self.read_on):
            raise ValueError(f"Sourced.read_on must be a date YYYY-MM-DD, got {self.read_on!r}")

    def __float__(self) -> float:
        return float(self.value)

    def __str__(self) -> str:
        quoted = f" (quoted as {self.quoted!r})" if self.quoted else ""
        return f"{format_quantity(self.value, self.unit)}{quoted} [{self.source}, read {self.read_on}]"


def cite(source: str, read_on: str = READ_ON) -> Callable[..., Sourced]:
    """A constructor of :class:`Sourced` values that all come from ``source``, read on ``read_on``."""

    def sourced(value: float, unit: str, quoted: str, note: str = "") -> Sourced:
        return Sourced(value, unit, source, read_on, quoted, note)

    return sourced
