"""NVIDIA's and AMD's GPUs as their datasheets, product pages, architecture posts and ROCm docs describe them.

Values in plain SI units (see ``vendor_chips``); where a program sees a different capacity from the printed
one, ``hbm_visible`` holds it with the device report it comes from. Rendered in the chapter :ref:`ch-rooflines` and the
hardware appendix.
"""

from __future__ import annotations

from collections.abc import Callable

from hwlib.data.records import Chip, Sourced, cite
from hwlib.data.vendor_amd import AMD_GPUS
from hwlib.data.vendor_notes import BIDIRECTIONAL, SPARSE, THIRD_PARTY_REPORT, third_party
from hwlib.units import GB, MB, PETA, TB, TERA, GiB, MiB

# --- NVIDIA datasheets, product pages and architecture posts ---------------------------

_A100_DATASHEET = cite(
    "NVIDIA A100 Tensor Core GPU datasheet, https://www.nvidia.com/content/dam/en-zz/Solutions/"
    "Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf"
)
_AMPERE_POST = cite("https://developer.nvidia.com/blog/nvidia-ampere-architecture-in-depth/")
_H100_DATASHEET = cite(
    "NVIDIA H100 Tensor Core GPU datasheet, "
    "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet"
)
_H100_TP = third_party("glennklockwood.com/garden/processors/h100")
_HOPPER_POST = cite("https://developer.nvidia.com/blog/nvidia-hopper-architecture-in-depth/")
_DEEPSEEK_ISCA = cite(
    "https://arxiv.org/abs/2505.09343 (DeepSeek-AI, 'Insights into DeepSeek-V3: Scaling Challenges and Reflections "
    "on Hardware for AI Architectures', ISCA 2025, Sec. 4.1)",
    "2026-12-06",
)
_H800_AS_H100 = (
    "The H100 SXM's value: the H800 SXM is the same GH100 part with 'reduced FP64 computational performance and "
    "NVLink bandwidth for regulatory compliance' (arXiv:2505.09343, Sec. 4.1). "
    + third_party("philisun.com, 'NVIDIA H800 vs H100: A Technical Deep Dive' (same silicon, 80 GB, 3.35 TB/s)")
)
_H200_PAGE = cite("https://www.nvidia.com/en-us/data-center/h200/")
_H200_MLPERF = cite(
    "NVIDIA's MLPerf Inference v4.1 system description, mlcommons/inference_results_v4.1, "
    "closed/NVIDIA/systems/H200-SXM-141GBx8_TRT_MaxQ.json"
)
_DGX_B200_PAGE = cite("https://www.nvidia.com/en-us/data-center/dgx-b200/")
_HGX_PAGE = cite("https://www.nvidia.com/en-us/data-center/hgx/")

_A100_40_SMI = cite("https://github.com/bottlerocket-os/bottlerocket/pull/3873 (CUDA deviceQuery output)")
_MODAL_SMI = cite("https://github.com/modal-labs/modal-client/pull/2797 (nvidia-smi totals)")
_H100_SMI = cite("https://github.com/NVIDIA/nccl/issues/1264 (nvidia-smi, driver 550.54.15)")
_H200_SMI = cite("https://github.com/NVIDIA/cuda-samples/issues/311 (nvidia-smi, driver 550.54.15)")
_B200_SMI = cite("https://github.com/NVIDIA/TensorRT-LLM/issues/10278 (nvidia-smi, driver 580.95.05)")
_B200_QUERY = cite("https://github.com/pytorch/ao/pull/4002 (CUDA device query)")
_B200_MLPERF = cite(
    "Nebius's MLPerf Inference v6.0 system description, mlcommons/inference_results_v6.0, "
    "closed/Nebius/systems/nebius_b200_n1.json"
)
_B200_TP = third_party(
    "a copy of the DGX B200 page (brent-newsom-nvidia.github.io/AIPS-Boom/wiki/NVIDIA-DGX-B200: "
    "'1,440 GB total HBM3e memory and 64 TB/s HBM3e bandwidth') and Nebius's MLPerf system file "
    "('B200-SXM-180GB', 'B200 TGP 1000W', '14.4 TB/s aggregated bandwidth')"
)


def _visible_mib(cite_: Callable[..., Sourced], mib: int, quoted: str, note: str = "") -> Sourced:
    return cite_(
        mib * MiB,
        "B",
        quoted,
        f"{mib} MiB = {mib * MiB / GiB:.2f} GiB = {mib * MiB / GB:.2f} GB. {note} {THIRD_PARTY_REPORT}".replace(
            "  ", " "
        ),
    )


def _hopper_peaks(q: Callable[..., Sourced], flops: str) -> dict[str, Sourced]:
    """H100 SXM and H200 share the GH100 tensor cores; ``flops`` is how the page spells TFLOPS."""
    return {
        "fp32": q(67 * TERA, "FLOP/s", f"67 {flops}", "Non-tensor FP32, dense."),
        "tf32": q(989 * TERA / 2, "FLOP/s", f"989 {flops}*", SPARSE),
        "bf16": q(1979 * TERA / 2, "FLOP/s", f"1,979 {flops}*", f"{SPARSE} Document 002 rounds it to 989e12."),
        "fp16": q(1979 * TERA / 2, "FLOP/s", f"1,979 {flops}*", SPARSE),
        "fp8": q(3958 * TERA / 2, "FLOP/s", f"3,958 {flops}*", SPARSE),
        "int8": q(3958 * TERA / 2, "FLOP/s", "3,958 TOPS*", SPARSE),
    }


_NVLINK4 = f"NVLink total per GPU: 18 links x 25 GB/s per direction. {BIDIRECTIONAL}"
_A100_DENSE = "The datasheet prints this dense figure, then the with-sparsity one (twice it)."
_A100_PEAKS = {
    "fp32": _A100_DATASHEET(19.5 * TERA, "FLOP/s", "19.5 TFLOPS", "Non-tensor FP32."),
    "tf32": _A100_DATASHEET(156 * TERA, "FLOP/s", "156 TFLOPS", _A100_DENSE),
    "bf16": _A100_DATASHEET(312 * TERA, "FLOP/s", "312 TFLOPS", _A100_DENSE),
    "fp16": _A100_DATASHEET(312 * TERA, "FLOP/s", "312 TFLOPS", _A100_DENSE),
    "int8": _A100_DATASHEET(624 * TERA, "FLOP/s", "624 TOPS", _A100_DENSE),
}
_A100_L2 = _AMPERE_POST(
    40 * MB,
    "B",
    "40 MB Level 2 (L2) cache",
    "NVIDIA's MB, stored as 40e6 B like document 002; CUDA's deviceQuery reports "
    "'L2 Cache Size: 41943040 bytes' (40 MiB).",
)
_A100_TDP = _A100_DATASHEET(
    400.0, "W", "400W", "SXM; a footnote allows up to 500 W on the HGX A100-80GB custom-thermal SKU."
)
_A100_NVLINK = _A100_DATASHEET(
    600 * GB,
    "B/s",
    "NVLink: 600GB/s",
    "NVLink total per GPU: 12 links x 25 GB/s per direction (the Ampere post: '600 GB/sec total "
    f"bandwidth'). {BIDIRECTIONAL} Document 002's 'NVLink 300 GB/s' is the one-direction figure. "
    + third_party("thundercompute.com/blog/nvidia-a100-specs-full-guide and glennklockwood.com/garden/processors/A100"),
)


def _a100(key: str, name: str, hbm: Sourced, visible: Sourced, bandwidth: Sourced, aliases: tuple[str, ...]) -> Chip:
    return Chip(
        key=key,
        name=name,
        vendor="NVIDIA",
        source="vendor",
        hbm=hbm,
        hbm_visible=visible,
        hbm_bandwidth=bandwidth,
        peak_flops=_A100_PEAKS,
        on_chip=_A100_L2,
        tdp=_A100_TDP,
        interconnect=_A100_NVLINK,
        aliases=aliases,
        note="SXM4 module; both memory sizes share the compute, L2, TDP and NVLink numbers.",
    )


_NVIDIA_GPUS: tuple[Chip, ...] = (
    _a100(
        "a100-40gb",
        "A100-40GB",
        _A100_DATASHEET(
            40 * GB,
            "B",
            "40GB HBM2",
            "NVIDIA's GB; stored as printed, 40e9 B. "
            + third_party(
                "thundercompute.com/blog/nvidia-a100-specs-full-guide and glennklockwood.com/garden/processors/A100"
            ),
        ),
        _A100_40_SMI(
            42_298_834_944,
            "B",
            "Total amount of global memory: 40339 MBytes (42298834944 bytes)",
            f"NVIDIA A100-SXM4-40GB. nvidia-smi prints a 40960MiB total for the same part "
            f"(bottlerocket-core-kit pull request 834); CUDA's figure is what a program can "
            f"address. {THIRD_PARTY_REPORT}",
        ),
        _A100_DATASHEET(
            1555 * GB,
            "B/s",
            "1,555GB/s",
            "A100 40GB SXM column. "
            + third_party(
                "thundercompute.com/blog/nvidia-a100-specs-full-guide and glennklockwood.com/garden/processors/A100"
            ),
        ),
        ("A100 40GB SXM", "A100 SXM 40GB", "A100-SXM4-40GB"),
    ),
    _a100(
        "a100-80gb",
        "A100-80GB",
        _A100_DATASHEET(
            80 * GB,
            "B",
            "80GB HBM2e",
            "NVIDIA's GB; stored as printed, 80e9 B. "
            + third_party(
                "thundercompute.com/blog/nvidia-a100-specs-full-guide and glennklockwood.com/garden/processors/A100"
            ),
        ),
        _visible_mib(_MODAL_SMI, 81920, "A100 80GB: 81920MiB (85.89 GB)"),
        _A100_DATASHEET(
            2039 * GB,
            "B/s",
            "2,039GB/s",
            "A100 80GB SXM column (the 80GB PCIe card: 1,935GB/s). "
            + third_party(
                "thundercompute.com/blog/nvidia-a100-specs-full-guide and glennklockwood.com/garden/processors/A100"
            ),
        ),
        ("A100 80GB SXM", "A100 SXM 80GB", "A100-SXM4-80GB"),
    ),
    Chip(
        key="h100-sxm",
        name="H100-SXM",
        vendor="NVIDIA",
        source="vendor",
        hbm=_H100_DATASHEET(80 * GB, "B", "80GB", "H100 SXM; NVIDIA's GB, stored as printed, 80e9 B. " + _H100_TP),
        hbm_visible=_visible_mib(
            _H100_SMI,
            81559,
            "NVIDIA H100 80GB HBM3 ... 0MiB /  81559MiB",
            "The same total (85520809984 bytes) in modal-client pull request 2797.",
        ),
        hbm_bandwidth=_H100_DATASHEET(
            3350 * GB,
            "B/s",
            "3.35TB/s",
            "H100 SXM. The 2022 architecture post gave 3 TB/s before the final memory clocks; "
            f"document 002 uses 3.35e12. {_H100_TP}",
        ),
        peak_flops=_hopper_peaks(_H100_DATASHEET, "teraFLOPS"),
        on_chip=_HOPPER_POST(
            50 * MB,
            "B",
            "50 MB L2 cache",
            "NVIDIA's MB, as in document 002. The post's sentence 'A 50 MB L2 cache in H100 is "
            "1.25x larger than the A100 40 MB L2' was seen in a third-party copy.",
        ),
        tdp=_H100_DATASHEET(700.0, "W", "Up to 700W (configurable)", _H100_TP),
        interconnect=_H100_DATASHEET(
            900 * GB,
            "B/s",
            "900GB/s",
            f"{_NVLINK4} NVIDIA/nccl issue 1264 states it as 'unidirectional ... 450GB/s theoretical'. {_H100_TP}",
        ),
        aliases=("H100", "H100 SXM", "H100 SXM5", "H100-SXM5-80GB", "H100 80GB HBM3"),
    ),
    Chip(
        key="h800-sxm",
        name="H800-SXM",
        vendor="NVIDIA",
        source="vendor",
        hbm=_H100_DATASHEET(80 * GB, "B", "80GB", _H800_AS_H100),
        hbm_visible=_visible_mib(_H100_SMI, 81559, "NVIDIA H100 80GB HBM3 ... 0MiB /  81559MiB", _H800_AS_H100),
        hbm_bandwidth=_H100_DATASHEET(3350 * GB, "B/s", "3.35TB/s", _H800_AS_H100),
        peak_flops=_hopper_peaks(_H100_DATASHEET, "teraFLOPS"),
        on_chip=_HOPPER_POST(50 * MB, "B", "50 MB L2 cache", _H800_AS_H100),
        tdp=_H100_DATASHEET(700.0, "W", "Up to 700W (configurable)", _H800_AS_H100),
        interconnect=_DEEPSEEK_ISCA(
            400 * GB,
            "B/s",
            "the NVLink bandwidth in H800 SXM nodes is reduced from 900 GB/s to 400 GB/s",
            "Both ways together, as the H100's 900 GB/s: 200 GB/s per direction. DeepSeek-V3's report measures "
            "'NVLink offers a bandwidth of 160 GB/s' (arXiv:2412.19437, Sec. 3.2.2). " + BIDIRECTIONAL,
        ),
        aliases=("H800", "H800 SXM", "H800 SXM5"),
    ),
    Chip(
        key="h200",
        name="H200",
        vendor="NVIDIA",
        source="vendor",
        hbm=_H200_MLPERF(
            141 * GB,
            "B",
            '"accelerator_memory_capacity": "141 GB"',
            "H200 SXM; NVIDIA's GB, stored as printed, 141e9 B. The product page prints '141GB'.",
        ),
        hbm_visible=_visible_mib(_H200_SMI, 143771, "NVIDIA H200 ... 0MiB / 143771MiB"),
        hbm_bandwidth=_H200_PAGE(
            4800 * GB,
            "B/s",
            "4.8TB/s",
            "H200 SXM. " + third_party("allenai/open-instruct pull request 1441 ('4.8 TB/s memory bandwidth')"),
        ),
        peak_flops=_hopper_peaks(_H200_PAGE, "TFLOPS"),
        on_chip=_HOPPER_POST(
            50 * MB,
            "B",
            "50 MB L2 cache",
            "The H100 SXM's L2, inferred: the H200 is the same GH100 die with more HBM; no "
            "source giving the H200's own L2 was found.",
        ),
        tdp=_H200_MLPERF(700.0, "W", '"hw_notes": "H200 TGP 700W"'),
        interconnect=_H200_MLPERF(
            900 * GB, "B/s", '"accelerator_interconnect": "18x 4th Gen NVLink, 900GB/s"', _NVLINK4
        ),
        aliases=("H200 SXM", "H200-SXM-141GB"),
    ),
    Chip(
        key="b200",
        name="B200",
        vendor="NVIDIA",
        source="vendor",
        hbm=_DGX_B200_PAGE(
            1440 * GB / 8,
            "B",
            "1,440GB total",
            "DGX B200 total for its 8 GPUs, divided by 8: 180 GB per GPU (MLPerf system files "
            "name the part 'B200-SXM-180GB'). NVIDIA's 2024 announcements quoted 192 GB. " + _B200_TP,
        ),
        hbm_visible=_visible_mib(
            _B200_SMI,
            183359,
            "NVIDIA B200 ... 166593MiB / 183359MiB",
            "More than the 180 GB sold: the device reports 192.3 GB, near the 192 GB first announced.",
        ),
        hbm_bandwidth=_DGX_B200_PAGE(
            64 * TB / 8,
            "B/s",
            "64TB/s",
            "DGX B200 total HBM3e bandwidth for 8 GPUs, divided by 8: 8 TB/s per GPU. " + _B200_TP,
        ),
        peak_flops={
            "bf16": _HGX_PAGE(
                36 * PETA / 16,
                "FLOP/s",
                "36 PFLOPS",
                "HGX B200 FP16/BF16 total for 8 GPUs with sparsity; dense per GPU = 36/8/2 = "
                "2.25 PFLOP/s, the value document 002 uses.",
            ),
            "fp16": _HGX_PAGE(
                36 * PETA / 16, "FLOP/s", "36 PFLOPS", "HGX B200 FP16/BF16 total for 8 GPUs with sparsity, / 8 / 2."
            ),
            "fp8": _DGX_B200_PAGE(
                72 * PETA / 16,
                "FLOP/s",
                "72 petaFLOPS",
                "DGX B200 FP8 total for 8 GPUs with sparsity; dense per GPU = 72/8/2 = 4.5 "
                "PFLOP/s, as pytorch/ao's roofline_utils.py has it from NVIDIA's Blackwell "
                "brief ('fp8_peak_tops': 4.5e15, 'divide by 2 because no sparsity').",
            ),
            "int8": _DGX_B200_PAGE(
                72 * PETA / 16,
                "FLOP/s",
                "INT8 | 4500 | 9000",
                "Dense INT8 of the HGX B200 at 1,000 W, the fp8 rate. "
                + third_party("glennklockwood.com/garden/processors/B200 (HGX table, TOPS dense | sparse)"),
            ),
            "fp4": _DGX_B200_PAGE(
                144 * PETA / 16,
                "FLOP/s",
                "144 petaFLOPS",
                "DGX B200 FP4 total for 8 GPUs with sparsity; dense per GPU = 144/8/2.",
            ),
        },
        on_chip=_B200_QUERY(
            126.5 * MB,
            "B",
            "L2 Cache Size: 126.50 MB",
            f"A CUDA device query; the unit printed is MB. {THIRD_PARTY_REPORT} NVIDIA's "
            "Blackwell tuning guide ('Increased L2 Capacity') gives 126 MB, as document 002 does.",
        ),
        tdp=_B200_MLPERF(1000.0, "W", '"hw_notes": "B200 TGP 1000W"', "Per GPU on an HGX B200 board. " + _B200_TP),
        interconnect=_DGX_B200_PAGE(
            14.4 * TB / 8,
            "B/s",
            "14.4TB/s aggregate bandwidth",
            "DGX B200 NVLink total for 8 GPUs, divided by 8: 1.8 TB/s per GPU (18 NVLink 5 links x "
            f"50 GB/s per direction). {BIDIRECTIONAL} {_B200_TP}",
        ),
        aliases=("B200 SXM", "Blackwell B200", "B200-SXM-180GB"),
        note="NVIDIA publishes B200 numbers mostly as DGX/HGX 8-GPU totals; the per-GPU values "
        "here are those totals divided by 8 (and by 2 again for sparse peaks).",
    ),
)

GPUS: tuple[Chip, ...] = (*_NVIDIA_GPUS, *AMD_GPUS)
"""NVIDIA's GPUs, then AMD's."""
