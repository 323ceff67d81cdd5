"""Hardware records: one immutable record per chip and per source, every number sourced.

A :class:`Sourced` value holds one number in plain SI units (bytes, bytes/s, FLOP/s, W,
J) with its unit, the document or URL it comes from, the date it was read, the text as
the source printed it, and a note where sources disagree. A :class:`Chip` groups them.
The data live in :mod:`hwlib.catalogue`; this module looks them up.
Explained in the chapter "Rooflines and ridge points" and the introduction.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from hwlib._checks import one_of


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
        return f"{self.value:g} {self.unit}{quoted} [{self.source}, read {self.read_on}]"


READ_ON = "2026-11-30"
"""The date every source of this edition was read (pages as stored that day)."""


def cite(source: str, read_on: str = READ_ON) -> Callable[..., Sourced]:
    """A constructor of :class:`Sourced` values that all come from ``source``, read on ``read_on``."""

    def sourced(value: float, unit: str, quoted: str, note: str = "") -> Sourced:
        return Sourced(value, unit, source, read_on, quoted, note)

    return sourced


SOURCES = ("vendor", "doc000", "doc002")
"""Where a record's numbers come from: vendor pages, or one of the two source documents
(``doc000`` = 000_dfa9af1fd73ea27d.txt, the TPU budgeting notebook; ``doc002`` =
002_501c62d3c87c2a8c.txt, the backprop memory-wall script), kept so that their results
can be reproduced exactly."""

RECORD_SOURCES = (*SOURCES, "measured")
"""What a Chip record may say of its source: one of ``SOURCES``, or "measured" for the
record of the reader's own machine that ``hw.measured_chip`` builds (never in the catalogue)."""


@dataclass(frozen=True, eq=False)
class Chip:
    """One accelerator as one source describes it. Sizes in bytes, rates per second.

    ``peak_flops`` maps a dtype ("bf16", "fp8", ...) to the dense (no sparsity) peak.
    ``interconnect`` is the chip's total chip-to-chip bandwidth as its vendor quotes it
    (see its note for the direction convention). The energy fields are the memory-wall
    model's parameters, present only where a source gives them.
    """

    key: str
    name: str
    vendor: str
    source: str
    hbm: Sourced
    hbm_bandwidth: Sourced
    peak_flops: Mapping[str, Sourced]
    l2: Sourced | None = None
    tdp: Sourced | None = None
    interconnect: Sourced | None = None
    hbm_energy: Sourced | None = None
    flop_energy: Sourced | None = None
    static_power: Sourced | None = None
    aliases: tuple[str, ...] = ()
    note: str = ""
    _peaks: Mapping[str, float] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        one_of("source", self.source, RECORD_SOURCES)
        object.__setattr__(self, "peak_flops", MappingProxyType(dict(self.peak_flops)))
        object.__setattr__(
            self, "_peaks", MappingProxyType({dtype: float(q.value) for dtype, q in self.peak_flops.items()})
        )

    @property
    def label(self) -> str:
        """Name plus the source when it is not the vendor, e.g. 'TPU v6e [doc000]'."""
        return self.name if self.source == "vendor" else f"{self.name} [{self.source}]"

    @property
    def hbm_bytes(self) -> float:
        return float(self.hbm.value)

    @property
    def hbm_bytes_per_s(self) -> float:
        return float(self.hbm_bandwidth.value)

    @property
    def peak_flops_per_s(self) -> Mapping[str, float]:
        """Dense peak FLOP/s per dtype."""
        return self._peaks

    def peak(self, dtype: str) -> float:
        """Dense peak FLOP/s for ``dtype``; KeyError naming the dtypes this record has."""
        if dtype not in self._peaks:
            raise KeyError(
                f"dtype {dtype!r}: {self.label} has no sourced peak for it; it has {sorted(self._peaks)}"
            )
        return self._peaks[dtype]

    def sourced_values(self) -> dict[str, Sourced]:
        """Every sourced number of this record by field name (peaks as 'peak_flops[dtype]')."""
        values = {f"peak_flops[{dtype}]": q for dtype, q in self.peak_flops.items()}
        for name in ("hbm", "hbm_bandwidth", "l2", "tdp", "interconnect", "hbm_energy", "flop_energy", "static_power"):
            if getattr(self, name) is not None:
                values[name] = getattr(self, name)
        return values

    def __repr__(self) -> str:
        return f"Chip({self.label!r})"


def require_chip(chip: object) -> Chip:
    """``chip`` itself if it is a Chip record, else a TypeError saying how to get one."""
    if not isinstance(chip, Chip):
        raise TypeError(f"chip must be a Chip record such as hw.chip('v5e'), got {chip!r}")
    return chip


def require_chips(chips: object) -> tuple[Chip, ...]:
    """``chips`` as a non-empty tuple of Chip records, else a TypeError."""
    records = tuple(chips) if isinstance(chips, (list, tuple)) else ()
    if not records or not all(isinstance(record, Chip) for record in records):
        raise TypeError(f"chips must be a non-empty sequence of Chip records, got {chips!r}")
    return records


def normalise_name(name: str) -> str:
    """Lower-case, drop punctuation and a leading vendor or 'tpu': 'TPU v5e' -> 'v5e'."""
    text = re.sub(r"[^a-z0-9]", "", name.lower())
    return re.sub(r"^(google|nvidia|amd)", "", text).removeprefix("tpu") or text


@functools.cache
def _index() -> dict[tuple[str, str], Chip]:
    from hwlib.catalogue import CHIPS

    index: dict[tuple[str, str], Chip] = {}
    for record in CHIPS:
        for alias in {record.key, record.name, *record.aliases}:
            index[(normalise_name(alias), record.source)] = record
    return index


def chip(name: str, source: str = "vendor") -> Chip:
    """The record of chip ``name`` (``"v5e"``, ``"TPU v5e"``, ``"H100"``, ...) from ``source``.

    ``source`` is one of ``SOURCES``. An unknown name raises KeyError with close matches.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a chip name string, got {name!r}")
    one_of("source", source, SOURCES)
    index = _index()
    wanted = normalise_name(name)
    if (wanted, source) in index:
        return index[(wanted, source)]
    elsewhere = sorted({s for (alias, s) in index if alias == wanted})
    if elsewhere:
        raise KeyError(f"chip {name!r} has no record from source {source!r}; it has records from {elsewhere}")
    names = sorted({record.name for record in index.values()})
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.4)
    close += [n for n in names if wanted and wanted in normalise_name(n) and n not in close]
    hint = f"; did you mean {close[:4]}?" if close else ""
    raise KeyError(f"unknown chip name {name!r}{hint} Known chips: {names}")


def chips(source: str | None = None) -> tuple[Chip, ...]:
    """Every record in catalogue order, or only those from ``source`` (one of ``SOURCES``)."""
    from hwlib.catalogue import CHIPS

    if source is None:
        return CHIPS
    one_of("source", source, SOURCES)
    return tuple(record for record in CHIPS if record.source == source)
