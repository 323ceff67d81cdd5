"""Chips as their vendors describe them: Google's TPU pages, NVIDIA's datasheets, AMD's ROCm docs.

Values are in plain SI units: bytes, bytes/s, dense FLOP/s, W. ``quoted`` keeps the text as
the page printed it, so that "GB" against "GiB" and per-direction against bidirectional stay
visible. Where a program sees a different capacity from the printed one, ``hbm_visible``
holds it with the device report it comes from. INT8 peaks are integer operations per second
(TOPS), kept under 'int8'. Rendered in the chapter "Rooflines and ridge points" and the
hardware appendix.
"""

from __future__ import annotations

from collections.abc import Callable

from hwlib.data.records import Chip, Sourced, cite
from hwlib.units import GB, GiB, MB, MiB, PETA, TB, TERA

SPARSE = "Printed with sparsity (the asterisk); stored dense, i.e. half the printed figure."
BIDIRECTIONAL = "Bidirectional: both directions summed; one direction gets half."
THIRD_PARTY_REPORT = "A user's device report in a public issue thread (third party), not a vendor page."


def third_party(where: str) -> str:
    """Note for a value whose vendor page was not among the stored copies searched."""
    return f"NVIDIA's or AMD's own page was not among the stored copies; the value is confirmed by {where}."


_TPU_INFO = cite("jax-ml/jax, jax/_src/pallas/mosaic/tpu_info.py (commit 4f32df24), Google's JAX repository")
_SCALING_BOOK = cite("Austin et al., 'How to Scale Your Model', Google DeepMind (jax-ml/scaling-book, tpus.md, "
                     "commit 54e2c439), table 'ICI BW/link (one-way, bytes/s)'")
_LINKS_NOTE = ("The scaling book: 'TPU v4 and TPU v5p are connected to the nearest 6 neighbors (forming a 3D torus)'; "
               "v5e and v6e connect 'the 4 nearest neighbors' (a 2D torus); Google's v5e and v6e pages list "
               "'ICI ports per chip | 4'.")
_LINK_NOTE = ("One direction of one link. An older revision of the book's table gave about 10 % more; its footnote says "
              "links run at slightly different rates depending on the operation.")


def _ici(links: int, one_way: float) -> dict[str, Sourced]:
    return {"ici_links": _SCALING_BOOK(float(links), "links", f"nearest {links} neighbors", _LINKS_NOTE),
            "ici_link_bandwidth": _SCALING_BOOK(one_way, "B/s", f"{one_way:.2g}".replace("e+", "e"), _LINK_NOTE)}


_VMEM_NOTE = ("Per TensorCore, as the file states ('all specs ... are per TensorCore' on "
              "https://docs.jax.dev/en/latest/pallas/tpu/hardware.html): the scratchpad one core's matmul "
              "tiles live in, the memory the re-blocking term needs.")

# --- Google Cloud TPU documentation -----------------------------------------------------

_TPU_V4 = cite("https://docs.cloud.google.com/tpu/docs/v4.md.txt")
_TPU_V5E = cite("https://docs.cloud.google.com/tpu/docs/v5e.md.txt")
_TPU_V5E_OLD = cite("https://docs.cloud.google.com/tpu/docs/v5e")
_TPU_V5P = cite("https://docs.cloud.google.com/tpu/docs/v5p")
_TPU_V5P_ZH = cite("https://docs.cloud.google.com/tpu/docs/v5p?hl=zh-TW")
_TPU_V6E = cite("https://docs.cloud.google.com/tpu/docs/v6e.md.txt")
_TPU7X = cite("https://docs.cloud.google.com/tpu/docs/tpu7x")

_TPUS: tuple[Chip, ...] = (
    Chip(
        key="v4", name="TPU v4", vendor="Google", source="vendor",
        hbm=_TPU_V4(32 * GiB, "B", "HBM2 capacity and bandwidth | 32 GiB, 1200 GBps"),
        hbm_bandwidth=_TPU_V4(1200 * GB, "B/s", "HBM2 capacity and bandwidth | 32 GiB, 1200 GBps"),
        peak_flops={
            "bf16": _TPU_V4(275 * TERA, "FLOP/s", "275 teraflops (bf16 or int8)"),
            "int8": _TPU_V4(275 * TERA, "FLOP/s", "275 teraflops (bf16 or int8)", "One figure for both."),
        },
        on_chip=_TPU_INFO(16 * MiB, "B", "vmem_capacity_bytes=16 * 1024 * 1024,  # 16 MiB per core",
                          f"{_VMEM_NOTE} Beside it v4 has a 128 MiB CMEM per chip ('cmem_capacity_bytes="
                          "134_000_000 // tensor_cores_per_chip'), not counted here."),
        **_ici(6, 4.5e+10),
        aliases=("Cloud TPU v4",),
        note="The page gives no TDP and no per-chip ICI bandwidth; it lists measured "
        "min/mean/max power of 90/170/192 W.",
    ),
    Chip(
        key="v5e", name="TPU v5e", vendor="Google", source="vendor",
        hbm=_TPU_V5E(16 * GiB, "B", "| HBM capacity per chip | 16 GiB |",
                     "Older revisions of the page printed '16 GB' for the same chip."),
        hbm_bandwidth=_TPU_V5E(
            819 * GB, "B/s", "| HBM bandwidth per chip | 819 GBps |",
            "As in document 000. Another stored revision prints '800 GiBps', and the v5e column of "
            "an older v6e page '800 GBps', for the same chip."),
        peak_flops={
            "bf16": _TPU_V5E(197 * TERA, "FLOP/s", "197 TFLOPs"),
            "int8": _TPU_V5E(393 * TERA, "FLOP/s", "| Peak compute per chip (Int8) | 393 TOPs |"),
        },
        interconnect=_TPU_V5E_OLD(
            400 * GB, "B/s", "400 GBps",
            f"ICI bandwidth per chip over its 4 ICI ports. {BIDIRECTIONAL} Older revisions print "
            "'Inter-chip interconnect BW 1,600 Gbps' = 200e9 B/s, the one-direction figure."),
        on_chip=_TPU_INFO(128 * MiB, "B", "vmem_capacity_bytes=128 * 1024 * 1024,  # 128 MiB per core",
                          f"{_VMEM_NOTE} One TensorCore per chip. The scaling book gives the same '128 MiB on "
                          "TPU v5e'."),
        **_ici(4, 4.5e+10),
        aliases=("v5litepod", "TPU v5 lite", "Cloud TPU v5e"),
    ),
    Chip(
        key="v5p", name="TPU v5p", vendor="Google", source="vendor",
        hbm=_TPU_V5P(95 * GiB, "B", "| HBM capacity per chip (GiB) | 95 |",
                     "Older revisions printed '95GB'. The chip has 96 GiB physically; see hbm_visible."),
        hbm_visible=_TPU_V5P_ZH(
            95 * GiB, "B", "96 GiB 的實體高頻寬記憶體 ... 上表列出 95 GiB ... tpu-info、JAX 和 PyTorch 等工具和"
            "框架會回報使用者可分配的 HBM",
            "Google's note under the table: each chip has 96 GiB of physical HBM; the table lists "
            "95 GiB because the TPU system and the libtpu runtime reserve the rest, and tpu-info, "
            "JAX and PyTorch report the user-allocatable 95 GiB. Found only in the page's "
            "Traditional Chinese localisation; the stored English copies predate the note."),
        hbm_bandwidth=_TPU_V5P(2765 * GB, "B/s", "| HBM bandwidth per chip (GBps) | 2765 |",
                               "As in document 000. One stored revision prints '(GiBps) | 2575', the same rate."),
        peak_flops={
            "bf16": _TPU_V5P(459 * TERA, "FLOP/s", "459 TFLOPs"),
            "fp8": _TPU_V5P(459 * TERA, "FLOP/s", "| Peak compute per chip (FP8) (TFLOPs) | 459 |",
                            "The bf16 rate: fp8 is accepted but runs no faster (JAX's tpu_info.py lists no "
                            "fp8 unit for v5p)."),
            "int8": _TPU_INFO(918 * TERA, "FLOP/s", "int8_ops_per_second=int(9.18e14 // num_chip_cores)",
                              "Per core in the file, times the chip's two cores; Google's v5p page has no Int8 "
                              "row. The scaling book's table gives the same 9.18e14."),
        },
        interconnect=_TPU_V5P(
            1200 * GB, "B/s", "| Bidirectional inter-chip interconnect (ICI) bandwidth per chip (GBps) | 1200 |",
            f"Over the chip's 6 torus links. {BIDIRECTIONAL} Older revisions print 'Interchip "
            "Interconnect BW 4800 Gbps' = 600e9 B/s, the one-direction figure."),
        on_chip=_TPU_INFO(64 * MiB, "B", "vmem_capacity_bytes=64 * 1024 * 1024,  # 64 MiB per core",
                          f"{_VMEM_NOTE} Two TensorCores per chip."),
        **_ici(6, 9e+10),
        aliases=("Cloud TPU v5p", "TPU v5"),
    ),
    Chip(
        key="v6e", name="TPU v6e (Trillium)", vendor="Google", source="vendor",
        hbm=_TPU7X(32 * GiB, "B", "| HBM capacity per chip (GiB) | 95 | 32 | 192 |",
                   "v6e column of the TPU7x page's comparison table, whose row says GiB; the v6e "
                   "page itself prints '32 GB'."),
        hbm_bandwidth=_TPU_V6E(
            1638 * GB, "B/s", "| HBM bandwidth per chip | 1638 GBps |",
            "Matches the TPU7x page's v6e column (1638 GB/s). A 2024 revision printed 1640 GBps; "
            "another stored revision, and document 000, use 1600 GBps."),
        peak_flops={
            "bf16": _TPU_V6E(918 * TERA, "FLOP/s", "918 TFLOPs"),
            "int8": _TPU_V6E(1836 * TERA, "FLOP/s", "| Peak compute per chip (Int8) | 1836 TOPs |"),
            "fp8": _TPU7X(918 * TERA, "FLOP/s", "| Peak compute per chip (FP8) (TFLOPs) | 459 | 918 | 4614 |",
                          "v6e column of the TPU7x page's comparison table: the bf16 rate."),
        },
        interconnect=_TPU_V6E(
            800 * GB, "B/s", "800 GBps",
            f"ICI bandwidth per chip. {BIDIRECTIONAL} The 2024 revision printed 'Inter-chip "
            "interconnect (ICI) bandwidth 3584 Gbps' (448e9 B/s) without a direction."),
        on_chip=_TPU_INFO(128 * MiB, "B", "vmem_capacity_bytes=128 * 1024 * 1024,  # 128 MiB per core",
                          f"{_VMEM_NOTE} One TensorCore per chip."),
        **_ici(4, 9e+10),
        aliases=("Trillium", "Cloud TPU v6e", "TPU v6 lite"),
    ),
    Chip(
        key="tpu7x", name="TPU7x (Ironwood)", vendor="Google", source="vendor",
        hbm=_TPU7X(192 * GiB, "B", "HBM capacity per chip (GiB): 192",
                   "TPU7x column of the page's comparison table. Google's April 2025 Ironwood "
                   "announcement wrote '192 GB'."),
        hbm_bandwidth=_TPU7X(7380 * GB, "B/s", "HBM bandwidth per chip (GB/s): 7380",
                             "The April 2025 announcement wrote 7.37 TB/s."),
        peak_flops={
            "bf16": _TPU7X(2307 * TERA, "FLOP/s", "Peak compute per chip (BF16) (TFLOPs): 2307"),
            "fp8": _TPU7X(4614 * TERA, "FLOP/s", "Peak compute per chip (FP8) (TFLOPs): 4614"),
        },
        interconnect=_TPU7X(1200 * GB, "B/s",
                            "Bi-directional inter-chip interconnect (ICI) bandwidth per chip (GB/s): 1200",
                            BIDIRECTIONAL),
        on_chip=_TPU_INFO(64 * MiB, "B", "vmem_capacity_bytes=64 * 1024 * 1024,  # 64 MiB per core",
                          f"{_VMEM_NOTE} Two TensorCores per chip."),
        aliases=("Ironwood", "TPU v7", "v7x", "TPU v7x"),
    ),
)

# --- NVIDIA datasheets, product pages and architecture posts ---------------------------

_A100_DATASHEET = cite(
    "NVIDIA A100 Tensor Core GPU datasheet, https://www.nvidia.com/content/dam/en-zz/Solutions/"
    "Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf")
_AMPERE_POST = cite("https://developer.nvidia.com/blog/nvidia-ampere-architecture-in-depth/")
_H100_DATASHEET = cite("NVIDIA H100 Tensor Core GPU datasheet, "
                       "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet")
_H100_TP = third_party("glennklockwood.com/garden/processors/h100")
_HOPPER_POST = cite("https://developer.nvidia.com/blog/nvidia-hopper-architecture-in-depth/")
_H200_PAGE = cite("https://www.nvidia.com/en-us/data-center/h200/")
_H200_MLPERF = cite("NVIDIA's MLPerf Inference v4.1 system description, mlcommons/inference_results_v4.1, "
                    "closed/NVIDIA/systems/H200-SXM-141GBx8_TRT_MaxQ.json")
_DGX_B200_PAGE = cite("https://www.nvidia.com/en-us/data-center/dgx-b200/")
_HGX_PAGE = cite("https://www.nvidia.com/en-us/data-center/hgx/")

_A100_40_SMI = cite("https://github.com/bottlerocket-os/bottlerocket/pull/3873 (CUDA deviceQuery output)")
_MODAL_SMI = cite("https://github.com/modal-labs/modal-client/pull/2797 (nvidia-smi totals)")
_H100_SMI = cite("https://github.com/NVIDIA/nccl/issues/1264 (nvidia-smi, driver 550.54.15)")
_H200_SMI = cite("https://github.com/NVIDIA/cuda-samples/issues/311 (nvidia-smi, driver 550.54.15)")
_B200_SMI = cite("https://github.com/NVIDIA/TensorRT-LLM/issues/10278 (nvidia-smi, driver 580.95.05)")
_B200_QUERY = cite("https://github.com/pytorch/ao/pull/4002 (CUDA device query)")
_B200_MLPERF = cite("Nebius's MLPerf Inference v6.0 system description, mlcommons/inference_results_v6.0, "
                    "closed/Nebius/systems/nebius_b200_n1.json")
_B200_TP = third_party("a copy of the DGX B200 page (brent-newsom-nvidia.github.io/AIPS-Boom/wiki/NVIDIA-DGX-B200: "
                       "'1,440 GB total HBM3e memory and 64 TB/s HBM3e bandwidth') and Nebius's MLPerf system file "
                       "('B200-SXM-180GB', 'B200 TGP 1000W', '14.4 TB/s aggregated bandwidth')")


def _visible_mib(cite_: Callable[..., Sourced], mib: int, quoted: str, note: str = "") -> Sourced:
    return cite_(mib * MiB, "B", quoted, f"{mib} MiB = {mib * MiB / GiB:.2f} GiB = {mib * MiB / GB:.2f} GB. "
                 f"{note} {THIRD_PARTY_REPORT}".replace("  ", " "))


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
_A100_L2 = _AMPERE_POST(40 * MB, "B", "40 MB Level 2 (L2) cache",
                        "NVIDIA's MB, stored as 40e6 B like document 002; CUDA's deviceQuery reports "
                        "'L2 Cache Size: 41943040 bytes' (40 MiB).")
_A100_TDP = _A100_DATASHEET(400.0, "W", "400W",
                            "SXM; a footnote allows up to 500 W on the HGX A100-80GB custom-thermal SKU.")
_A100_NVLINK = _A100_DATASHEET(
    600 * GB, "B/s", "NVLink: 600GB/s",
    "NVLink total per GPU: 12 links x 25 GB/s per direction (the Ampere post: '600 GB/sec total "
    f"bandwidth'). {BIDIRECTIONAL} Document 002's 'NVLink 300 GB/s' is the one-direction figure. "
    + third_party("thundercompute.com/blog/nvidia-a100-specs-full-guide and glennklockwood.com/garden/processors/A100"))


def _a100(key: str, name: str, hbm: Sourced, visible: Sourced, bandwidth: Sourced,
          aliases: tuple[str, ...]) -> Chip:
    return Chip(key=key, name=name, vendor="NVIDIA", source="vendor", hbm=hbm, hbm_visible=visible,
                hbm_bandwidth=bandwidth, peak_flops=_A100_PEAKS, on_chip=_A100_L2, tdp=_A100_TDP,
                interconnect=_A100_NVLINK, aliases=aliases,
                note="SXM4 module; both memory sizes share the compute, L2, TDP and NVLink numbers.")


_NVIDIA_GPUS: tuple[Chip, ...] = (
    _a100("a100-40gb", "A100-40GB",
          _A100_DATASHEET(40 * GB, "B", "40GB HBM2", "NVIDIA's GB; stored as printed, 40e9 B. " + third_party("thundercompute.com/blog/nvidia-a100-specs-full-guide and glennklockwood.com/garden/processors/A100")),
          _A100_40_SMI(42_298_834_944, "B", "Total amount of global memory: 40339 MBytes (42298834944 bytes)",
                       f"NVIDIA A100-SXM4-40GB. nvidia-smi prints a 40960MiB total for the same part "
                       f"(bottlerocket-core-kit pull request 834); CUDA's figure is what a program can "
                       f"address. {THIRD_PARTY_REPORT}"),
          _A100_DATASHEET(1555 * GB, "B/s", "1,555GB/s", "A100 40GB SXM column. " + third_party("thundercompute.com/blog/nvidia-a100-specs-full-guide and glennklockwood.com/garden/processors/A100")),
          ("A100 40GB SXM", "A100 SXM 40GB", "A100-SXM4-40GB")),
    _a100("a100-80gb", "A100-80GB",
          _A100_DATASHEET(80 * GB, "B", "80GB HBM2e", "NVIDIA's GB; stored as printed, 80e9 B. " + third_party("thundercompute.com/blog/nvidia-a100-specs-full-guide and glennklockwood.com/garden/processors/A100")),
          _visible_mib(_MODAL_SMI, 81920, "A100 80GB: 81920MiB (85.89 GB)"),
          _A100_DATASHEET(2039 * GB, "B/s", "2,039GB/s", "A100 80GB SXM column (the 80GB PCIe card: 1,935GB/s). " + third_party("thundercompute.com/blog/nvidia-a100-specs-full-guide and glennklockwood.com/garden/processors/A100")),
          ("A100 80GB SXM", "A100 SXM 80GB", "A100-SXM4-80GB")),
    Chip(
        key="h100-sxm", name="H100-SXM", vendor="NVIDIA", source="vendor",
        hbm=_H100_DATASHEET(80 * GB, "B", "80GB", "H100 SXM; NVIDIA's GB, stored as printed, 80e9 B. " + _H100_TP),
        hbm_visible=_visible_mib(_H100_SMI, 81559, "NVIDIA H100 80GB HBM3 ... 0MiB /  81559MiB",
                                 "The same total (85520809984 bytes) in modal-client pull request 2797."),
        hbm_bandwidth=_H100_DATASHEET(
            3350 * GB, "B/s", "3.35TB/s",
            "H100 SXM. The 2022 architecture post gave 3 TB/s before the final memory clocks; "
            f"document 002 uses 3.35e12. {_H100_TP}"),
        peak_flops=_hopper_peaks(_H100_DATASHEET, "teraFLOPS"),
        on_chip=_HOPPER_POST(50 * MB, "B", "50 MB L2 cache",
                             "NVIDIA's MB, as in document 002. The post's sentence 'A 50 MB L2 cache in H100 is "
                             "1.25x larger than the A100 40 MB L2' was seen in a third-party copy."),
        tdp=_H100_DATASHEET(700.0, "W", "Up to 700W (configurable)", _H100_TP),
        interconnect=_H100_DATASHEET(900 * GB, "B/s", "900GB/s",
                                     f"{_NVLINK4} NVIDIA/nccl issue 1264 states it as 'unidirectional ... 450GB/s "
                                     f"theoretical'. {_H100_TP}"),
        aliases=("H100", "H100 SXM", "H100 SXM5", "H100-SXM5-80GB", "H100 80GB HBM3"),
    ),
    Chip(
        key="h200", name="H200", vendor="NVIDIA", source="vendor",
        hbm=_H200_MLPERF(141 * GB, "B", '"accelerator_memory_capacity": "141 GB"',
                         "H200 SXM; NVIDIA's GB, stored as printed, 141e9 B. The product page prints '141GB'."),
        hbm_visible=_visible_mib(_H200_SMI, 143771, "NVIDIA H200 ... 0MiB / 143771MiB"),
        hbm_bandwidth=_H200_PAGE(4800 * GB, "B/s", "4.8TB/s",
                                 "H200 SXM. " + third_party("allenai/open-instruct pull request 1441 ('4.8 TB/s memory "
                                                            "bandwidth')")),
        peak_flops=_hopper_peaks(_H200_PAGE, "TFLOPS"),
        on_chip=_HOPPER_POST(50 * MB, "B", "50 MB L2 cache",
                             "The H100 SXM's L2, inferred: the H200 is the same GH100 die with more HBM; no "
                             "source giving the H200's own L2 was found."),
        tdp=_H200_MLPERF(700.0, "W", '"hw_notes": "H200 TGP 700W"'),
        interconnect=_H200_MLPERF(900 * GB, "B/s", '"accelerator_interconnect": "18x 4th Gen NVLink, 900GB/s"',
                                  _NVLINK4),
        aliases=("H200 SXM", "H200-SXM-141GB"),
    ),
    Chip(
        key="b200", name="B200", vendor="NVIDIA", source="vendor",
        hbm=_DGX_B200_PAGE(1440 * GB / 8, "B", "1,440GB total",
                           "DGX B200 total for its 8 GPUs, divided by 8: 180 GB per GPU (MLPerf system files "
                           "name the part 'B200-SXM-180GB'). NVIDIA's 2024 announcements quoted 192 GB. " + _B200_TP),
        hbm_visible=_visible_mib(_B200_SMI, 183359, "NVIDIA B200 ... 166593MiB / 183359MiB",
                                 "More than the 180 GB sold: the device reports 192.3 GB, near the 192 GB "
                                 "first announced."),
        hbm_bandwidth=_DGX_B200_PAGE(64 * TB / 8, "B/s", "64TB/s",
                                     "DGX B200 total HBM3e bandwidth for 8 GPUs, divided by 8: 8 TB/s per GPU. "
                                     + _B200_TP),
        peak_flops={
            "bf16": _HGX_PAGE(36 * PETA / 16, "FLOP/s", "36 PFLOPS",
                              "HGX B200 FP16/BF16 total for 8 GPUs with sparsity; dense per GPU = 36/8/2 = "
                              "2.25 PFLOP/s, the value document 002 uses."),
            "fp16": _HGX_PAGE(36 * PETA / 16, "FLOP/s", "36 PFLOPS",
                              "HGX B200 FP16/BF16 total for 8 GPUs with sparsity, / 8 / 2."),
            "fp8": _DGX_B200_PAGE(72 * PETA / 16, "FLOP/s", "72 petaFLOPS",
                                  "DGX B200 FP8 total for 8 GPUs with sparsity; dense per GPU = 72/8/2 = 4.5 "
                                  "PFLOP/s, as pytorch/ao's roofline_utils.py has it from NVIDIA's Blackwell "
                                  "brief ('fp8_peak_tops': 4.5e15, 'divide by 2 because no sparsity')."),
            "int8": _DGX_B200_PAGE(72 * PETA / 16, "FLOP/s", "INT8 | 4500 | 9000",
                                   "Dense INT8 of the HGX B200 at 1,000 W, the fp8 rate. " + third_party(
                                       "glennklockwood.com/garden/processors/B200 (HGX table, TOPS dense | sparse)")),
            "fp4": _DGX_B200_PAGE(144 * PETA / 16, "FLOP/s", "144 petaFLOPS",
                                  "DGX B200 FP4 total for 8 GPUs with sparsity; dense per GPU = 144/8/2."),
        },
        on_chip=_B200_QUERY(126.5 * MB, "B", "L2 Cache Size: 126.50 MB",
                            f"A CUDA device query; the unit printed is MB. {THIRD_PARTY_REPORT} NVIDIA's "
                            "Blackwell tuning guide ('Increased L2 Capacity') gives 126 MB, as document 002 does."),
        tdp=_B200_MLPERF(1000.0, "W", '"hw_notes": "B200 TGP 1000W"', "Per GPU on an HGX B200 board. " + _B200_TP),
        interconnect=_DGX_B200_PAGE(
            14.4 * TB / 8, "B/s", "14.4TB/s aggregate bandwidth",
            "DGX B200 NVLink total for 8 GPUs, divided by 8: 1.8 TB/s per GPU (18 NVLink 5 links x "
            f"50 GB/s per direction). {BIDIRECTIONAL} {_B200_TP}"),
        aliases=("B200 SXM", "Blackwell B200", "B200-SXM-180GB"),
        note="NVIDIA publishes B200 numbers mostly as DGX/HGX 8-GPU totals; the per-GPU values "
        "here are those totals divided by 8 (and by 2 again for sparse peaks).",
    ),
)

# --- AMD: ROCm documentation and the product page --------------------------------------

_ROCM_SPECS = cite("https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html")
_ROCM_MI300 = cite("https://rocm.docs.amd.com/en/latest/conceptual/gpu-arch/mi300.html")
_AMD_MI300X = cite("https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html")
_MI300X_DENSE = "Row of ROCm's MI300X peak table (type | FLOPS/clock/CU | peak TFLOPS); dense."

_MI300X = Chip(
    key="mi300x", name="MI300X", vendor="AMD", source="vendor",
    hbm=_ROCM_SPECS(192 * GiB, "B", "VRAM (GiB): 192",
                    "ROCm's table labels it GiB (8 HBM3 stacks); AMD's product page and CDNA 3 white "
                    "paper write '192 GB'."),
    hbm_bandwidth=_ROCM_MI300(5.3 * TB, "B/s", "5.3 TB per second", "Theoretical aggregated peak memory bandwidth."),
    peak_flops={
        "fp32": _ROCM_MI300(163.4 * TERA, "FLOP/s", "Matrix FP32 | 256 | 163.4", "Vector FP32 is also 163.4."),
        "tf32": _ROCM_MI300(653.7 * TERA, "FLOP/s", "Vector TF32 | 1024 | 653.7", _MI300X_DENSE),
        "bf16": _ROCM_MI300(1307.4 * TERA, "FLOP/s", "Matrix BF16 | 2048 | 1307.4", _MI300X_DENSE),
        "fp16": _ROCM_MI300(1307.4 * TERA, "FLOP/s", "Matrix FP16 | 2048 | 1307.4", _MI300X_DENSE),
        "fp8": _ROCM_MI300(2614.9 * TERA, "FLOP/s", "Matrix FP8 | 4096 | 2614.9", _MI300X_DENSE),
        "int8": _ROCM_MI300(2614.9 * TERA, "FLOP/s", "Matrix INT8 | 4096 | 2614.9", _MI300X_DENSE),
    },
    on_chip=_ROCM_SPECS(32 * MiB, "B", "L2 Cache (MiB): 32 (4 per XCD)",
                        "Total of the eight XCDs' 4 MiB L2 caches. Behind them sits the 256 MiB AMD "
                        "Infinity Cache ('L3 Cache (MiB): 256' in the same table), not counted here."),
    tdp=_AMD_MI300X(750.0, "W", "750W", "Peak total board power of the OAM module. "
                    + third_party("gpu.blog/gpus/instinct-mi300x-mi300x ('TDP 750 W')")),
    aliases=("Instinct MI300X", "AMD Instinct MI300X"),
    note="No interconnect stored: AMD quotes Infinity Fabric as a per-link peak (128 GB/s) and a "
    "link count rather than a per-GPU total.",
)

CHIPS: tuple[Chip, ...] = (*_TPUS, *_NVIDIA_GPUS, _MI300X)
"""Every vendor chip record, TPUs first."""
