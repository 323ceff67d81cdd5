"""The hardware catalogue: every chip number hwlib knows, each stored once with its source.

Values are in plain SI units: bytes, bytes/s, dense FLOP/s, W, J/byte, J/FLOP. ``quoted``
keeps the text as the source printed it, so that "GB" vs "GiB" and per-direction vs
bidirectional conventions stay visible. Records from the two source documents are kept
beside the vendor records so their numbers can be reproduced exactly.
Rendered in the chapter "Rooflines and ridge points" and the hardware appendix.
"""

from __future__ import annotations

from collections.abc import Callable

from hwlib.hardware import Chip, Sourced, cite
from hwlib.units import GB, GiB, MB, MiB, PETA, TB, TERA

DOC000 = "000_dfa9af1fd73ea27d.txt (TPU_SPECS)"
DOC002 = "002_501c62d3c87c2a8c.txt (GPUS)"


def _doc000(key: str, name: str, hbm_gib: float, bw_gbs: float, bf16_tflops: float) -> Chip:
    q = cite(DOC000)
    return Chip(
        key=key,
        name=name,
        vendor="Google",
        source="doc000",
        hbm=q(hbm_gib * GiB, "B", f'"hbm_gib": {hbm_gib}'),
        hbm_bandwidth=q(bw_gbs * GB, "B/s", f'"bw_gbs": {bw_gbs}'),
        peak_flops={"bf16": q(bf16_tflops * TERA, "FLOP/s", f'"bf16_tflops": {bf16_tflops}')},
    )


def _doc002(
    key: str,
    name: str,
    *,
    peak: float,
    bw: float,
    l2: float,
    e_hbm: float,
    e_flop: float,
    p_static: float,
    tdp: float,
    aliases: tuple[str, ...] = (),
) -> Chip:
    q = cite(DOC002)
    return Chip(
        key=key,
        name=name,
        vendor="NVIDIA",
        source="doc002",
        hbm=_VENDOR_HBM[key],
        hbm_bandwidth=q(bw, "B/s", f"bw={bw:g}"),
        peak_flops={"bf16": q(peak, "FLOP/s", f"peak={peak:g}")},
        l2=q(l2, "B", f"l2={l2:g}"),
        tdp=q(tdp, "W", f"tdp={tdp:g}"),
        hbm_energy=q(e_hbm, "J/B", f"e_hbm={e_hbm:g}", "all-in: interface plus on-die transport"),
        flop_energy=q(
            e_flop,
            "J/FLOP",
            f"e_flop={e_flop:g}",
            "derived in the document as (TDP - static - HBM power) / peak",
        ),
        static_power=q(p_static, "W", f"p_static={p_static:g}", "idle/leakage power"),
        aliases=aliases,
        note="The document gives no HBM capacity; the vendor's is used.",
    )


# --- vendor records ------------------------------------------------------------------
# Filled in and checked against the vendors' pages; see each Sourced value. Notes that
# include UNVERIFIED mark numbers whose page was not among the stored copies searched.
# INT8 peaks are integer operations per second (TOPS), kept in peak_flops under 'int8'.

UNVERIFIED = "Not verified against a stored copy of this page."
SPARSE = "Printed with sparsity (the asterisk); stored dense, i.e. half the printed figure."
BIDIRECTIONAL = "Bidirectional: both directions summed; one direction gets half."


def _gb_note(n: int) -> str:
    return (
        f"Google writes GB; stored literally as {n}e9 B. The capacity is a power of two "
        f"({n} GiB = {n} * 2**30 B), which is how document 000 labels it ('hbm_gib')."
    )


# Google Cloud TPU documentation.
_TPU_V4 = cite("https://docs.cloud.google.com/tpu/docs/v4")
_TPU_V5E = cite("https://docs.cloud.google.com/tpu/docs/v5e")
_TPU_V5P = cite("https://docs.cloud.google.com/tpu/docs/v5p-training")
_TPU_V6E = cite("https://docs.cloud.google.com/tpu/docs/v6e.md.txt")
_TPU_V6E_2024 = cite("https://cloud.google.com/tpu/docs/v6e")
_TPU7X = cite("https://docs.cloud.google.com/tpu/docs/tpu7x")

_TPUS: tuple[Chip, ...] = (
    Chip(
        key="v4",
        name="TPU v4",
        vendor="Google",
        source="vendor",
        hbm=_TPU_V4(32 * GiB, "B", "32 GiB", "The v4 page writes GiB; later TPU pages write GB."),
        hbm_bandwidth=_TPU_V4(1200 * GB, "B/s", "1200 GBps"),
        peak_flops={
            "bf16": _TPU_V4(275 * TERA, "FLOP/s", "275 teraflops (bf16 or int8)"),
            "int8": _TPU_V4(275 * TERA, "FLOP/s", "275 teraflops (bf16 or int8)", "One figure for both."),
        },
        aliases=("Cloud TPU v4",),
        note="The page gives no TDP and no per-chip ICI bandwidth; it lists measured "
        "min/mean/max power of 90/170/192 W.",
    ),
    Chip(
        key="v5e",
        name="TPU v5e",
        vendor="Google",
        source="vendor",
        hbm=_TPU_V5E(16 * GB, "B", "16 GB", _gb_note(16)),
        hbm_bandwidth=_TPU_V5E(
            819 * GB,
            "B/s",
            "819 GBps",
            "As in document 000. Other stored revisions of Google's pages print '800 GiBps' "
            "(v5e page) and '800 GBps' (v5e column of the v6e page) for the same chip.",
        ),
        peak_flops={
            "bf16": _TPU_V5E(197 * TERA, "FLOP/s", "197 TFLOPs"),
            "int8": _TPU_V6E_2024(
                393 * TERA,
                "FLOP/s",
                "393 TOPs",
                "From the v5e column of the v6e page; the v5e page revision cited for the "
                "other values gives INT8 only per Pod (100 PetaOps).",
            ),
        },
        interconnect=_TPU_V5E(
            400 * GB,
            "B/s",
            "400 GBps",
            f"ICI bandwidth per chip. {BIDIRECTIONAL} Older revisions print 'Inter-chip "
            "interconnect BW 1,600 Gbps' = 200e9 B/s, the one-direction figure.",
        ),
        aliases=("v5litepod", "TPU v5 lite", "Cloud TPU v5e"),
    ),
    Chip(
        key="v5p",
        name="TPU v5p",
        vendor="Google",
        source="vendor",
        hbm=_TPU_V5P(
            95 * GB,
            "B",
            "95 GB",
            _gb_note(95) + " A newer revision of the v5p page and the TPU7x page label the "
            "same 95 as GiB.",
        ),
        hbm_bandwidth=_TPU_V5P(2765 * GB, "B/s", "2765 GBps", "As in document 000."),
        peak_flops={"bf16": _TPU_V5P(459 * TERA, "FLOP/s", "459 TFLOPs")},
        interconnect=_TPU_V5P(
            1200 * GB,
            "B/s",
            "1200 GBps",
            f"ICI bandwidth per chip. {BIDIRECTIONAL} Older revisions print 'Interchip "
            "Interconnect BW 4800 Gbps' = 600e9 B/s, the one-direction figure.",
        ),
        aliases=("Cloud TPU v5p",),
        note="A newer revision of the page also lists 'Peak compute per chip (FP8) 459' "
        "TFLOPs, the bf16 rate (no FP8 speed-up); not stored as an fp8 peak.",
    ),
    Chip(
        key="v6e",
        name="TPU v6e (Trillium)",
        vendor="Google",
        source="vendor",
        hbm=_TPU_V6E(32 * GB, "B", "32 GB", _gb_note(32) + " The TPU7x page labels it '(GiB) 32'."),
        hbm_bandwidth=_TPU_V6E(
            1638 * GB,
            "B/s",
            "1638 GBps",
            "The stored current revision, matching the TPU7x page's v6e column (1638 GB/s). "
            "The 2024 revision (https://cloud.google.com/tpu/docs/v6e) printed 1640 GBps; "
            "another stored revision, and document 000, use 1600 GBps.",
        ),
        peak_flops={
            "bf16": _TPU_V6E(918 * TERA, "FLOP/s", "918 TFLOPs"),
            "int8": _TPU_V6E(1836 * TERA, "FLOP/s", "1836 TOPs"),
        },
        interconnect=_TPU_V6E(
            800 * GB,
            "B/s",
            "800 GBps",
            f"ICI bandwidth per chip. {BIDIRECTIONAL} The 2024 revision printed 'Inter-chip "
            "interconnect (ICI) bandwidth 3584 Gbps' (448e9 B/s) without a direction.",
        ),
        aliases=("Trillium", "Cloud TPU v6e"),
    ),
    Chip(
        key="tpu7x",
        name="TPU7x (Ironwood)",
        vendor="Google",
        source="vendor",
        hbm=_TPU7X(
            192 * GiB,
            "B",
            "HBM capacity per chip (GiB): 192",
            "TPU7x column of the page's comparison table, whose header says GiB. Google's "
            "April 2025 Ironwood announcement wrote '192 GB'.",
        ),
        hbm_bandwidth=_TPU7X(
            7380 * GB,
            "B/s",
            "HBM bandwidth per chip (GB/s): 7380",
            "The April 2025 announcement wrote 7.37 TB/s.",
        ),
        peak_flops={
            "bf16": _TPU7X(2307 * TERA, "FLOP/s", "Peak compute per chip (BF16) (TFLOPs): 2307"),
            "fp8": _TPU7X(4614 * TERA, "FLOP/s", "Peak compute per chip (FP8) (TFLOPs): 4614"),
        },
        interconnect=_TPU7X(
            1200 * GB,
            "B/s",
            "Bi-directional inter-chip interconnect (ICI) bandwidth per chip (GB/s): 1200",
            BIDIRECTIONAL,
        ),
        aliases=("Ironwood", "TPU v7", "v7x", "TPU v7x"),
    ),
)

# NVIDIA datasheets, product pages and architecture posts.
_A100_DATASHEET = cite(
    "NVIDIA A100 Tensor Core GPU datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf), "
    "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
    "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf"
)
_AMPERE_POST = cite("https://developer.nvidia.com/blog/nvidia-ampere-architecture-in-depth/")
_H100_DATASHEET = cite(
    "NVIDIA H100 Tensor Core GPU datasheet, "
    "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet"
)
_HOPPER_POST = cite("https://developer.nvidia.com/blog/nvidia-hopper-architecture-in-depth/")
_H200_PAGE = cite("https://www.nvidia.com/en-us/data-center/h200/")
_DGX_B200_PAGE = cite("https://www.nvidia.com/en-us/data-center/dgx-b200/")
_HGX_PAGE = cite("https://www.nvidia.com/en-us/data-center/hgx/")

_VENDOR_HBM: dict[str, Sourced] = {
    "a100-40gb": _A100_DATASHEET(
        40 * GB, "B", "40GB HBM2", f"NVIDIA's GB; stored literally as 40e9 B (40 GiB physically). {UNVERIFIED}"
    ),
    "a100-80gb": _A100_DATASHEET(
        80 * GB, "B", "80GB HBM2e", f"NVIDIA's GB; stored literally as 80e9 B (80 GiB physically). {UNVERIFIED}"
    ),
    "h100-sxm": _H100_DATASHEET(
        80 * GB, "B", "80GB", f"H100 SXM; NVIDIA's GB, stored as 80e9 B (80 GiB physically). {UNVERIFIED}"
    ),
    "b200": _DGX_B200_PAGE(
        1440 * GB / 8,
        "B",
        "1,440GB total",
        "DGX B200 total for its 8 GPUs, divided by 8: 180 GB per GPU (MLPerf system files "
        "name the part 'B200-SXM-180GB'). NVIDIA's 2024 Blackwell announcements quoted "
        f"192 GB per B200. {UNVERIFIED}",
    ),
}


def _hopper_peaks(q: Callable[..., Sourced], flops: str) -> dict[str, Sourced]:
    """H100 SXM and H200 share the GH100 tensor cores; ``flops`` is how the page spells TFLOPS."""
    note = f"{SPARSE} {UNVERIFIED}"
    return {
        "fp32": q(67 * TERA, "FLOP/s", f"67 {flops}", f"Non-tensor FP32, dense. {UNVERIFIED}"),
        "tf32": q(989 * TERA / 2, "FLOP/s", f"989 {flops}*", note),
        "bf16": q(1979 * TERA / 2, "FLOP/s", f"1,979 {flops}*", f"{note} Document 002 rounds it to 989e12."),
        "fp16": q(1979 * TERA / 2, "FLOP/s", f"1,979 {flops}*", note),
        "fp8": q(3958 * TERA / 2, "FLOP/s", f"3,958 {flops}*", note),
        "int8": q(3958 * TERA / 2, "FLOP/s", "3,958 TOPS*", note),
    }


_NVLINK4 = f"NVLink total per GPU: 18 links x 25 GB/s per direction. {BIDIRECTIONAL}"

_A100_DENSE = f"The datasheet prints this dense figure, then the with-sparsity one (twice it). {UNVERIFIED}"
_A100_PEAKS = {
    "fp32": _A100_DATASHEET(19.5 * TERA, "FLOP/s", "19.5 TFLOPS", f"Non-tensor FP32. {UNVERIFIED}"),
    "tf32": _A100_DATASHEET(156 * TERA, "FLOP/s", "156 TFLOPS", _A100_DENSE),
    "bf16": _A100_DATASHEET(312 * TERA, "FLOP/s", "312 TFLOPS", _A100_DENSE),
    "fp16": _A100_DATASHEET(312 * TERA, "FLOP/s", "312 TFLOPS", _A100_DENSE),
    "int8": _A100_DATASHEET(624 * TERA, "FLOP/s", "624 TOPS", _A100_DENSE),
}
_A100_L2 = _AMPERE_POST(
    40 * MB,
    "B",
    "40 MB Level 2 (L2) cache",
    "NVIDIA's MB, stored as 40e6 B like document 002; CUDA reports 41,943,040 B (40 MiB).",
)
_A100_TDP = _A100_DATASHEET(
    400.0,
    "W",
    "400W",
    "SXM; a datasheet footnote allows up to 500 W on the HGX A100-80GB custom-thermal SKU. " + UNVERIFIED,
)
_A100_NVLINK = _A100_DATASHEET(
    600 * GB,
    "B/s",
    "NVLink: 600GB/s",
    "NVLink total per GPU: 12 links x 25 GB/s per direction (the Ampere post: '600 GB/sec "
    f"total bandwidth'). {BIDIRECTIONAL} Document 002's 'NVLink 300 GB/s' equals the "
    f"one-direction figure. {UNVERIFIED}",
)


def _a100(key: str, name: str, bandwidth: Sourced, aliases: tuple[str, ...]) -> Chip:
    return Chip(
        key=key,
        name=name,
        vendor="NVIDIA",
        source="vendor",
        hbm=_VENDOR_HBM[key],
        hbm_bandwidth=bandwidth,
        peak_flops=_A100_PEAKS,
        l2=_A100_L2,
        tdp=_A100_TDP,
        interconnect=_A100_NVLINK,
        aliases=aliases,
        note="SXM4 module; both memory sizes share the compute, L2, TDP and NVLink numbers.",
    )


_NVIDIA_GPUS: tuple[Chip, ...] = (
    _a100(
        "a100-40gb",
        "A100-40GB",
        _A100_DATASHEET(1555 * GB, "B/s", "1,555GB/s", f"A100 40GB SXM column. {UNVERIFIED}"),
        ("A100 40GB SXM", "A100 SXM 40GB", "A100-SXM4-40GB"),
    ),
    _a100(
        "a100-80gb",
        "A100-80GB",
        _A100_DATASHEET(
            2039 * GB, "B/s", "2,039GB/s", f"A100 80GB SXM column (the 80GB PCIe card: 1,935GB/s). {UNVERIFIED}"
        ),
        ("A100 80GB SXM", "A100 SXM 80GB", "A100-SXM4-80GB"),
    ),
    Chip(
        key="h100-sxm",
        name="H100-SXM",
        vendor="NVIDIA",
        source="vendor",
        hbm=_VENDOR_HBM["h100-sxm"],
        hbm_bandwidth=_H100_DATASHEET(
            3350 * GB,
            "B/s",
            "3.35TB/s",
            "H100 SXM. The 2022 architecture post and Hot Chips slides gave 3 TB/s before the "
            f"final memory clocks; document 002 uses 3.35e12. {UNVERIFIED}",
        ),
        peak_flops=_hopper_peaks(_H100_DATASHEET, "teraFLOPS"),
        l2=_HOPPER_POST(50 * MB, "B", "50 MB L2 cache", f"NVIDIA's MB, as in document 002. {UNVERIFIED}"),
        tdp=_H100_DATASHEET(700.0, "W", "Up to 700W (configurable)", UNVERIFIED),
        interconnect=_H100_DATASHEET(900 * GB, "B/s", "900GB/s", f"{_NVLINK4} {UNVERIFIED}"),
        aliases=("H100", "H100 SXM", "H100 SXM5", "H100-SXM5-80GB"),
    ),
    Chip(
        key="h200",
        name="H200",
        vendor="NVIDIA",
        source="vendor",
        hbm=_H200_PAGE(141 * GB, "B", "141GB", f"H200 SXM; NVIDIA's GB, stored as 141e9 B. {UNVERIFIED}"),
        hbm_bandwidth=_H200_PAGE(4800 * GB, "B/s", "4.8TB/s", f"H200 SXM. {UNVERIFIED}"),
        peak_flops=_hopper_peaks(_H200_PAGE, "TFLOPS"),
        tdp=_H200_PAGE(700.0, "W", "Up to 700W (configurable)", UNVERIFIED),
        interconnect=_H200_PAGE(900 * GB, "B/s", "900GB/s", f"{_NVLINK4} {UNVERIFIED}"),
        aliases=("H200 SXM", "H200-SXM-141GB"),
    ),
    Chip(
        key="b200",
        name="B200",
        vendor="NVIDIA",
        source="vendor",
        hbm=_VENDOR_HBM["b200"],
        hbm_bandwidth=_DGX_B200_PAGE(
            64 * TB / 8,
            "B/s",
            "64TB/s",
            f"DGX B200 total HBM3e bandwidth for 8 GPUs, divided by 8: 8 TB/s per GPU. {UNVERIFIED}",
        ),
        peak_flops={
            "bf16": _HGX_PAGE(
                36 * PETA / 16,
                "FLOP/s",
                "36 PFLOPS",
                "HGX B200 FP16/BF16 total for 8 GPUs with sparsity; dense per GPU = 36/8/2 = "
                f"2.25 PFLOP/s, the value document 002 uses. {UNVERIFIED}",
            ),
            "fp16": _HGX_PAGE(
                36 * PETA / 16,
                "FLOP/s",
                "36 PFLOPS",
                f"HGX B200 FP16/BF16 total for 8 GPUs with sparsity, / 8 / 2. {UNVERIFIED}",
            ),
            "fp8": _DGX_B200_PAGE(
                72 * PETA / 16,
                "FLOP/s",
                "72 petaFLOPS",
                f"DGX B200 FP8 total for 8 GPUs with sparsity; dense per GPU = 72/8/2. {UNVERIFIED}",
            ),
            "fp4": _DGX_B200_PAGE(
                144 * PETA / 16,
                "FLOP/s",
                "144 petaFLOPS",
                f"DGX B200 FP4 total for 8 GPUs with sparsity; dense per GPU = 144/8/2. {UNVERIFIED}",
            ),
        },
        tdp=_HGX_PAGE(1000.0, "W", "1,000W", f"Per GPU on the HGX B200 board. {UNVERIFIED}"),
        interconnect=_DGX_B200_PAGE(
            14.4 * TB / 8,
            "B/s",
            "14.4TB/s aggregate bandwidth",
            "DGX B200 NVLink total for 8 GPUs, divided by 8: 1.8 TB/s per GPU (18 NVLink 5 "
            f"links x 50 GB/s per direction). {BIDIRECTIONAL} {UNVERIFIED}",
        ),
        aliases=("B200 SXM", "Blackwell B200", "B200-SXM-180GB"),
        note="NVIDIA publishes B200 numbers mostly as DGX/HGX 8-GPU totals; the per-GPU "
        "values here are those totals divided by 8 (and by 2 again for sparse peaks).",
    ),
)

# AMD: ROCm documentation and the product page.
_ROCM_SPECS = cite("https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html")
_ROCM_MI300 = cite("https://rocm.docs.amd.com/en/latest/conceptual/gpu-arch/mi300.html")
_AMD_MI300X = cite("https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html")

_MI300X_DENSE = "Row of ROCm's MI300X peak table (type | FLOPS/clock/CU | peak TFLOPS); dense."

_MI300X = Chip(
    key="mi300x",
    name="MI300X",
    vendor="AMD",
    source="vendor",
    hbm=_ROCM_SPECS(
        192 * GiB,
        "B",
        "VRAM (GiB): 192",
        "ROCm's table labels it GiB (8 HBM3 stacks); AMD's product page and CDNA 3 white "
        "paper write '192 GB'.",
    ),
    hbm_bandwidth=_ROCM_MI300(
        5.3 * TB, "B/s", "5.3 TB per second", "Theoretical aggregated peak memory bandwidth."
    ),
    peak_flops={
        "fp32": _ROCM_MI300(163.4 * TERA, "FLOP/s", "Matrix FP32 | 256 | 163.4", "Vector FP32 is also 163.4."),
        "tf32": _ROCM_MI300(653.7 * TERA, "FLOP/s", "Vector TF32 | 1024 | 653.7", _MI300X_DENSE),
        "bf16": _ROCM_MI300(1307.4 * TERA, "FLOP/s", "Matrix BF16 | 2048 | 1307.4", _MI300X_DENSE),
        "fp16": _ROCM_MI300(1307.4 * TERA, "FLOP/s", "Matrix FP16 | 2048 | 1307.4", _MI300X_DENSE),
        "fp8": _ROCM_MI300(2614.9 * TERA, "FLOP/s", "Matrix FP8 | 4096 | 2614.9", _MI300X_DENSE),
        "int8": _ROCM_MI300(2614.9 * TERA, "FLOP/s", "Matrix INT8 | 4096 | 2614.9", _MI300X_DENSE),
    },
    l2=_ROCM_SPECS(
        32 * MiB,
        "B",
        "L2 Cache (MiB): 32 (4 per XCD)",
        "Total of the eight XCDs' 4 MiB L2 caches. Behind them sits the 256 MiB AMD Infinity "
        "Cache ('L3 Cache (MiB): 256' in the same table), which this field does not include.",
    ),
    tdp=_AMD_MI300X(750.0, "W", "750W", f"Peak total board power of the OAM module. {UNVERIFIED}"),
    aliases=("Instinct MI300X", "AMD Instinct MI300X"),
    note="No interconnect stored: AMD quotes Infinity Fabric as a per-link peak (128 GB/s) "
    "and a link count rather than a per-GPU total, and no stored copy confirmed the wording.",
)

VENDOR: tuple[Chip, ...] = (*_TPUS, *_NVIDIA_GPUS, _MI300X)

# --- the source documents' own inputs ------------------------------------------------

DOCUMENT_000: tuple[Chip, ...] = (
    _doc000("v5e", "TPU v5e", 16.0, 819.0, 197.0),
    _doc000("v5p", "TPU v5p", 95.0, 2765.0, 459.0),
    _doc000("v6e", "TPU v6e (Trillium)", 32.0, 1600.0, 918.0),
)

DOCUMENT_002: tuple[Chip, ...] = (
    _doc002(
        "a100-80gb", "A100-80GB",
        peak=312e12, bw=2.039e12, l2=40e6, e_hbm=60e-12, e_flop=0.90e-12, p_static=60.0, tdp=400.0,
    ),
    _doc002(
        "a100-40gb", "A100-40GB",
        peak=312e12, bw=1.555e12, l2=40e6, e_hbm=60e-12, e_flop=0.90e-12, p_static=60.0, tdp=400.0,
    ),
    _doc002(
        "h100-sxm", "H100-SXM",
        peak=989e12, bw=3.35e12, l2=50e6, e_hbm=50e-12, e_flop=0.55e-12, p_static=90.0, tdp=700.0,
    ),
    _doc002(
        "b200", "B200",
        peak=2.25e15, bw=8.0e12, l2=126e6, e_hbm=45e-12, e_flop=0.33e-12, p_static=150.0, tdp=1000.0,
        aliases=("B200 (approx.)",),
    ),
)

CHIPS: tuple[Chip, ...] = VENDOR + DOCUMENT_000 + DOCUMENT_002
