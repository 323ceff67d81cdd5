"""Systems as their vendors describe them: fabrics, clusters and the sizes chips are sold in.

What the all-reduce model needs from a :class:`~hwlib.data.records.Fabric` is bandwidth per
chip per direction. Vendors quote it two ways, and each record says which: NVLink and TPU
ICI as a chip's total over all links with both directions summed (``directions=2``; these
are the chips' ``interconnect`` values, reused, not stored twice), NIC line rates per port
per direction (``directions=1``). A line rate is an upper bound: encoding (64b/66b) and
protocol headers take a few per cent. Explained in the chapters "The batch-size squeeze"
and "HBM budgets for training".
"""

from __future__ import annotations

from hwlib.data.literature import ICI_HOP_LATENCY, NET_RING_STEP_LATENCY, NVLINK_RING_STEP_LATENCY
from hwlib.data.records import READ_ON, Cluster, Deployment, Fabric, cite
from hwlib.data.vendor_chips import CHIPS as _CHIPS

GBIT = 1e9 / 8
"""Bytes/s in one Gb/s (NIC line rates are quoted in bits per second)."""

_CHIP = {record.key: record for record in _CHIPS}

_BASEPOD = cite(
    "NVIDIA DGX BasePOD reference architecture, Core Components, https://docs.nvidia.com/dgx-basepod/"
    "reference-architecture-infrastructure-foundation-enterprise-ai/latest/core-components.html")
_NVSWITCH_TABLE = cite("NVIDIA NVLink and NVSwitch page, https://www.nvidia.com/en-us/data-center/nvlink/")
_CONNECTX6 = cite("https://docs.nvidia.com/networking/display/ConnectX6EN/Introduction")
_CONNECTX8 = cite("NVIDIA ConnectX-8 SuperNIC Firmware Release Notes v40.44.0208, Changes and New Features, "
                  "https://docs.nvidia.com/networking/display/connectx8firmwarev40440208/changes+and+new+features")
_TPU_V5P = cite("https://docs.cloud.google.com/tpu/docs/v5p")
_TPU_V5E = cite("https://docs.cloud.google.com/tpu/docs/v5e")
_TPU_V4 = cite("https://docs.cloud.google.com/tpu/docs/v4")
_V4_BOOK = cite("Austin et al., 'How to Scale Your Model', Google DeepMind, https://jax-ml.github.io/scaling-book/tpus/ "
                "(jax-ml/scaling-book, tpus.md, commit 04d8de58), table 'ICI BW/link (one-way, bytes/s)' and 'bidi'")
_TPU_V6E = cite("https://docs.cloud.google.com/tpu/docs/v6e.md.txt")
_NVL72 = cite("https://aiwiki.ai/wiki/nvidia_gb200_nvl72 (third-party)")

_PER_DIRECTION = ("Line rate per port, per direction (full duplex); bits/s divided by 8. Encoding (64b/66b) "
                  "and protocol headers leave a few per cent less for data.")
_NODE_8 = "8 GPUs joined by NVSwitch in one HGX/DGX node; beyond it traffic leaves over the NICs."

def _ici_2d(chip_key: str, label: str, page: object) -> Fabric:
    """A v5e or v6e pod's ICI: the chip's interconnect total over its four ports, a 256-chip 2D torus."""
    return Fabric(key=f"ici-{chip_key}", name=f"{label} ICI", kind="scale-up", source="vendor",
                  bandwidth=_CHIP[chip_key].interconnect, directions=2,
                  domain_size=page(256, "chips", "TPU Pod size | 256 chips",
                                   f"A {chip_key} pod: a 16x16 2D torus ('Interconnect topology | 2D torus')."),
                  chip_keys=(chip_key,), aliases=(f"ICI {chip_key}", f"{chip_key} ICI"), latency=ICI_HOP_LATENCY,
                  note="Per chip over its four ICI ports ('ICI ports per chip | 4'), both directions summed.")


FABRICS: tuple[Fabric, ...] = (
    Fabric(key="nvlink3", name="NVLink 3 (A100)", kind="scale-up", source="vendor",
           bandwidth=_CHIP["a100-80gb"].interconnect, directions=2,
           domain_size=_NVSWITCH_TABLE(
               8, "chips", "Number of GPUs with direct connection / node: Up to 8",
               f"Second-generation NVSwitch (DGX A100 / HGX A100 8-GPU board). {_NODE_8} Seen in a stored "
               "third-party copy of NVIDIA's NVSwitch table (jingchaozhang.github.io/A100-white-paper)."),
           chip_keys=("a100-40gb", "a100-80gb"), aliases=("NVLink 3", "nvlink-a100"),
           latency=NVLINK_RING_STEP_LATENCY,
           note="12 links x 25 GB/s per direction = 300 GB/s per direction per GPU."),
    Fabric(key="nvlink4", name="NVLink 4 (H100/H200)", kind="scale-up", source="vendor",
           bandwidth=_CHIP["h100-sxm"].interconnect, directions=2,
           domain_size=_BASEPOD(8, "chips", "Eight NVIDIA Hopper GPUs. Four NVIDIA NVSwitch chips.",
                                f"DGX H100/H200. {_NODE_8}"),
           chip_keys=("h100-sxm", "h200"), aliases=("NVLink 4", "nvlink-h100"),
           latency=NVLINK_RING_STEP_LATENCY,
           note="18 links x 25 GB/s per direction = 450 GB/s per direction per GPU."),
    Fabric(key="nvlink5", name="NVLink 5 (B200)", kind="scale-up", source="vendor",
           bandwidth=_CHIP["b200"].interconnect, directions=2,
           domain_size=_BASEPOD(8, "chips", "Built with eight NVIDIA B200",
                                f"DGX B200. {_NODE_8} A GB200 NVL72 rack joins 72 GPUs in one NVLink domain."),
           chip_keys=("b200",), aliases=("NVLink 5", "nvlink-b200"),
           latency=NVLINK_RING_STEP_LATENCY,
           note="18 links x 50 GB/s per direction = 900 GB/s per direction per GPU."),
    Fabric(key="ici-v5p", name="TPU v5p ICI", kind="scale-up", source="vendor",
           bandwidth=_CHIP["v5p"].interconnect, directions=2,
           domain_size=_TPU_V5P(
               6144, "chips", "The largest job that can be scheduled is a 96 cube (6144 chip) job.",
               "Largest v5p slice, a 16x16x24 3D torus; a pod has 8960 chips ('Number of chips per pod 8960')."),
           chip_keys=("v5p",), aliases=("ICI v5p", "v5p ICI", "ici"),
           latency=ICI_HOP_LATENCY,
           note="Per chip over all six torus links. An all-reduce reaches it only when it runs over all "
           "three torus axes at once (full cubes with wrap-around); hwlib treats it as the per-direction "
           "bandwidth of one flat ring, an upper bound."),
    Fabric(key="ici-v4", name="TPU v4 ICI", kind="scale-up", source="vendor",
           bandwidth=_V4_BOOK(6 * 2 * _CHIP["v4"].ici_link_bytes_per_s, "B/s", "TPU v4p | 4.5e10 | 9e10",
                              "Six links ('nearest 6 neighbors') of 4.5e10 B/s each way; Google's v4 page gives no "
                              "per-chip ICI figure."),
           directions=2,
           domain_size=_TPU_V4(4096, "chips", "TPU Pod size | 4096 chips",
                               "A v4 pod; slices of AxBxC with 2A=B=C or 2A=2B=C, each a multiple of 4, can be a 3D "
                               "torus ('can be configured as a 3D torus')."),
           chip_keys=("v4",), aliases=("ICI v4", "v4 ICI"), latency=ICI_HOP_LATENCY,
           note="Per chip over its six ICI links, both directions summed."),
    *(_ici_2d(key, label, cite_page) for key, label, cite_page in (("v5e", "TPU v5e", _TPU_V5E),
                                                                   ("v6e", "TPU v6e", _TPU_V6E))),
    Fabric(key="nvlink5-nvl72", name="NVLink 5 (GB200 NVL72)", kind="scale-up", source="vendor",
           bandwidth=_CHIP["b200"].interconnect, directions=2,
           domain_size=_NVL72(72, "chips", "72 Blackwell GPUs and 36 Grace CPUs ... joined into one NVLink domain",
                              "Third-party summary of NVIDIA's GB200 NVL72 (aiwiki.ai); NVIDIA's own product page was "
                              "not among the stored copies. NVIDIA's NVLink docs state 'Support for up to 576 GPUs in "
                              "a single NVLink domain'."),
           chip_keys=("b200",), aliases=("NVL72", "nvlink-nvl72"), latency=NVLINK_RING_STEP_LATENCY,
           note="Each GPU's NVLink 5 as on the B200 (18 links x 50 GB/s per direction), through the rack's NVLink "
           "switch trays to all 72."),
    Fabric(key="ib-hdr", name="InfiniBand HDR (200 Gb/s)", kind="scale-out", source="vendor",
           bandwidth=_CONNECTX6(200 * GBIT, "B/s", "up to two ports of 200Gb/s for InfiniBand and Ethernet",
                                f"ConnectX-6 VPI. {_PER_DIRECTION} A DGX A100 has eight single-port HDR NICs "
                                "for its compute fabric, one per GPU. NVIDIA's switch manual gives the same rate in "
                                "its title, 'QM87xx 1U HDR 200Gb/s InfiniBand Switch Systems User Manual'."),
           directions=1, latency=NET_RING_STEP_LATENCY, aliases=("HDR", "IB HDR", "hdr")),
    Fabric(key="ib-ndr", name="InfiniBand NDR (400 Gb/s)", kind="scale-out", source="vendor",
           bandwidth=_BASEPOD(400 * GBIT, "B/s",
                              "eight single-port NVIDIA ConnectX-7 VPI ... up to 400 Gb/s InfiniBand/Ethernet",
                              f"DGX H100/H200 and DGX B200: one ConnectX-7 per GPU. {_PER_DIRECTION}"),
           directions=1, latency=NET_RING_STEP_LATENCY, aliases=("NDR", "IB NDR", "ndr")),
    Fabric(key="ib-xdr", name="InfiniBand XDR (800 Gb/s)", kind="scale-out", source="vendor",
           bandwidth=_CONNECTX8(800 * GBIT, "B/s",
                                "ConnectX-8 SuperNIC supports 800Gb/s or XDR IB or 2 x 400GbE link speeds",
                                f"{_PER_DIRECTION} The DGX B200 ships with NDR ConnectX-7 NICs; XDR is the "
                                "ConnectX-8 upgrade."),
           directions=1, latency=NET_RING_STEP_LATENCY, aliases=("XDR", "IB XDR", "xdr")),
    Fabric(key="roce-400", name="RoCE 400 GbE", kind="scale-out", source="vendor",
           bandwidth=_BASEPOD(400 * GBIT, "B/s", "up to 400 Gb/s InfiniBand/Ethernet",
                              "The same ConnectX-7 ports run as 400 Gb/s Ethernet with RDMA over Converged "
                              f"Ethernet. {_PER_DIRECTION}"),
           directions=1, latency=NET_RING_STEP_LATENCY, aliases=("RoCE", "400GbE", "roce")),
)
"""Every vendor fabric: scale-up domains first, then scale-out networks."""

_FABRIC = {record.key: record for record in FABRICS}

CLUSTERS: tuple[Cluster, ...] = (
    Cluster("hgx-a100-hdr", "HGX A100 + HDR", _CHIP["a100-80gb"], _FABRIC["nvlink3"], _FABRIC["ib-hdr"],
            note="8 A100s per node on NVLink 3, one HDR NIC per GPU (DGX A100 / SuperPOD)."),
    Cluster("hgx-h100-ndr", "HGX H100 + NDR", _CHIP["h100-sxm"], _FABRIC["nvlink4"], _FABRIC["ib-ndr"],
            note="8 H100s per node on NVLink 4, one NDR NIC per GPU (DGX H100)."),
    Cluster("hgx-b200-ndr", "HGX B200 + NDR", _CHIP["b200"], _FABRIC["nvlink5"], _FABRIC["ib-ndr"],
            note="8 B200s per node on NVLink 5, one NDR NIC per GPU (DGX B200 as shipped)."),
    Cluster("hgx-b200-xdr", "HGX B200 + XDR", _CHIP["b200"], _FABRIC["nvlink5"], _FABRIC["ib-xdr"],
            note="The same node with ConnectX-8 XDR NICs, one per GPU."),
    Cluster("gb200-nvl72-ndr", "GB200 NVL72 + NDR", _CHIP["b200"], _FABRIC["nvlink5-nvl72"], _FABRIC["ib-ndr"],
            note="72 Blackwell GPUs in one NVLink domain, racks joined by one 400 Gb/s NIC per GPU. The GPU is "
            "hwlib's B200 record (GB200's own GPUs are reported with 186 to 192 GB of HBM, not sourced here)."),
    Cluster("tpu-v4", "TPU v4 slice (ICI)", _CHIP["v4"], _FABRIC["ici-v4"],
            note="One v4 slice of up to 4096 chips on its 3D torus; Multislice not modelled."),
    Cluster("tpu-v5e", "TPU v5e slice (ICI)", _CHIP["v5e"], _FABRIC["ici-v5e"],
            note="One v5e slice of up to 256 chips on its 2D torus; slices are joined by the data-centre network "
            "(Multislice), not modelled."),
    Cluster("tpu-v6e", "TPU v6e slice (ICI)", _CHIP["v6e"], _FABRIC["ici-v6e"],
            note="One v6e slice of up to 256 chips on its 2D torus; Multislice not modelled."),
    Cluster("tpu-v5p", "TPU v5p slice (ICI)", _CHIP["v5p"], _FABRIC["ici-v5p"],
            note="One v5p slice of up to 6144 chips on the ICI torus; the data-centre network is not modelled."),
)
"""The real systems of the chapter "The batch-size squeeze"."""

_V5E_PAGE = "https://docs.cloud.google.com/tpu/docs/v5e"
_V6E_PAGE = "https://docs.cloud.google.com/tpu/docs/v6e"
_V5P_PAGE = "https://docs.cloud.google.com/tpu/docs/v5p-training"
_MULTISLICE = "Multislice (https://cloud.google.com/tpu/docs/multislice-introduction)"
_HGX = "https://www.nvidia.com/en-us/data-center/hgx/"
_POD2D = (1, 4, 8, 16, 32, 64, 128, 256)
_TOPO2D = ("1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16")
_V4_CHIPS = (4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
_V4_TOPO = ("2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8", "8x8x16", "8x16x16", "16x16x16")
_V5P_CHIPS = (4, 8, 32, 64, 128, 256, 512, 1024, 2048, 4096, 6144)
_V5P_TOPO = ("2x2x1", "2x2x2", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8", "8x8x16", "8x16x16", "16x16x16",
             "16x16x24")


def _nodes(key: str, chip_key: str, source: str, quoted: str) -> Deployment:
    return Deployment(
        key=key, kind="node", chip_keys=(chip_key,), sizes=(8,), names=("1 x 8-GPU node",),
        topologies=("8 GPUs, NVLink/Infinity Fabric",), beyond="8-GPU nodes joined by the cluster network",
        source=source, read_on=READ_ON, quoted=quoted,
        note="Single GPUs and smaller VMs are also rented; a training job of several GPUs is normally "
        "planned in whole 8-GPU nodes.")


DEPLOYMENTS: tuple[Deployment, ...] = (
    Deployment(key="v5e-slices", kind="slice", chip_keys=("v5e",), sizes=_POD2D,
               names=tuple(f"v5litepod-{n}" for n in _POD2D), topologies=_TOPO2D,
               beyond=f"256-chip slices joined by {_MULTISLICE}", source=_V5E_PAGE, read_on=READ_ON,
               quoted="Topology | TPU chips | Hosts: 1x1 | 1, 2x2 | 4, 2x4 | 8, 4x4 | 16, 4x8 | 32, 8x8 | 64, "
               "8x16 | 128, 16x16 | 256",
               note="Rows as in the page's localised copies (ko, ja, zh-cn), whose numerals are identical."),
    Deployment(key="v6e-slices", kind="slice", chip_keys=("v6e",), sizes=_POD2D,
               names=tuple(f"v6e-{n}" for n in _POD2D), topologies=_TOPO2D,
               beyond=f"256-chip slices joined by {_MULTISLICE}", source=_V6E_PAGE, read_on=READ_ON,
               quoted="The following table shows the 2D slice shapes that are supported for v6e: 1x1 (1 chip), "
               "2x2 (4), 2x4 (8), 4x4 (16), 4x8 (32), 8x8 (64), 8x16 (128), 16x16 (256)"),
    Deployment(key="v5p-slices", kind="slice", chip_keys=("v5p",), sizes=_V5P_CHIPS,
               names=tuple(f"v5p-{2 * n}" for n in _V5P_CHIPS), topologies=_V5P_TOPO,
               beyond=f"6144-chip slices joined by {_MULTISLICE}", source=_V5P_PAGE, read_on=READ_ON,
               quoted="The following table shows the most common single-slice shapes supported with v5p, plus "
               "most (but not all) full cube shapes greater than 1 cube. | 2x2x1 | 8 | 4 | ... | 2x2x2 | 16 | 8 "
               "| ... | 2x4x4 | 64 | 32 | ... | 16x16x24 | 12288 | 6144 |",
               note="The table lists no 16-chip shape (it goes 2x2x2, then 2x4x4): a 2x2x4 slice can be "
               "requested (the scaling book mentions one) but is not among the common shapes, so a 16-chip "
               "answer rounds up to 32 chips here. The names count TensorCores, two per v5p chip."),
    Deployment(key="v4-slices", kind="slice", chip_keys=("v4",), sizes=_V4_CHIPS,
               names=tuple(f"v4-{2 * n}" for n in _V4_CHIPS), topologies=_V4_TOPO,
               beyond=f"4096-chip pods joined by {_MULTISLICE}",
               source="https://cloud.google.com/tpu/docs/types-topologies?hl=zh-cn", read_on=READ_ON,
               quoted="v4 拓扑的表示法为 AxBxC,其中 A<=B<=C,且 A、B、C 均为 <= 4 或 4 的所有整数倍数 ... "
               "2x2x4(16 个芯片,每个芯片 2 个 TensorCore)",
               note="Google's localised page (zh-cn; the ko copy says the same): 'a v4 topology is AxBxC with A<=B<=C, "
               "and A, B, C all <= 4 or all integer multiples of 4', '2x2x4 (16 chips, 2 TensorCores each)'; the "
               "English page was not among the stored copies. The page states the rule, not a table: these are its "
               "most cube-like shapes for each power of two up to the pod ('TPU Pod size | 4096 chips', "
               "docs.cloud.google.com/tpu/docs/v4). Names count TensorCores, two per chip."),
    _nodes("hgx-a100-40gb", "a100-40gb", _HGX, "HGX A100: 8 GPUs per baseboard"),
    _nodes("hgx-a100-80gb", "a100-80gb", _HGX, "HGX A100: 8 GPUs per baseboard"),
    _nodes("hgx-h100", "h100-sxm", _HGX, "HGX H100: 8 GPUs per baseboard"),
    _nodes("hgx-h200", "h200", _HGX, "HGX H200: 8 GPUs per baseboard"),
    _nodes("dgx-b200", "b200", "https://www.nvidia.com/en-us/data-center/dgx-b200/", "DGX B200: 8 B200 GPUs"),
    _nodes("mi300x-platform", "mi300x", "https://www.amd.com/en/products/accelerators/instinct/mi300/platform.html",
           "AMD Instinct MI300X Platform: 8 MI300X GPUs"),
)
"""Real deployment sizes (TPU slice shapes, 8-GPU nodes), each with its source."""
