"""The systems of the accelerators in ``vendor_other``: Intel's Gaudi 3 box (HLS-3), its all-to-all scale-up links and
its scale-out Ethernet, as Intel's documentation describes them. Chapters :ref:`ch-batch-squeeze` and
:ref:`ch-sharding`.
"""

from __future__ import annotations

from hwlib.data.literature import NET_RING_STEP_LATENCY
from hwlib.data.records import Cluster, Fabric, cite
from hwlib.data.vendor_other import OTHER_ACCELERATORS
from hwlib.units import GB

_READ = "2026-12-06"

_GAUDI_NETWORK = cite(
    "Intel Gaudi documentation, 'Intel Gaudi Network Configuration', "
    "https://docs.habana.ai/en/latest/Management_and_Monitoring/Network_Configuration/index.html",
    _READ,
)
_GAUDI3 = OTHER_ACCELERATORS[0]

FABRICS: tuple[Fabric, ...] = (
    Fabric(
        key="gaudi3-scale-up",
        name="Gaudi 3 scale-up (RoCE, all-to-all in an HLS-3)",
        kind="scale-up",
        source="vendor",
        bandwidth=_GAUDI_NETWORK(
            525 * GB,
            "B/s",
            "The theoretical peak of scale-up bandwidth from each Gaudi is 21*200Gbps = 21*25 GB/s = 525 GB/s "
            "unidirectional bandwidth",
            "Per direction: 21 of a Gaudi 3's 24 ports of 200 Gb Ethernet, three to each of the seven others in the "
            "box.",
        ),
        directions=1,
        domain_size=_GAUDI_NETWORK(
            8,
            "chips",
            "connect to seven other accelerators inside a single HLS-3 box in an All2All manner",
            "Eight Gaudi 3s a box, each with dedicated links to the seven others.",
        ),
        chip_keys=("gaudi3",),
        aliases=("Gaudi 3 RoCE scale-up", "HLS-3 all-to-all"),
        note="A fully connected mesh of dedicated links, modelled as a switch of that injection bandwidth, as "
        "MI300X's Infinity Fabric is. No step latency is sourced (0).",
    ),
    Fabric(
        key="gaudi3-scale-out",
        name="Gaudi 3 scale-out (3 x 200 GbE RoCE)",
        kind="scale-out",
        source="vendor",
        bandwidth=_GAUDI_NETWORK(
            75 * GB,
            "B/s",
            "The scale-out bandwidth from each Gaudi 3 is 3*200Gbps = 75 GB/s in each direction",
            "The three remaining ports of each Gaudi 3, bundled into the box's OSFP links to the leaf switches.",
        ),
        directions=1,
        latency=NET_RING_STEP_LATENCY,
        chip_keys=("gaudi3",),
        aliases=("Gaudi 3 RoCE scale-out",),
        note="RDMA over Converged Ethernet from ports on the chip itself; its ring step takes NCCL's network model's "
        "latency (Intel's collective library publishes none).",
    ),
)
"""The fabrics of an Intel Gaudi 3 system (HLS-3)."""

CLUSTERS: tuple[Cluster, ...] = (
    Cluster(
        "hls-gaudi3",
        "HLS-3 Gaudi 3 + RoCE",
        _GAUDI3,
        FABRICS[0],
        FABRICS[1],
        note="Intel's reference system: 8 Gaudi 3s a box, all-to-all on 21 of each one's 24 ports of 200 GbE, the "
        "other 3 to the leaf switches (docs.habana.ai, 'Intel Gaudi Network Configuration').",
    ),
)
"""Clusters of the accelerators here. Trainium2's (a Trn2 instance of 16 chips in a 4 x 4 torus of NeuronLink, 200 Gb/s
of EFA per chip) is not here: AWS's own description of the instance was not among the stored pages."""
