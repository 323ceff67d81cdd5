"""The systems of the accelerators in ``vendor_other``: Intel's Gaudi 3 box (HLS-3), its all-to-all scale-up links and
its scale-out Ethernet, as Intel's documentation describes them; and AMD's 8-GPU MI355X platform, its Infinity Fabric
mesh and the AI NICs (AMD Pensando Pollara 400) its published training runs joined nodes with. Chapters
:ref:`ch-batch-squeeze` and :ref:`ch-sharding`.
"""

from __future__ import annotations

from hwlib.data.literature import NET_RING_STEP_LATENCY
from hwlib.data.records import Cluster, Fabric, cite
from hwlib.data.vendor_more import MORE_GPUS
from hwlib.data.vendor_other import OTHER_ACCELERATORS
from hwlib.units import GB

_READ = "2026-12-06"
_GBIT = 1e9 / 8

_GAUDI_NETWORK = cite(
    "Intel Gaudi documentation, 'Intel Gaudi Network Configuration', "
    "https://docs.habana.ai/en/latest/Management_and_Monitoring/Network_Configuration/index.html",
    _READ,
)
_GAUDI3 = OTHER_ACCELERATORS[0]
_MI355X = next(chip for chip in MORE_GPUS if chip.key == "mi355x")
_AMD_CDNA4 = cite(
    "AMD, 'Introducing AMD CDNA 4 Architecture' white paper, https://www.amd.com/content/dam/amd/en/documents/"
    "instinct-tech-docs/white-papers/amd-cdna-4-architecture-whitepaper.pdf (linked from ROCm's 'AMD Instinct MI350 "
    "Series microarchitecture' page; its text read in a third-party dossier that quotes it, search index file "
    "58616972486)",
    _READ,
)
_AMD_IONIC = cite(
    "DPDK documentation, 'IONIC Driver' (AMD's driver for its Pensando adapters, 'Copyright 2018-2025 Advanced Micro "
    "Devices, Inc.'), https://doc.dpdk.org/guides-26.07/nics/ionic.html",
    _READ,
)

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
    Fabric(
        key="infinity-fabric-mi355x",
        name="Infinity Fabric (MI355X)",
        kind="scale-up",
        source="vendor",
        bandwidth=_AMD_CDNA4(
            1075.2 * GB,
            "B/s",
            "P2P aggregate 1075.2 GB/s; '76.8GB/s in each direction'; 'up to 153.6 GB/s ... per AMD Infinity Fabric "
            "link'",
            "Seven x16 links per GPU at 38.4 Gb/s per lane, one to each other GPU: 76.8 GB/s per link per direction, "
            "7 x 153.6 GB/s = 1075.2 GB/s with both directions summed (AMD's convention, as for the MI300X's 896).",
        ),
        directions=2,
        domain_size=_AMD_CDNA4(
            8,
            "chips",
            "'is identical to the prior generation with a fully connected 8-GPU system'",
            "Every GPU has a dedicated link to each of the other seven; an eighth x16 interface is PCIe Gen 5 to the "
            "host.",
        ),
        chip_keys=("mi355x",),
        aliases=("Infinity Fabric 4", "if-mi355x"),
        note="A fully connected mesh: each GPU drives its seven links at once (537.6 GB/s per direction in all), "
        "modelled as a switch of that injection bandwidth, as the MI300X's. No step latency is sourced (0).",
    ),
    Fabric(
        key="pollara-400",
        name="AMD Pensando Pollara 400 AI NIC (400 GbE)",
        kind="scale-out",
        source="vendor",
        bandwidth=_AMD_IONIC(
            400 * _GBIT,
            "B/s",
            "Pollara 400 single-port 400G AI NIC",
            "Per direction: 400 Gb/s Ethernet with RDMA (the ionic RDMA driver, 'AMD Pensando DSC RDMA/RoCE "
            "Support'). One per GPU in AMD's MI355X training runs: their script names eight ('NCCL_IB_HCA=\"ionic_0,"
            "ionic_1,...,ionic_7\"', 'USING_AINIC=1', AMD-AGI/Primus examples/moe_package/"
            "run_deepseek_v2_pretrain_mi355x.sh at commit 3aaf2d5f).",
        ),
        directions=1,
        latency=NET_RING_STEP_LATENCY,
        chip_keys=("mi355x",),
        aliases=("AINIC", "Pollara 400"),
        note="Its ring step takes NCCL's network model's latency (RCCL, a fork of NCCL, publishes none of its own).",
    ),
)
"""The fabrics of an Intel Gaudi 3 system (HLS-3) and of AMD's MI355X platform."""

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
    Cluster(
        "mi355x-node",
        "MI355X platform + Pollara 400",
        _MI355X,
        FABRICS[2],
        FABRICS[3],
        note="AMD's 8-GPU MI355X platform (a universal baseboard of eight OAMs on Infinity Fabric) with one Pollara "
        "400 AI NIC per GPU, as AMD's 4-node DeepSeek-V2 run on 32 MI355Xs used (AMD-AGI/Primus moe_package).",
    ),
)
"""Clusters of the accelerators here. Trainium2's (a Trn2 instance of 16 chips in a 4 x 4 torus of NeuronLink, 200 Gb/s
of EFA per chip) is not here: AWS's own description of the instance was not among the stored pages."""
