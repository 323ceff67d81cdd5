"""Data-parallel fabrics and the systems built from them, every number sourced.

A :class:`Fabric` is one way devices exchange gradients: a scale-up fabric that joins the
devices of one domain (NVLink inside an 8-GPU HGX/DGX node, a TPU pod's inter-chip
interconnect) or a scale-out network between domains (one InfiniBand or RoCE NIC per
GPU). What the all-reduce model needs is the bandwidth **per device per direction**, in
bytes/s (``Fabric.bytes_per_s``). Vendors quote it two ways, and each record says which:

* NVLink and TPU ICI are quoted as a device's total over all links, both directions
  summed (``directions=2``): NVLink 3 on an A100 is 600 GB/s, i.e. 300 GB/s each way.
  These totals are the chips' ``interconnect`` values in :mod:`hwlib.catalogue`, reused
  here, not stored twice.
* NIC line rates are quoted in bits per second per port, per direction (full duplex,
  ``directions=1``): HDR InfiniBand's 200 Gb/s is 25 GB/s each way. A line rate is an
  upper bound; encoding (64b/66b) and protocol headers take a few per cent of it.

A :class:`Cluster` puts a chip, its scale-up fabric with the domain size (devices per
node) and a scale-out network together, so that the chapter can ask what the all-reduce
costs on N devices of a real system. Document 002's Table 6 assumes one flat fabric for
every N (NVLink at 300 GB/s up to 1024 GPUs, or InfiniBand at 25 GB/s even inside a node);
the two ``doc002-*`` clusters keep that assumption (``node_size`` None), with the
document's own bandwidths from :data:`hwlib.layer_model.FABRIC_BANDWIDTH`.

Explained in the chapter "The batch-size squeeze" (book/batch_squeeze.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType

from hwlib._checks import one_of
from hwlib.catalogue import UNVERIFIED
from hwlib.hardware import Chip, Sourced, chip as _chip, cite
from hwlib.layer_model import FABRIC_BANDWIDTH

FABRIC_KINDS = ("scale-up", "scale-out")
"""Scale-up fabrics join the devices of one domain; scale-out networks join domains."""

FABRIC_SOURCES = ("vendor", "doc002")
"""Where a fabric's numbers come from: vendor pages, or document 002's ``GPUS`` dict."""

GBIT = 1e9 / 8
"""Bytes/s in one Gb/s (NIC line rates are quoted in bits per second)."""


@dataclass(frozen=True)
class Fabric:
    """One gradient-exchange fabric: quoted bandwidth, its direction convention, domain size.

    ``bandwidth`` is the number as quoted (B/s); ``directions`` is 2 when it sums both
    directions (NVLink, ICI totals) and 1 when it is already per direction (NIC line
    rates). ``domain_size`` is how many devices one domain of a scale-up fabric joins
    (None for scale-out networks, and for document 002's unbounded assumption).
    Chapter "The batch-size squeeze".
    """

    key: str
    name: str
    kind: str
    source: str
    bandwidth: Sourced
    directions: int
    domain_size: Sourced | None = None
    aliases: tuple[str, ...] = ()
    note: str = ""

    def __post_init__(self) -> None:
        one_of("kind", self.kind, FABRIC_KINDS)
        one_of("source", self.source, FABRIC_SOURCES)
        if self.directions not in (1, 2):
            raise ValueError(f"directions must be 1 or 2, got {self.directions!r}")

    @property
    def bytes_per_s(self) -> float:
        """Bandwidth per device per direction (B/s), the all-reduce model's input."""
        return float(self.bandwidth.value) / self.directions

    @property
    def domain_devices(self) -> int | None:
        """Devices in one domain of this fabric, or None when it is not bounded here."""
        return None if self.domain_size is None else int(self.domain_size.value)

    @property
    def label(self) -> str:
        """Name plus the source when it is not the vendor."""
        return self.name if self.source == "vendor" else f"{self.name} [{self.source}]"

    def __repr__(self) -> str:
        return f"Fabric({self.label!r})"


# Pages read (search copies stored 2026-11-30), see each note for what was checked.
_BASEPOD = cite(
    "NVIDIA DGX BasePOD reference architecture, Core Components, "
    "https://docs.nvidia.com/dgx-basepod/reference-architecture-infrastructure-foundation-enterprise-ai/"
    "latest/core-components.html"
)
_NVSWITCH_TABLE = cite("NVIDIA NVLink and NVSwitch page, https://www.nvidia.com/en-us/data-center/nvlink/")
_CONNECTX6 = cite("https://docs.nvidia.com/networking/display/ConnectX6EN/Introduction")
_CONNECTX8 = cite(
    "NVIDIA ConnectX-8 SuperNIC Firmware Release Notes v40.44.0208, Changes and New Features, "
    "https://docs.nvidia.com/networking/display/connectx8firmwarev40440208/changes+and+new+features"
)
_TPU_V5P = cite("https://docs.cloud.google.com/tpu/docs/v5p")

_PER_DIRECTION = (
    "Line rate per port, per direction (full duplex); bits/s divided by 8. Encoding "
    "(64b/66b) and protocol headers leave a few per cent less for data."
)

_NODE_8 = "8 GPUs joined by NVSwitch in one HGX/DGX node; beyond it traffic leaves over the NICs."

FABRICS_CATALOGUE: tuple[Fabric, ...] = (
    Fabric(
        key="nvlink3",
        name="NVLink 3 (A100)",
        kind="scale-up",
        source="vendor",
        bandwidth=_chip("A100-80GB").interconnect,
        directions=2,
        domain_size=_NVSWITCH_TABLE(
            8, "devices", "Number of GPUs with direct connection / node: Up to 8",
            f"Second-generation NVSwitch (DGX A100 / HGX A100 8-GPU board). {_NODE_8} Seen in a "
            "stored third-party copy of NVIDIA's NVSwitch table (jingchaozhang.github.io/A100-white-paper, "
            f"which also lists six NVSwitches and 600 GB/s GPU to GPU); NVIDIA's own page: {UNVERIFIED}",
        ),
        aliases=("NVLink 3", "nvlink-a100"),
        note="12 links x 25 GB/s per direction = 300 GB/s per direction per GPU.",
    ),
    Fabric(
        key="nvlink4",
        name="NVLink 4 (H100/H200)",
        kind="scale-up",
        source="vendor",
        bandwidth=_chip("H100-SXM").interconnect,
        directions=2,
        domain_size=_BASEPOD(
            8, "devices", "Eight NVIDIA Hopper GPUs. Four NVIDIA NVSwitch chips.",
            f"DGX H100/H200. {_NODE_8} Verified against a stored copy of the page.",
        ),
        aliases=("NVLink 4", "nvlink-h100"),
        note="18 links x 25 GB/s per direction = 450 GB/s per direction per GPU.",
    ),
    Fabric(
        key="nvlink5",
        name="NVLink 5 (B200)",
        kind="scale-up",
        source="vendor",
        bandwidth=_chip("B200").interconnect,
        directions=2,
        domain_size=_BASEPOD(
            8, "devices", "Built with eight NVIDIA B200",
            f"DGX B200. {_NODE_8} Verified against a stored copy of the page. A GB200 NVL72 "
            "rack joins 72 GPUs in one NVLink domain instead.",
        ),
        aliases=("NVLink 5", "nvlink-b200"),
        note="18 links x 50 GB/s per direction = 900 GB/s per direction per GPU.",
    ),
    Fabric(
        key="ici-v5p",
        name="TPU v5p ICI",
        kind="scale-up",
        source="vendor",
        bandwidth=_chip("v5p").interconnect,
        directions=2,
        domain_size=_TPU_V5P(
            6144, "devices", "The largest job that can be scheduled is a 96 cube (6144 chip) job.",
            "Largest v5p slice, a 16x16x24 3D torus; a pod has 8960 chips ('Number of chips per "
            "pod 8960'). Verified against a stored copy of the page, which also lists 1200 GBps "
            "bidirectional ICI bandwidth per chip and a 3D torus topology.",
        ),
        aliases=("ICI v5p", "v5p ICI", "ici"),
        note="Per chip over all six torus links. An all-reduce reaches it only when it runs "
        "over all three torus axes at once (full cubes with wrap-around); hwlib treats it as "
        "the per-direction bandwidth of one flat ring, an upper bound.",
    ),
    Fabric(
        key="ib-hdr",
        name="InfiniBand HDR (200 Gb/s)",
        kind="scale-out",
        source="vendor",
        bandwidth=_CONNECTX6(
            200 * GBIT, "B/s", "up to two ports of 200Gb/s for InfiniBand and Ethernet",
            f"ConnectX-6 VPI. {_PER_DIRECTION} Verified against a stored copy of the page. "
            f"A DGX A100 has eight single-port HDR NICs for its compute fabric, one per GPU. {UNVERIFIED}",
        ),
        directions=1,
        aliases=("HDR", "IB HDR", "hdr"),
    ),
    Fabric(
        key="ib-ndr",
        name="InfiniBand NDR (400 Gb/s)",
        kind="scale-out",
        source="vendor",
        bandwidth=_BASEPOD(
            400 * GBIT, "B/s", "eight single-port NVIDIA ConnectX-7 VPI ... up to 400 Gb/s InfiniBand/Ethernet",
            f"DGX H100/H200 and DGX B200: one ConnectX-7 per GPU. {_PER_DIRECTION} Verified against "
            "a stored copy of the page.",
        ),
        directions=1,
        aliases=("NDR", "IB NDR", "ndr"),
    ),
    Fabric(
        key="ib-xdr",
        name="InfiniBand XDR (800 Gb/s)",
        kind="scale-out",
        source="vendor",
        bandwidth=_CONNECTX8(
            800 * GBIT, "B/s", "ConnectX-8 SuperNIC supports 800Gb/s or XDR IB or 2 x 400GbE link speeds",
            f"{_PER_DIRECTION} Verified against a stored copy of the release notes. The DGX B200 "
            "ships with NDR ConnectX-7 NICs; XDR is the ConnectX-8 upgrade.",
        ),
        directions=1,
        aliases=("XDR", "IB XDR", "xdr"),
    ),
    Fabric(
        key="roce-400",
        name="RoCE 400 GbE",
        kind="scale-out",
        source="vendor",
        bandwidth=_BASEPOD(
            400 * GBIT, "B/s", "up to 400 Gb/s InfiniBand/Ethernet",
            f"The same ConnectX-7 ports run as 400 Gb/s Ethernet with RDMA over Converged Ethernet. "
            f"{_PER_DIRECTION} Verified against a stored copy of the page.",
        ),
        directions=1,
        aliases=("RoCE", "400GbE", "roce"),
    ),
    Fabric(
        key="nvlink-300",
        name="NVLink 300 GB/s",
        kind="scale-up",
        source="doc002",
        bandwidth=FABRIC_BANDWIDTH[("a100-80gb", "nvlink")],
        directions=1,
        aliases=("nvlink", "NVLink"),
        note="Document 002's per-direction NVLink for the A100, assumed for every N (no domain size).",
    ),
    Fabric(
        key="ib-25",
        name="IB HDR 25 GB/s",
        kind="scale-out",
        source="doc002",
        bandwidth=FABRIC_BANDWIDTH[("a100-80gb", "ib")],
        directions=1,
        aliases=("ib", "IB", "IB HDR"),
        note="Document 002's one HDR NIC per GPU, per direction, used even inside a node.",
    ),
)
"""Every fabric hwlib knows, vendor records first, then document 002's two."""


def _normalise(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def fabric(name: str, source: str = "vendor") -> Fabric:
    """The fabric ``name`` ("nvlink4", "NDR", "ICI v5p", ...) from ``source`` ("vendor" or "doc002").

    Unknown names raise KeyError listing the known ones. Chapter "The batch-size squeeze".
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a fabric name string, got {name!r}")
    one_of("source", source, FABRIC_SOURCES)
    wanted = _normalise(name)
    for record in FABRICS_CATALOGUE:
        if record.source == source and wanted in {_normalise(a) for a in (record.key, record.name, *record.aliases)}:
            return record
    known = sorted(record.key for record in FABRICS_CATALOGUE if record.source == source)
    raise KeyError(f"unknown fabric {name!r} from source {source!r}; known: {known}")


def fabrics(source: str | None = None, kind: str | None = None) -> tuple[Fabric, ...]:
    """Every fabric, or those from ``source`` and/or of ``kind`` ("scale-up" or "scale-out")."""
    if source is not None:
        one_of("source", source, FABRIC_SOURCES)
    if kind is not None:
        one_of("kind", kind, FABRIC_KINDS)
    return tuple(record for record in FABRICS_CATALOGUE
                 if (source is None or record.source == source) and (kind is None or record.kind == kind))


@dataclass(frozen=True, eq=False)
class Cluster:
    """A data-parallel system: ``chip`` devices in domains of ``node_fabric``, joined by ``network``.

    ``node_size`` comes from the node fabric's domain size; None means the node fabric is
    assumed to join every device (document 002's Table 6). ``network`` is the per-GPU
    scale-out fabric, None where the system has none modelled (a TPU slice stays on ICI).
    Chapter "The batch-size squeeze".
    """

    key: str
    name: str
    chip: Chip
    node_fabric: Fabric
    network: Fabric | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.chip, Chip):
            raise TypeError(f"chip must be a Chip record, got {self.chip!r}")
        if not isinstance(self.node_fabric, Fabric):
            raise TypeError(f"node_fabric must be a Fabric record, got {self.node_fabric!r}")
        if self.network is not None and not isinstance(self.network, Fabric):
            raise TypeError(f"network must be a Fabric record or None, got {self.network!r}")

    @property
    def node_size(self) -> int | None:
        """Devices per node (scale-up domain), or None when the node fabric spans all devices."""
        return self.node_fabric.domain_devices

    @property
    def max_devices(self) -> int | None:
        """The most devices this model covers: one domain when there is no network, else unbounded (None)."""
        return self.node_size if self.network is None else None

    @property
    def label(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Cluster({self.name!r})"


_A100_DOC = _chip("A100-80GB", source="doc002")

CLUSTERS: tuple[Cluster, ...] = (
    Cluster("doc002-nvlink", "document 002: NVLink 300 GB/s", _A100_DOC, fabric("nvlink", "doc002"),
            note="Table 6's first half: NVLink for every N, as if 1024 GPUs shared one NVLink domain."),
    Cluster("doc002-ib", "document 002: IB HDR 25 GB/s", _A100_DOC, fabric("ib", "doc002"),
            note="Table 6's second half: one flat ring over the NICs, even inside a node."),
    Cluster("hgx-a100-hdr", "HGX A100 + HDR", _chip("A100-80GB"), fabric("nvlink3"), fabric("ib-hdr"),
            note="8 A100s per node on NVLink 3, one HDR NIC per GPU (DGX A100 / SuperPOD)."),
    Cluster("hgx-h100-ndr", "HGX H100 + NDR", _chip("H100-SXM"), fabric("nvlink4"), fabric("ib-ndr"),
            note="8 H100s per node on NVLink 4, one NDR NIC per GPU (DGX H100)."),
    Cluster("hgx-b200-ndr", "HGX B200 + NDR", _chip("B200"), fabric("nvlink5"), fabric("ib-ndr"),
            note="8 B200s per node on NVLink 5, one NDR NIC per GPU (DGX B200 as shipped)."),
    Cluster("hgx-b200-xdr", "HGX B200 + XDR", _chip("B200"), fabric("nvlink5"), fabric("ib-xdr"),
            note="The same node with ConnectX-8 XDR NICs, one per GPU."),
    Cluster("tpu-v5p", "TPU v5p slice (ICI)", _chip("v5p"), fabric("ici-v5p"),
            note="One v5p slice of up to 6144 chips on the ICI torus; data-center network not modelled."),
)
"""Document 002's two flat assumptions and the corrected systems of the chapter."""

_CLUSTER_INDEX = MappingProxyType({record.key: record for record in CLUSTERS})


def cluster(key: str) -> Cluster:
    """The cluster ``key`` (one of ``CLUSTERS``' keys, e.g. "hgx-h100-ndr"); KeyError lists them."""
    if not isinstance(key, str):
        raise TypeError(f"key must be a cluster key string, got {key!r}")
    if key not in _CLUSTER_INDEX:
        raise KeyError(f"unknown cluster {key!r}; known: {sorted(_CLUSTER_INDEX)}")
    return _CLUSTER_INDEX[key]


def _short_source(source: str) -> str:
    """The URL in ``source``, or the document's file name."""
    found = re.search(r"https?://\S+", source)
    return found.group(0) if found else source.split(" (", 1)[0]


def fabric_table(records: tuple[Fabric, ...] | list[Fabric] | None = None) -> "pd.DataFrame":  # noqa: F821
    """One row per fabric: kind, the quote, its direction convention, GB/s per direction, domain size, source
    (the URL of the bandwidth's page, or document 002's file name).

    Chapter "The batch-size squeeze".
    """
    import pandas as pd

    records = FABRICS_CATALOGUE if records is None else tuple(records) if isinstance(records, (list, tuple)) else ()
    if not records or not all(isinstance(record, Fabric) for record in records):
        raise TypeError(f"records must be a non-empty sequence of Fabric records, got {records!r}")
    return pd.DataFrame({
        "kind": [r.kind for r in records],
        "quoted": [r.bandwidth.quoted for r in records],
        "quote is": ["both directions summed" if r.directions == 2 else "per direction" for r in records],
        "per direction (GB/s)": [r.bytes_per_s / 1e9 for r in records],
        "domain (devices)": [r.domain_devices if r.domain_devices is not None else "" for r in records],
        "source": [_short_source(r.bandwidth.source) for r in records],
    }, index=pd.Index([r.label for r in records], name="fabric"))
