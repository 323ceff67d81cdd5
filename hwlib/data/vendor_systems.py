"""Real systems built from the vendor chips and fabrics: clusters (a chip, its scale-up domain, the
network beyond it) and deployments (the slice or node sizes a chip is sold in), from NVIDIA's and
Google's pages. Explained in the chapters :ref:`ch-batch-squeeze` and :ref:`ch-sharding`.
"""

from __future__ import annotations

from hwlib.data.records import READ_ON, Cluster, Deployment, cite
from hwlib.data.vendor_chips import CHIPS as _CHIPS
from hwlib.data.vendor_dcn import DCN_FABRICS, V5P_MULTISLICE_CHIPS
from hwlib.data.vendor_dcn import READ_ON as _DCN_READ_ON
from hwlib.data.vendor_fabrics import FABRICS

_CHIP = {record.key: record for record in _CHIPS}
_FABRIC = {record.key: record for record in FABRICS}
_DCN = {record.chip_keys[0]: record for record in DCN_FABRICS}

CLUSTERS: tuple[Cluster, ...] = (
    Cluster(
        "hgx-a100-hdr",
        "HGX A100 + HDR",
        _CHIP["a100-80gb"],
        _FABRIC["nvlink3"],
        _FABRIC["ib-hdr"],
        note="8 A100s per node on NVLink 3, one HDR NIC per GPU (DGX A100 / SuperPOD).",
    ),
    Cluster(
        "hgx-a100-40gb-hdr",
        "HGX A100 40GB + HDR",
        _CHIP["a100-40gb"],
        _FABRIC["nvlink3"],
        _FABRIC["ib-hdr"],
        note="8 A100 40GB per node on NVLink 3, one HDR NIC per GPU (DGX A100 / SuperPOD).",
    ),
    Cluster(
        "hgx-h100-ndr",
        "HGX H100 + NDR",
        _CHIP["h100-sxm"],
        _FABRIC["nvlink4"],
        _FABRIC["ib-ndr"],
        note="8 H100s per node on NVLink 4, one NDR NIC per GPU (DGX H100).",
    ),
    Cluster(
        "hgx-h800-ndr",
        "HGX H800 + NDR",
        _CHIP["h800-sxm"],
        _FABRIC["nvlink4-h800"],
        _FABRIC["ib-ndr"],
        note="8 H800s per node on NVLink, 'eight 400G Infiniband (IB) CX7 NICs' per node (arXiv:2505.09343, Sec. "
        "4.1), one per GPU: DeepSeek-V3's cluster of 2,048 (arXiv:2412.19437, Sec. 3.1).",
    ),
    Cluster(
        "hgx-h200-ndr",
        "HGX H200 + NDR",
        _CHIP["h200"],
        _FABRIC["nvlink4"],
        _FABRIC["ib-ndr"],
        note="8 H200s per node on NVLink 4, one NDR NIC per GPU (DGX H200).",
    ),
    Cluster(
        "mi300x-node",
        "MI300X platform (8 GPUs)",
        _CHIP["mi300x"],
        _FABRIC["infinity-fabric-mi300x"],
        note="One AMD Instinct MI300X platform: 8 GPUs fully connected by Infinity Fabric; no scale-out network "
        "is sourced, so the cluster is one node.",
    ),
    Cluster(
        "hgx-b200-ndr",
        "HGX B200 + NDR",
        _CHIP["b200"],
        _FABRIC["nvlink5"],
        _FABRIC["ib-ndr"],
        note="8 B200s per node on NVLink 5, one NDR NIC per GPU (DGX B200 as shipped).",
    ),
    Cluster(
        "hgx-b200-xdr",
        "HGX B200 + XDR",
        _CHIP["b200"],
        _FABRIC["nvlink5"],
        _FABRIC["ib-xdr"],
        note="The same node with ConnectX-8 XDR NICs, one per GPU.",
    ),
    Cluster(
        "gb200-nvl72-ndr",
        "GB200 NVL72 + NDR",
        _CHIP["b200"],
        _FABRIC["nvlink5-nvl72"],
        _FABRIC["ib-ndr"],
        note="72 Blackwell GPUs in one NVLink domain, racks joined by one 400 Gb/s NIC per GPU. The GPU is "
        "hwlib's B200 record (GB200's own GPUs are reported with 186 to 192 GB of HBM, not sourced here).",
    ),
    Cluster(
        "tpu-v4",
        "TPU v4 slice (ICI)",
        _CHIP["v4"],
        _FABRIC["ici-v4"],
        note="One v4 slice of up to 4096 chips on its 3D torus; Multislice not modelled.",
    ),
    Cluster(
        "tpu-v5e",
        "TPU v5e slice (ICI)",
        _CHIP["v5e"],
        _FABRIC["ici-v5e"],
        note="One v5e slice of up to 256 chips on its 2D torus; slices are joined by the data-centre network "
        "(Multislice), not modelled.",
    ),
    Cluster(
        "tpu-v6e",
        "TPU v6e slice (ICI)",
        _CHIP["v6e"],
        _FABRIC["ici-v6e"],
        note="One v6e slice of up to 256 chips on its 2D torus; Multislice not modelled.",
    ),
    Cluster(
        "tpu-v5p",
        "TPU v5p slice (ICI)",
        _CHIP["v5p"],
        _FABRIC["ici-v5p"],
        note="One v5p slice of up to 6144 chips on the ICI torus; the data-centre network is not modelled.",
    ),
    Cluster(
        "tpu-7x",
        "TPU7x slice (ICI)",
        _CHIP["tpu7x"],
        _FABRIC["ici-tpu7x"],
        note="One TPU7x slice of up to a 9216-chip pod on its 3D ICI torus; the data-centre network is not modelled.",
    ),
    *(
        Cluster(
            f"tpu-{key}-multislice",
            f"{name} Multislice (ICI + DCN)",
            _CHIP[chip],
            _FABRIC[f"ici-{chip}"],
            note=f"{name} slices of up to {_FABRIC[f'ici-{chip}'].domain_chips} chips, each on its ICI torus, joined "
            "by the data-centre network (Google's Multislice): a job beyond one slice takes the fewest equal slices of "
            "a published shape ('Each slice in a multislice request is of the same accelerator type', "
            "https://docs.cloud.google.com/tpu/docs/multislice-introduction).",
            dcn=_DCN[chip],
            multislice_chips=V5P_MULTISLICE_CHIPS if chip == "v5p" else None,
        )
        for key, chip, name in (
            ("v4", "v4", "TPU v4"),
            ("v5e", "v5e", "TPU v5e"),
            ("v5p", "v5p", "TPU v5p"),
            ("v6e", "v6e", "TPU v6e"),
            ("7x", "tpu7x", "TPU7x"),
        )
    ),
)
"""The real systems of the chapters :ref:`ch-batch-squeeze`, :ref:`ch-serving` and :ref:`ch-sharding`; the
multislice clusters last, so that a chip's first cluster stays its single slice."""

_V5E_PAGE = "https://docs.cloud.google.com/tpu/docs/v5e"
_V6E_PAGE = "https://docs.cloud.google.com/tpu/docs/v6e"
_V5P_PAGE = "https://docs.cloud.google.com/tpu/docs/v5p-training"
_MULTISLICE = "Multislice (https://cloud.google.com/tpu/docs/multislice-introduction)"
_HGX = "https://www.nvidia.com/en-us/data-center/hgx/"
_POD2D = (1, 4, 8, 16, 32, 64, 128, 256)
_TOPO2D = ("1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16")
_V4_CHIPS = (4, 8, 16, 32, 64, 128, 256, 512, 768, 1024, 2048, 3072, 3456, 4096)
_V4_TOPO = (
    *("2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8", "8x8x12", "8x8x16", "8x16x16"),
    *("12x16x16", "12x12x24", "16x16x16"),
)
_TPU7X_CHIPS = (4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 6144, 8192, 9216)
_TPU7X_TOPO = (
    *("2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8", "8x8x16", "8x16x16", "16x16x16"),
    *("16x16x24", "16x16x32", "4x4x576"),
)
_XPK = cite(
    "Google's xpk, https://github.com/AI-Hypercomputer/xpk, src/xpk/core/system_characteristics.py (commit 02b0c092), "
    "the supported_topologies GKE accepts per TPU generation",
    _DCN_READ_ON,
)
_XPK_NOTE = (
    "xpk also accepts many elongated shapes (v5p 2x2x4 and 4x4x12 up to 4x8x188, TPU7x 4x4x12 up to 4x4x244) that "
    "Google's configuration tables do not list; hwlib keeps one shape per size and the tables' ladder of cubes."
)
_RECIPES = cite(
    "Google's tpu-recipes, https://github.com/AI-Hypercomputer/tpu-recipes, training/ironwood/deepseek3-671b/"
    "4k-bf16-tpu7x-4x8x8-gcs/cluster_toolkit/README.md",
    _DCN_READ_ON,
)
_PALM = cite(
    "Chowdhery et al., 'PaLM: Scaling Language Modeling with Pathways', arXiv:2204.02311, Sec. 4 (read in a stored "
    "extraction of https://ar5iv.labs.arxiv.org/html/2204.02311)",
    _DCN_READ_ON,
)
_V4_PAGE = cite("https://cloud.google.com/tpu/docs/v4, '3D mesh and 3D torus'", _DCN_READ_ON)
_V5P_CHIPS = (4, 8, 32, 64, 128, 256, 512, 1024, 2048, 4096, 6144)
_V5P_TOPO = ("2x2x1", "2x2x2", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8", "8x8x16", "8x16x16", "16x16x16", "16x16x24")


def _nodes(key: str, chip_key: str, source: str, quoted: str) -> Deployment:
    return Deployment(
        key=key,
        kind="node",
        chip_keys=(chip_key,),
        sizes=(8,),
        names=("1 × 8-GPU node",),
        topologies=("8 GPUs, NVLink/Infinity Fabric",),
        beyond="8-GPU nodes joined by the cluster network",
        source=source,
        read_on=READ_ON,
        quoted=quoted,
        note="Single GPUs and smaller VMs are also rented; a training job of several GPUs is normally "
        "planned in whole 8-GPU nodes.",
    )


DEPLOYMENTS: tuple[Deployment, ...] = (
    Deployment(
        key="v5e-slices",
        kind="slice",
        chip_keys=("v5e",),
        sizes=_POD2D,
        names=tuple(f"v5litepod-{n}" for n in _POD2D),
        topologies=_TOPO2D,
        beyond=f"256-chip slices joined by {_MULTISLICE}",
        source=_V5E_PAGE,
        read_on=READ_ON,
        quoted="Topology | TPU chips | Hosts: 1x1 | 1, 2x2 | 4, 2x4 | 8, 4x4 | 16, 4x8 | 32, 8x8 | 64, "
        "8x16 | 128, 16x16 | 256",
        note="Rows as in the page's localised copies (ko, ja, zh-cn), whose numerals are identical.",
    ),
    Deployment(
        key="v6e-slices",
        kind="slice",
        chip_keys=("v6e",),
        sizes=_POD2D,
        names=tuple(f"v6e-{n}" for n in _POD2D),
        topologies=_TOPO2D,
        beyond=f"256-chip slices joined by {_MULTISLICE}",
        source=_V6E_PAGE,
        read_on=READ_ON,
        quoted="The following table shows the 2D slice shapes that are supported for v6e: 1x1 (1 chip), "
        "2x2 (4), 2x4 (8), 4x4 (16), 4x8 (32), 8x8 (64), 8x16 (128), 16x16 (256)",
    ),
    Deployment(
        key="v5p-slices",
        kind="slice",
        chip_keys=("v5p",),
        sizes=_V5P_CHIPS,
        names=tuple(f"v5p-{2 * n}" for n in _V5P_CHIPS),
        topologies=_V5P_TOPO,
        beyond=f"6144-chip slices joined by {_MULTISLICE}",
        source=_V5P_PAGE,
        read_on=READ_ON,
        quoted="The following table shows the most common single-slice shapes supported with v5p, plus "
        "most (but not all) full cube shapes greater than 1 cube. | 2x2x1 | 8 | 4 | ... | 2x2x2 | 16 | 8 "
        "| ... | 2x4x4 | 64 | 32 | ... | 16x16x24 | 12288 | 6144 |",
        note="The table lists no 16-chip shape (it goes 2x2x2, then 2x4x4): a 2x2x4 slice can be "
        "requested (the scaling book mentions one) but is not among the common shapes, so a 16-chip "
        "answer rounds up to 32 chips here. The names count TensorCores, two per v5p chip.",
    ),
    Deployment(
        key="v4-slices",
        kind="slice",
        chip_keys=("v4",),
        sizes=_V4_CHIPS,
        names=tuple(f"v4-{2 * n}" for n in _V4_CHIPS),
        topologies=_V4_TOPO,
        beyond=f"4096-chip pods joined by {_MULTISLICE}",
        source="https://cloud.google.com/tpu/docs/types-topologies?hl=zh-cn",
        read_on=READ_ON,
        quoted="v4 拓扑的表示法为 AxBxC,其中 A<=B<=C,且 A、B、C 均为 <= 4 或 4 的所有整数倍数 ... "
        "2x2x4(16 个芯片,每个芯片 2 个 TensorCore)",
        note="Google's localised page (zh-cn; the ko copy says the same): 'a v4 topology is AxBxC with A<=B<=C, "
        "and A, B, C all <= 4 or all integer multiples of 4', '2x2x4 (16 chips, 2 TensorCores each)'; the "
        "English page was not among the stored copies. The page states the rule, not a table: these are its "
        "most cube-like shapes for each power of two up to the pod ('TPU Pod size | 4096 chips', "
        "docs.cloud.google.com/tpu/docs/v4), and the shapes in ``added``. Names count TensorCores, two per chip.",
        added=(
            _XPK(768, "chips", "supported_topologies=[ ... '8x8x8', '8x8x12', '8x8x16', '8x16x16', ]", "v4's list."),
            _PALM(
                3072,
                "chips",
                "We use 3072 TPU v4 chips in each Pod attached to 768 hosts.",
                "PaLM's slices. The paper gives no shape: 12x16x16 is the most cube-like the rule allows (an "
                "assumption; 8x16x24 is the other).",
            ),
            _V4_PAGE(3456, "chips", "For example, 4x4x8, 4x8x8, or 12x12x24.", "A torus shape the page names."),
        ),
    ),
    Deployment(
        key="tpu7x-slices",
        kind="slice",
        chip_keys=("tpu7x",),
        sizes=_TPU7X_CHIPS,
        names=tuple(f"tpu7x-{2 * n}" for n in _TPU7X_CHIPS),
        topologies=_TPU7X_TOPO,
        beyond="9216-chip pods joined by the data-centre network",
        source="https://github.com/AI-Hypercomputer/accelerator-microbenchmarks (Google; Ironwood/configs)",
        read_on=READ_ON,
        quoted="Ironwood/configs/collectives/all_reduce_tpu7x_2x2x1.yaml, ..._2x2x2, ..._2x2x4, ..._2x4x4, "
        "..._4x4x4, ..._4x4x8; configs/collectives/8x8x8/, 8x8x16/, 8x16x16/",
        note="No Google page among the stored copies tables TPU7x slice shapes (the stored copies of "
        "docs.cloud.google.com/tpu/docs/tpu7x end before its configurations): these are the 3D shapes Google's "
        "own microbenchmarks run, the scaling book's pod ('TPU7x | 4x4x576'), and those in ``added``. Names count "
        "TensorCores, two per chip, as for v5p (an assumption: no name is sourced).",
        added=(
            _RECIPES(
                256,
                "chips",
                "Chips: 256 (4x8x8 topology)",
                "The shape most of Google's Ironwood training recipes use (llama3.1-405b, llama3.1-70b, "
                "deepseek3-671b, gpt-oss-120b, gemma4-26b); xpk lists '4x8x8' too.",
            ),
            *(
                _XPK(chips, "chips", f"supported_topologies=[ ... '{shape}', ... ]", f"TPU7x's list. {_XPK_NOTE}")
                for chips, shape in ((4096, "16x16x16"), (6144, "16x16x24"), (8192, "16x16x32"))
            ),
        ),
    ),
    _nodes("hgx-a100-40gb", "a100-40gb", _HGX, "HGX A100: 8 GPUs per baseboard"),
    _nodes("hgx-a100-80gb", "a100-80gb", _HGX, "HGX A100: 8 GPUs per baseboard"),
    _nodes("hgx-h100", "h100-sxm", _HGX, "HGX H100: 8 GPUs per baseboard"),
    _nodes("hgx-h200", "h200", _HGX, "HGX H200: 8 GPUs per baseboard"),
    _nodes(
        "hgx-h800",
        "h800-sxm",
        "https://arxiv.org/abs/2412.19437 (DeepSeek-V3 Technical Report, Sec. 3.1)",
        "Each node in the H800 cluster contains 8 GPUs connected by NVLink and NVSwitch within nodes.",
    ),
    _nodes("dgx-b200", "b200", "https://www.nvidia.com/en-us/data-center/dgx-b200/", "DGX B200: 8 B200 GPUs"),
    _nodes(
        "mi300x-platform",
        "mi300x",
        "https://www.amd.com/en/products/accelerators/instinct/mi300/platform.html",
        "AMD Instinct MI300X Platform: 8 MI300X GPUs",
    ),
)
"""Real deployment sizes (TPU slice shapes, 8-GPU nodes), each with its source."""
