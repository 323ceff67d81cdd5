"""Hardware records: chips, the fabrics between them, clusters built of both, and the sizes chips are sold in.

Explained in the chapters :ref:`ch-rooflines`, :ref:`ch-hbm-budgets` and :ref:`ch-batch-squeeze`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from hwlib._checks import describe, one_of
from hwlib.data.records.quantities import SOURCES, Sourced
from hwlib.units import BYTES_PER_ELEMENT, element_dtype


def _float(quantity: Sourced | None) -> float | None:
    return None if quantity is None else float(quantity.value)


ENERGY_FIELDS = ("hbm_energy", "flop_energy", "static_power", "tdp")
"""The fields the energy model needs (see ``Chip.require``)."""

CHIP_FAMILIES = ("GPU", "TPU")
"""The families of accelerators the forecast's error is measured per (``hw.forecast_band``)."""
VENDOR_FAMILIES = {"NVIDIA": "GPU", "AMD": "GPU", "Google": "TPU", "Intel": "Gaudi", "AWS": "Trainium"}
"""The family of accelerators each vendor in the records makes (``Chip.family``). Families outside
``CHIP_FAMILIES`` have no measured run: a forecast on them gets no band of its own."""


@dataclass(frozen=True, eq=False)
class Chip:
    """One accelerator as one source describes it. Sizes in bytes, rates per second.

    ``hbm`` is the capacity the vendor prints; ``hbm_visible`` the capacity a program sees
    (a cited device report), where known; ``capacity_bytes`` is the one "does it fit"
    answers use. ``peak_flops`` maps a dtype to the dense (no sparsity) peak. ``on_chip``
    is the on-chip memory a GEMM blocks into (L2 on GPUs, VMEM on TPUs; see its note).
    ``interconnect`` is the chip's chip-to-chip total as its vendor quotes it; ``ici_links`` and
    ``ici_link_bandwidth`` (one direction) describe a TPU's torus links where a source gives them. The energy
    fields are the compute-to-commute model's, present only where a source gives them.
    """

    key: str
    name: str
    vendor: str
    source: str
    hbm: Sourced
    hbm_bandwidth: Sourced
    peak_flops: Mapping[str, Sourced]
    hbm_visible: Sourced | None = None
    on_chip: Sourced | None = None
    tdp: Sourced | None = None
    interconnect: Sourced | None = None
    ici_links: Sourced | None = None
    ici_link_bandwidth: Sourced | None = None
    hbm_energy: Sourced | None = None
    flop_energy: Sourced | None = None
    static_power: Sourced | None = None
    aliases: tuple[str, ...] = ()
    note: str = ""
    _peaks: Mapping[str, float] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        one_of("source", self.source, (*SOURCES, "measured", "given"))
        for dtype in self.peak_flops:
            one_of("peak_flops dtype", dtype, BYTES_PER_ELEMENT)
        object.__setattr__(self, "peak_flops", MappingProxyType(dict(self.peak_flops)))
        object.__setattr__(self, "_peaks", MappingProxyType({k: float(q.value) for k, q in self.peak_flops.items()}))

    @property
    def label(self) -> str:
        """Name plus the source when it is not the vendor or the reader, e.g. 'TPU v6e [doc000]'."""
        return self.name if self.source in ("vendor", "given") else f"{self.name} [{self.source}]"

    @property
    def family(self) -> str:
        """The family of accelerators its vendor makes (``VENDOR_FAMILIES``: "GPU", "TPU", "Gaudi" or "Trainium");
        "" for a chip given inline."""
        return VENDOR_FAMILIES.get(self.vendor, "")

    @property
    def hbm_bytes(self) -> float:
        """HBM capacity as the source prints it (B)."""
        return float(self.hbm.value)

    @property
    def hbm_visible_bytes(self) -> float | None:
        """HBM capacity a program sees (B), from a device report; None where none is cited."""
        return _float(self.hbm_visible)

    @property
    def capacity_bytes(self) -> float:
        """The capacity "does it fit" answers use: what a program sees where cited, else ``hbm_bytes``."""
        return self.hbm_bytes if self.hbm_visible is None else float(self.hbm_visible.value)

    @property
    def hbm_bytes_per_s(self) -> float:
        return float(self.hbm_bandwidth.value)

    @property
    def on_chip_bytes(self) -> float | None:
        """On-chip memory a GEMM blocks into (B), or None where no source gives it."""
        return _float(self.on_chip)

    @property
    def tdp_w(self) -> float | None:
        return _float(self.tdp)

    @property
    def interconnect_bytes_per_s(self) -> float | None:
        """Chip-to-chip total as the vendor quotes it (B/s; see the note for directions)."""
        return _float(self.interconnect)

    @property
    def ici_link_count(self) -> float | None:
        """Inter-chip links per chip (a torus's neighbours), where a source gives them (TPUs)."""
        return _float(self.ici_links)

    @property
    def ici_link_bytes_per_s(self) -> float | None:
        """Bandwidth of one inter-chip link in one direction (B/s), where a source gives it (TPUs)."""
        return _float(self.ici_link_bandwidth)

    @property
    def hbm_energy_j_per_byte(self) -> float | None:
        return _float(self.hbm_energy)

    @property
    def flop_energy_j(self) -> float | None:
        return _float(self.flop_energy)

    @property
    def static_power_w(self) -> float | None:
        return _float(self.static_power)

    @property
    def peak_flops_per_s(self) -> Mapping[str, float]:
        """Dense peak FLOP/s per dtype."""
        return self._peaks

    def peak(self, dtype: str) -> float:
        """Dense peak FLOP/s for ``dtype`` (a block-scaled format at its element dtype's peak,
        ``hw.units.element_dtype``); KeyError naming the dtypes this record has."""
        element = element_dtype(dtype)
        if element not in self._peaks:
            raise KeyError(f"dtype {dtype!r}: {self.label} has no sourced peak for it; it has {sorted(self._peaks)}")
        return self._peaks[element]

    def require(self, *names: str) -> Chip:
        """This record if it has every field in ``names``, else a ValueError naming the missing ones."""
        missing = [name for name in names if getattr(self, name) is None]
        if missing:
            raise ValueError(
                f"chip {self.label} has no {', '.join(missing)}; the energy model needs "
                f"{', '.join(ENERGY_FIELDS)} (give them with hw.custom_chip, or use a record "
                "that has them: hw.chips(source='doc002'))"
            )
        return self

    def sourced_values(self) -> dict[str, Sourced]:
        """Every sourced number of this record by field name (peaks as 'peak_flops[dtype]')."""
        values = {f"peak_flops[{dtype}]": q for dtype, q in self.peak_flops.items()}
        for name in (
            "hbm",
            "hbm_visible",
            "hbm_bandwidth",
            "on_chip",
            "tdp",
            "interconnect",
            "ici_links",
            "ici_link_bandwidth",
            *ENERGY_FIELDS[:3],
        ):
            if getattr(self, name) is not None:
                values[name] = getattr(self, name)
        return values

    def __repr__(self) -> str:
        return f"Chip({self.label!r})"


FABRIC_KINDS = ("scale-up", "scale-out")
FABRIC_TOPOLOGIES = ("switch", "torus")
"""How a fabric joins its chips: through switches (NVSwitch, a NIC network; a fully connected mesh of
dedicated links, MI300X's Infinity Fabric, behaves as one for these collectives), or as a torus of links to
neighbours (TPU ICI)."""
"""Scale-up fabrics join the chips of one domain; scale-out networks join domains."""


@dataclass(frozen=True)
class Fabric:
    """One chip-to-chip fabric: the quoted bandwidth, its direction convention, its domain size.

    ``bandwidth`` is the number as quoted (B/s); ``directions`` is 2 when it sums both
    directions (NVLink, ICI totals) and 1 when it is per direction (NIC line rates).
    ``domain_size`` is how many chips one domain of a scale-up fabric joins (None for
    scale-out networks and for document 002's unbounded assumption). ``chip_keys`` names
    the chips it serves (empty: any). ``latency`` is one ring step's latency (s), where sourced. ``topology``
    is one of ``FABRIC_TOPOLOGIES``. ``in_network_reduction``, where the switches reduce (NVLink SHARP,
    InfiniBand SHARP), is a published all-reduce that used it: its algorithm bandwidth (array bytes per chip
    over time, B/s); an all-reduce over such a fabric is then bounded by one send and one receive of the
    array at the link rate after ``reduction_latency`` (s), which that measurement must not beat. Chapter
    :ref:`ch-batch-squeeze`.
    """

    key: str
    name: str
    kind: str
    source: str
    bandwidth: Sourced
    directions: int
    domain_size: Sourced | None = None
    chip_keys: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    latency: Sourced | None = None
    topology: str = "switch"
    in_network_reduction: Sourced | None = None
    reduction_latency: Sourced | None = None
    note: str = ""

    def __post_init__(self) -> None:
        one_of("kind", self.kind, FABRIC_KINDS)
        one_of("topology", self.topology, FABRIC_TOPOLOGIES)
        if self.in_network_reduction is not None and not isinstance(self.in_network_reduction, Sourced):
            raise TypeError(
                f"in_network_reduction must be a Sourced bandwidth or None, got {self.in_network_reduction!r}"
            )
        one_of("source", self.source, ("vendor", "doc002", "given"))
        if self.directions not in (1, 2):
            raise ValueError(f"directions must be 1 or 2, got {self.directions!r}")

    @property
    def bytes_per_s(self) -> float:
        """Bandwidth per chip per direction (B/s), the all-reduce model's input."""
        return float(self.bandwidth.value) / self.directions

    @property
    def latency_s(self) -> float:
        """Latency of one step of a ring collective over this fabric (s); 0 when no source gives one."""
        return 0.0 if self.latency is None else float(self.latency.value)

    @property
    def reduction_latency_s(self) -> float | None:
        """Latency of an all-reduce the fabric reduces in the network (s), None where it does not reduce."""
        return None if self.reduction_latency is None else float(self.reduction_latency.value)

    @property
    def domain_chips(self) -> int | None:
        """Chips in one domain of this fabric, or None when it is not bounded here."""
        return None if self.domain_size is None else int(self.domain_size.value)

    @property
    def label(self) -> str:
        return self.name if self.source in ("vendor", "given") else f"{self.name} [{self.source}]"

    def __repr__(self) -> str:
        return f"Fabric({self.label!r})"


@dataclass(frozen=True, eq=False)
class Cluster:
    """A data-parallel system: ``chip`` in domains of ``node_fabric``, joined by ``network``.

    ``node_size`` comes from the node fabric's domain size; None means the node fabric is
    assumed to join every chip (document 002's Table 6). ``network`` is the per-chip
    scale-out fabric, None where none is modelled (a TPU slice stays on its ICI). ``dcn``, on a
    TPU cluster, is the data-centre network that joins slices of at most ``node_size`` chips
    (Multislice), per chip; ``multislice_chips`` the most chips those slices may hold, where a
    source states it (Sourced, unit "chips"). Chapters :ref:`ch-batch-squeeze` and :ref:`ch-sharding`.
    """

    key: str
    name: str
    chip: Chip
    node_fabric: Fabric
    network: Fabric | None = None
    note: str = ""
    dcn: Fabric | None = None
    multislice_chips: Sourced | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.chip, Chip):
            raise TypeError(f"chip must be a Chip record, got {self.chip!r}")
        if not isinstance(self.node_fabric, Fabric):
            raise TypeError(f"node_fabric must be a Fabric record, got {self.node_fabric!r}")
        for name in ("network", "dcn"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), Fabric):
                raise TypeError(f"{name} must be a Fabric record or None, got {getattr(self, name)!r}")
        if self.dcn is not None and (self.node_fabric.topology != "torus" or self.network is not None):
            raise ValueError(f"dcn joins TPU slices: {self.name}'s node fabric must be a torus and network None")
        if self.multislice_chips is not None and (self.dcn is None or not isinstance(self.multislice_chips, Sourced)):
            raise ValueError(f"multislice_chips must be a Sourced count beside a dcn, got {self.multislice_chips!r}")

    @property
    def node_size(self) -> int | None:
        """Chips per node (scale-up domain; a TPU's largest slice), or None when the node fabric spans all chips."""
        return self.node_fabric.domain_chips

    @property
    def max_chips(self) -> int | None:
        """The most chips this model covers: one domain when there is no network or DCN, a DCN's stated limit
        (``multislice_chips``), else unbounded (None)."""
        if self.dcn is not None:
            return None if self.multislice_chips is None else int(self.multislice_chips.value)
        return self.node_size if self.network is None else None

    @property
    def label(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Cluster({self.name!r})"


@dataclass(frozen=True)
class Deployment:
    """The sizes (in chips) in which a chip is rented or bought as one unit.

    ``sizes`` ascend; ``names`` and ``topologies`` go with them. Beyond the largest size,
    whole multiples of it are used (slices joined by the data-centre network, or several
    nodes). ``chip_keys`` are the chips it applies to. ``added``: sizes read from other sources
    than ``source``, each a Sourced chip count whose quote names its topology. Chapter :ref:`ch-hbm-budgets`.
    """

    key: str
    kind: str
    chip_keys: tuple[str, ...]
    sizes: tuple[int, ...]
    names: tuple[str, ...]
    topologies: tuple[str, ...]
    beyond: str
    source: str
    read_on: str
    quoted: str
    note: str = ""
    added: tuple[Sourced, ...] = ()

    def __post_init__(self) -> None:
        one_of("kind", self.kind, ("slice", "node"))
        if not all(isinstance(size, Sourced) and int(size.value) in self.sizes for size in self.added):
            raise ValueError(f"Deployment {self.key}: added must be Sourced chip counts among its sizes")
        if (
            list(self.sizes) != sorted(set(self.sizes))
            or len(self.names) != len(self.sizes)
            or len(self.topologies) != len(self.sizes)
        ):
            raise ValueError("Deployment sizes must ascend, with one name and topology each")

    @property
    def largest(self) -> int:
        return self.sizes[-1]


def require(kind: type, name: str, value: object, example: str) -> object:
    """``value`` itself if it is a ``kind`` record, else a TypeError saying how to get one."""
    if not isinstance(value, kind):
        raise TypeError(f"{name} must be a {kind.__name__} record such as {example}, got {describe(value)}")
    return value


def require_chip(chip: object) -> Chip:
    """``chip`` itself if it is a Chip record, else a TypeError saying how to get one."""
    return require(Chip, "chip", chip, "hw.chip('v5e')")


def require_chips(chips: object) -> tuple[Chip, ...]:
    """``chips`` as a non-empty tuple of Chip records, else a TypeError."""
    records = tuple(chips) if isinstance(chips, (list, tuple)) else ()
    if not records or not all(isinstance(record, Chip) for record in records):
        raise TypeError(f"chips must be a non-empty sequence of Chip records, got {describe(chips)}")
    return records
