"""Systems as their vendors describe them: fabrics, clusters and the sizes chips are sold in.

What the all-reduce model needs from a :class:`~hwlib.data.records.Fabric` is bandwidth per
chip per direction. Vendors quote it two ways, and each record says which: NVLink and TPU
ICI as a chip's total over all links with both directions summed (``directions=2``; these
are the chips' ``interconnect`` values, reused, not stored twice), NIC line rates per port
per direction (``directions=1``). A line rate is an upper bound: encoding (64b/66b) and
protocol headers take a few per cent. Explained in the chapters :ref:`ch-batch-squeeze`
and :ref:`ch-hbm-budgets`.
"""

from __future__ import annotations

from hwlib.data.literature import (
    COLLNET_NET_LATENCY,
    ICI_HOP_LATENCY,
    NET_RING_STEP_LATENCY,
    NVLINK_RING_STEP_LATENCY,
    NVLS_LATENCY,
)
from hwlib.data.records import Fabric, cite
from hwlib.data.vendor_chips import CHIPS as _CHIPS

GBIT = 1e9 / 8
"""Bytes/s in one Gb/s (NIC line rates are quoted in bits per second)."""

_CHIP = {record.key: record for record in _CHIPS}

_BASEPOD = cite(
    "NVIDIA DGX BasePOD reference architecture, Core Components, https://docs.nvidia.com/dgx-basepod/"
    "reference-architecture-infrastructure-foundation-enterprise-ai/latest/core-components.html"
)
_NVSWITCH_TABLE = cite("NVIDIA NVLink and NVSwitch page, https://www.nvidia.com/en-us/data-center/nvlink/")
_CONNECTX6 = cite("https://docs.nvidia.com/networking/display/ConnectX6EN/Introduction")
_CONNECTX8 = cite(
    "NVIDIA ConnectX-8 SuperNIC Firmware Release Notes v40.44.0208, Changes and New Features, "
    "https://docs.nvidia.com/networking/display/connectx8firmwarev40440208/changes+and+new+features"
)
_TPU_V5P = cite("https://docs.cloud.google.com/tpu/docs/v5p")
_TPU_V5E = cite("https://docs.cloud.google.com/tpu/docs/v5e")
_TPU_V4 = cite("https://docs.cloud.google.com/tpu/docs/v4")
_V4_BOOK = cite(
    "Austin et al., 'How to Scale Your Model', Google DeepMind, https://jax-ml.github.io/scaling-book/tpus/ "
    "(jax-ml/scaling-book, tpus.md, commit 04d8de58), table 'ICI BW/link (one-way, bytes/s)' and 'bidi'"
)
_TPU_V6E = cite("https://docs.cloud.google.com/tpu/docs/v6e.md.txt")
_NVL72 = cite("https://aiwiki.ai/wiki/nvidia_gb200_nvl72 (third-party)")
_NVIDIA_EXEMPLAR = cite(
    "NVIDIA/exemplar-performance, microbenchmarks/nccl/README.md (commit b4ac983a), sample all_reduce_perf "
    "output on 8 x NVIDIA H100 80GB HBM3 in one DGX H100"
)
_COREWEAVE_NCCL = cite(
    "coreweave/nccl-tests, README.md (commit 0120901a), CoreWeave's published nccl-tests results (a cloud "
    "provider's repository: third party to NVIDIA)"
)
_AMD_CDNA3 = cite(
    "AMD, 'Introducing AMD CDNA 3 Architecture' white paper (PID 2258402-B), Table 2, https://www.amd.com/content/"
    "dam/amd/en/documents/instinct-tech-docs/white-papers/amd-cdna-3-white-paper.pdf (a stored text copy)"
)
_TPU7X_PAGE = cite("https://docs.cloud.google.com/tpu/docs/tpu7x")

_PER_DIRECTION = (
    "Line rate per port, per direction (full duplex); bits/s divided by 8. Encoding (64b/66b) "
    "and protocol headers leave a few per cent less for data."
)
_NODE_8 = "8 GPUs joined by NVSwitch in one HGX/DGX node; beyond it traffic leaves over the NICs."
_NVLS_H100 = _NVIDIA_EXEMPLAR(
    274.38e9,
    "B/s",
    "8589934592    2147483648     float     sum      -1    31307  274.38  480.16",
    "An 8 GiB all-reduce on 8 H100s: algbw 274.38 GB/s (busbw 480.16 GB/s), above what a ring of 450 GB/s "
    "links allows (450 x 8 / 14 = 257 GB/s algbw): NCCL's default NVLink SHARP (NVLS) reduces in the "
    "NVSwitch. The README names neither the algorithm nor the NCCL version; NCCL's maintainer gives the "
    "same figures for NVLS on 8 H100s ('a peak busBw of ~480GB/s (algbw ~275GB/s)', NVIDIA/nccl-tests issue "
    "212), and Azure's ND H100 v5 results print 478.87 GB/s busbw for 8 GB with 'the NVLS algorithm' (NCCL "
    "2.18.5).",
)


def _ici_2d(chip_key: str, label: str, page: object) -> Fabric:
    """A v5e or v6e pod's ICI: the chip's interconnect total over its four ports, a 256-chip 2D torus."""
    return Fabric(
        key=f"ici-{chip_key}",
        name=f"{label} ICI",
        kind="scale-up",
        source="vendor",
        bandwidth=_CHIP[chip_key].interconnect,
        directions=2,
        domain_size=page(
            256,
            "chips",
            "TPU Pod size | 256 chips",
            f"A {chip_key} pod: a 16x16 2D torus ('Interconnect topology | 2D torus').",
        ),
        chip_keys=(chip_key,),
        aliases=(f"ICI {chip_key}", f"{chip_key} ICI"),
        latency=ICI_HOP_LATENCY,
        topology="torus",
        note="Per chip over its four ICI ports ('ICI ports per chip | 4'), both directions summed.",
    )


FABRICS: tuple[Fabric, ...] = (
    Fabric(
        key="nvlink3",
        name="NVLink 3 (A100)",
        kind="scale-up",
        source="vendor",
        bandwidth=_CHIP["a100-80gb"].interconnect,
        directions=2,
        domain_size=_NVSWITCH_TABLE(
            8,
            "chips",
            "Number of GPUs with direct connection / node: Up to 8",
            f"Second-generation NVSwitch (DGX A100 / HGX A100 8-GPU board). {_NODE_8} Seen in a stored "
            "third-party copy of NVIDIA's NVSwitch table (jingchaozhang.github.io/A100-white-paper).",
        ),
        chip_keys=("a100-40gb", "a100-80gb"),
        aliases=("NVLink 3", "nvlink-a100"),
        latency=NVLINK_RING_STEP_LATENCY,
        note="12 links x 25 GB/s per direction = 300 GB/s per direction per GPU.",
    ),
    Fabric(
        key="nvlink4",
        name="NVLink 4 (H100/H200)",
        kind="scale-up",
        source="vendor",
        bandwidth=_CHIP["h100-sxm"].interconnect,
        directions=2,
        domain_size=_BASEPOD(
            8, "chips", "Eight NVIDIA Hopper GPUs. Four NVIDIA NVSwitch chips.", f"DGX H100/H200. {_NODE_8}"
        ),
        chip_keys=("h100-sxm", "h200"),
        aliases=("NVLink 4", "nvlink-h100"),
        latency=NVLINK_RING_STEP_LATENCY,
        in_network_reduction=_NVLS_H100,
        reduction_latency=NVLS_LATENCY,
        note="18 links x 25 GB/s per direction = 450 GB/s per direction per GPU.",
    ),
    Fabric(
        key="nvlink4-h800",
        name="NVLink 4 (H800)",
        kind="scale-up",
        source="vendor",
        bandwidth=_CHIP["h800-sxm"].interconnect,
        directions=2,
        domain_size=_BASEPOD(
            8, "chips", "Eight NVIDIA Hopper GPUs. Four NVIDIA NVSwitch chips.", f"HGX H800, as DGX H100. {_NODE_8}"
        ),
        chip_keys=("h800-sxm",),
        aliases=("nvlink-h800",),
        latency=NVLINK_RING_STEP_LATENCY,
        in_network_reduction=_NVLS_H100,
        reduction_latency=NVLS_LATENCY,
        note="400 GB/s both ways per GPU, 200 GB/s per direction, against the H100's 450.",
    ),
    Fabric(
        key="nvlink5",
        name="NVLink 5 (B200)",
        kind="scale-up",
        source="vendor",
        bandwidth=_CHIP["b200"].interconnect,
        directions=2,
        domain_size=_BASEPOD(
            8,
            "chips",
            "Built with eight NVIDIA B200",
            f"DGX B200. {_NODE_8} A GB200 NVL72 rack joins 72 GPUs in one NVLink domain.",
        ),
        chip_keys=("b200",),
        aliases=("NVLink 5", "nvlink-b200"),
        latency=NVLINK_RING_STEP_LATENCY,
        in_network_reduction=_COREWEAVE_NCCL(
            423.16e9,
            "B/s",
            "8589934592    2147483648     float     sum      -1    20299  423.16  834.57",
            "The NVLink 5 NVSwitch as measured in a GB200 NVL72 rack (72 GPUs), NCCL 2.26.2: an 8 GiB all-reduce "
            "at algbw 423.16 GB/s, above a "
            "ring's 900 x 72 / 142 = 456 GB/s only by protocol losses; the README does not name the algorithm. "
            "NCCL's own tuning code gives NVLS an efficiency for Blackwell ('nvlsEfficiency', 0.74).",
        ),
        reduction_latency=NVLS_LATENCY,
        note="18 links x 50 GB/s per direction = 900 GB/s per direction per GPU.",
    ),
    Fabric(
        key="ici-v5p",
        name="TPU v5p ICI",
        kind="scale-up",
        source="vendor",
        bandwidth=_CHIP["v5p"].interconnect,
        directions=2,
        domain_size=_TPU_V5P(
            6144,
            "chips",
            "The largest job that can be scheduled is a 96 cube (6144 chip) job.",
            "Largest v5p slice, a 16x16x24 3D torus; a pod has 8960 chips ('Number of chips per pod 8960').",
        ),
        chip_keys=("v5p",),
        aliases=("ICI v5p", "v5p ICI", "ici"),
        latency=ICI_HOP_LATENCY,
        topology="torus",
        note="Per chip over all six torus links. An all-reduce reaches it only when it runs over all "
        "three torus axes at once (full cubes with wrap-around); hwlib treats it as the per-direction "
        "bandwidth of one flat ring, an upper bound.",
    ),
    Fabric(
        key="ici-v4",
        name="TPU v4 ICI",
        kind="scale-up",
        source="vendor",
        bandwidth=_V4_BOOK(
            6 * 2 * _CHIP["v4"].ici_link_bytes_per_s,
            "B/s",
            "TPU v4p | 4.5e10 | 9e10",
            "Six links ('nearest 6 neighbors') of 4.5e10 B/s each way; Google's v4 page gives no per-chip ICI figure.",
        ),
        directions=2,
        domain_size=_TPU_V4(
            4096,
            "chips",
            "TPU Pod size | 4096 chips",
            "A v4 pod; slices of AxBxC with 2A=B=C or 2A=2B=C, each a multiple of 4, can be a 3D "
            "torus ('can be configured as a 3D torus').",
        ),
        chip_keys=("v4",),
        aliases=("ICI v4", "v4 ICI"),
        latency=ICI_HOP_LATENCY,
        topology="torus",
        note="Per chip over its six ICI links, both directions summed.",
    ),
    *(
        _ici_2d(key, label, cite_page)
        for key, label, cite_page in (("v5e", "TPU v5e", _TPU_V5E), ("v6e", "TPU v6e", _TPU_V6E))
    ),
    Fabric(
        key="nvlink5-nvl72",
        name="NVLink 5 (GB200 NVL72)",
        kind="scale-up",
        source="vendor",
        bandwidth=_NVL72(
            1.8e12,
            "B/s",
            "The NVL72 keeps NVLink continuous across the whole rack at 1.8 TB/s per GPU",
            "Per GPU, both directions summed, as the B200's 18 NVLink 5 links give it (the rack's '130 TB/s of "
            "aggregate NVLink bandwidth' over its 72 GPUs, in the same summary, a third-party "
            "summary of NVIDIA's GB200 NVL72 page).",
        ),
        directions=2,
        domain_size=_NVL72(
            72,
            "chips",
            "72 Blackwell GPUs and 36 Grace CPUs ... joined into one NVLink domain",
            "Third-party summary of NVIDIA's GB200 NVL72 (aiwiki.ai); NVIDIA's own product page was "
            "not among the stored copies. NVIDIA's NVLink docs state 'Support for up to 576 GPUs in "
            "a single NVLink domain'.",
        ),
        chip_keys=("b200",),
        aliases=("NVL72", "nvlink-nvl72"),
        latency=NVLINK_RING_STEP_LATENCY,
        in_network_reduction=_COREWEAVE_NCCL(
            423.16e9,
            "B/s",
            "8589934592    2147483648     float     sum      -1    20299  423.16  834.57",
            "GB200 NVL72, one rack (72 GPUs), NCCL 2.26.2: an 8 GiB all-reduce at algbw 423.16 GB/s, above a "
            "ring's 900 x 72 / 142 = 456 GB/s only by protocol losses; the README does not name the algorithm. "
            "NCCL's own tuning code gives NVLS an efficiency for Blackwell ('nvlsEfficiency', 0.74).",
        ),
        reduction_latency=NVLS_LATENCY,
        note="Each GPU's NVLink 5 as on the B200 (18 links x 50 GB/s per direction), through the rack's NVLink "
        "switch trays to all 72.",
    ),
    Fabric(
        key="infinity-fabric-mi300x",
        name="Infinity Fabric (MI300X)",
        kind="scale-up",
        source="vendor",
        bandwidth=_AMD_CDNA3(
            896e9,
            "B/s",
            "P2P RING PEAK AGGREGATE I/O BANDWIDTH ... 896 GB/s (8 GPUs)",
            "Seven x16 Infinity Fabric links per GPU at 32 Gb/s per lane ('7 x16 AMD Infinity Fabric links', "
            "'operate at up to 32Gbps'): 64 GB/s per link per direction, 7 x 128 GB/s = 896 GB/s with both "
            "directions summed (derived; the paper prints no per-link figure).",
        ),
        directions=2,
        domain_size=_AMD_CDNA3(
            8,
            "chips",
            "these seven high-bandwidth and low-latency AMD Infinity Fabric links to form a fully connected "
            "8-GPU system",
            "Every GPU has a dedicated link to each of the other seven.",
        ),
        chip_keys=("mi300x",),
        aliases=("Infinity Fabric", "xGMI", "if-mi300x"),
        note="A fully connected mesh: each GPU drives its seven links at once (448 GB/s per direction in all), "
        "modelled as a switch of that injection bandwidth. No step latency is sourced (0).",
    ),
    Fabric(
        key="ici-tpu7x",
        name="TPU7x ICI",
        kind="scale-up",
        source="vendor",
        bandwidth=_CHIP["tpu7x"].interconnect,
        directions=2,
        domain_size=_TPU7X_PAGE(
            9216, "chips", "| Number of chips per pod | 8960 | 256 | 9216 |", "TPU7x column: a 9216-chip pod."
        ),
        chip_keys=("tpu7x",),
        aliases=("ICI tpu7x", "Ironwood ICI"),
        latency=ICI_HOP_LATENCY,
        topology="torus",
        note="Per chip, both directions summed. The torus's links come from the scaling book (six of 9e10 B/s each "
        "way: its 'TPU7x | 9.0e10 | 1.8e11' row, whose pod is '4x4x576'), which sums to 1080 GB/s against the "
        "page's 1200: the two sources do not agree, and the step model uses the links. The hop latency is "
        "v5e's, the only one sourced.",
    ),
    Fabric(
        key="ib-hdr",
        name="InfiniBand HDR (200 Gb/s)",
        kind="scale-out",
        source="vendor",
        bandwidth=_CONNECTX6(
            200 * GBIT,
            "B/s",
            "up to two ports of 200Gb/s for InfiniBand and Ethernet",
            f"ConnectX-6 VPI. {_PER_DIRECTION} A DGX A100 has eight single-port HDR NICs "
            "for its compute fabric, one per GPU. NVIDIA's switch manual gives the same rate in "
            "its title, 'QM87xx 1U HDR 200Gb/s InfiniBand Switch Systems User Manual'.",
        ),
        directions=1,
        latency=NET_RING_STEP_LATENCY,
        aliases=("HDR", "IB HDR", "hdr"),
    ),
    Fabric(
        key="ib-ndr",
        name="InfiniBand NDR (400 Gb/s)",
        kind="scale-out",
        source="vendor",
        bandwidth=_BASEPOD(
            400 * GBIT,
            "B/s",
            "eight single-port NVIDIA ConnectX-7 VPI ... up to 400 Gb/s InfiniBand/Ethernet",
            f"DGX H100/H200 and DGX B200: one ConnectX-7 per GPU. {_PER_DIRECTION}",
        ),
        directions=1,
        latency=NET_RING_STEP_LATENCY,
        in_network_reduction=_COREWEAVE_NCCL(
            195.31e9,
            "B/s",
            "8589934592    2147483648     float     sum      -1    43980  195.31  386.56",
            "64 H100s in 8 nodes (8 InfiniBand HCAs each) with NCCL's SHARP path ('NCCL_ALGO=COLLNETCHAIN', "
            "'NCCL_COLLNET_ENABLE=1' in the run's manifest): an 8 GiB all-reduce at algbw 195.31 GB/s. The log's "
            "header says maxBytes 2147483648 yet prints 8 GiB rows, and it prints no NCCL version; no run without "
            "SHARP is on the same page. NVIDIA's SHARP documentation: Quantum-2 switches run 'streaming "
            "aggregation trees'.",
        ),
        reduction_latency=COLLNET_NET_LATENCY,
        aliases=("NDR", "IB NDR", "ndr"),
    ),
    Fabric(
        key="ib-xdr",
        name="InfiniBand XDR (800 Gb/s)",
        kind="scale-out",
        source="vendor",
        bandwidth=_CONNECTX8(
            800 * GBIT,
            "B/s",
            "ConnectX-8 SuperNIC supports 800Gb/s or XDR IB or 2 x 400GbE link speeds",
            f"{_PER_DIRECTION} The DGX B200 ships with NDR ConnectX-7 NICs; XDR is the ConnectX-8 upgrade.",
        ),
        directions=1,
        latency=NET_RING_STEP_LATENCY,
        aliases=("XDR", "IB XDR", "xdr"),
    ),
    Fabric(
        key="roce-400",
        name="RoCE 400 GbE",
        kind="scale-out",
        source="vendor",
        bandwidth=_BASEPOD(
            400 * GBIT,
            "B/s",
            "up to 400 Gb/s InfiniBand/Ethernet",
            f"The same ConnectX-7 ports run as 400 Gb/s Ethernet with RDMA over Converged Ethernet. {_PER_DIRECTION}",
        ),
        directions=1,
        latency=NET_RING_STEP_LATENCY,
        aliases=("RoCE", "400GbE", "roce"),
    ),
)
"""Every vendor fabric: scale-up domains first, then scale-out networks."""
