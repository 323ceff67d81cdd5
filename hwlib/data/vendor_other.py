"""Accelerators that are neither GPUs nor TPUs: Intel's Gaudi 3 and AWS's Trainium2, as their makers describe them
(gathered with the others in ``vendor_chips``). Values in plain SI units (see ``vendor_chips``); dense peaks only.
Each is its own family (``Chip.family``: "Gaudi", "Trainium"): no measured run of either is in the forecast's fit,
so a forecast on one says its error is unknown and names the closest measured kind. Chapter :ref:`ch-rooflines` and
the hardware appendix.
"""

from __future__ import annotations

from hwlib.data.records import Chip, cite
from hwlib.data.vendor_notes import BIDIRECTIONAL
from hwlib.units import GB, TB, TERA, MiB

_READ = "2026-12-06"

# --- Intel ----------------------------------------------------------------------------

_GAUDI3_SLIDES = cite(
    "R. Kaplan (Intel), 'Intel Gaudi 3 AI Accelerator: Architected for Gen AI Training and Inference', Hot Chips 2024 "
    "(August 2024), the slides 'Gaudi Product Generations' and 'Intel Gaudi 3 Spec and Block Diagram', as a "
    "third-party report site reproduces their text (sgpjbg.com/baogao/465025.html): Intel's own copy was not among "
    "the stored pages",
    _READ,
)
_GAUDI3_OAM = (
    "The HL-325L OAM module. Intel's product page was not among the stored copies; ServeTheHome's Hot Chips 2024 "
    "write-up and Intel's April 2024 launch coverage print the same figures."
)
_GAUDI3_PEAK = (
    f"{_GAUDI3_OAM} The MME's matrix peak, the same for BF16 and FP8 (Gaudi 3 runs FP8 at the BF16 rate). Some "
    "third-party tables give 1,678 TFLOPS for the same card (stas00/ml-engineering's MAMF table: 'Intel Gaudi 3 | "
    "1243.0 | 1677'), a lower clock; the catalogue keeps Intel's figure."
)

# --- AWS ------------------------------------------------------------------------------

_TRAINIUM2 = cite(
    "AWS Neuron documentation, 'Trainium2 Architecture', about-neuron/arch/neuron-hardware/trainium2.rst "
    "(github.com/aws-neuron/aws-neuron-sdk, commit 7c165a3e01131a86537f6e0b3ba43716e44d8bc4; "
    "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/arch/neuron-hardware/trainium2.html)",
    _READ,
)
_TRN2_DENSE = "Eight NeuronCore-v3 together, dense; the page's sparse figure (2,563 TFLOPS) is left out."

OTHER_ACCELERATORS: tuple[Chip, ...] = (
    Chip(
        key="gaudi3",
        name="Gaudi 3",
        vendor="Intel",
        source="vendor",
        hbm=_GAUDI3_SLIDES(128 * GB, "B", "HBM Capacity 128 GB", f"{_GAUDI3_OAM} Eight HBM2e stacks."),
        hbm_visible=cite("hl-smi output in a public repository file (index id 63540194583)", _READ)(
            131072 * MiB,
            "B",
            "0, HL-325L, ... 131072 MiB, 130400 MiB, 672 MiB",
            f"memory.total of an HL-325L: 131072 MiB = 128 GiB, {131072 * MiB / GB:.1f} GB; the test fixture of a "
            "monitoring tool that parses hl-smi (third party), not an Intel page.",
        ),
        hbm_bandwidth=_GAUDI3_SLIDES(3.67 * TB, "B/s", "HBM Bandwidth 3.67 TB/s", _GAUDI3_OAM),
        peak_flops={
            "bf16": _GAUDI3_SLIDES(1835 * TERA, "FLOP/s", "BF16 Matrix TFLOPs 1835", _GAUDI3_PEAK),
            "fp8": _GAUDI3_SLIDES(1835 * TERA, "FLOP/s", "FP8 Matrix TFLOPs 1835", _GAUDI3_PEAK),
        },
        on_chip=_GAUDI3_SLIDES(
            96e6,
            "B",
            "On-die SRAM Capacity 96 MB",
            f"{_GAUDI3_OAM} Four deep-learning cores of 24 MB cache each (the slide's 'Each DCORE: 2xMME, 16xTPC, "
            "24MB cache'); Intel's MB as it writes it, 96e6 B.",
        ),
        tdp=_GAUDI3_SLIDES(
            900.0, "W", "TDP (OAM) ... 900W (Air)/1200W (Liquid)", f"{_GAUDI3_OAM} The air-cooled module's."
        ),
        interconnect=_GAUDI3_SLIDES(
            1200 * GB,
            "B/s",
            "Networking 1200 GB/s bidirectional",
            f"{_GAUDI3_OAM} 24 ports of 200 Gb Ethernet (RoCE) on the chip, which carry both the links inside a "
            f"server and those between servers. {BIDIRECTIONAL}",
        ),
        aliases=("Intel Gaudi 3", "Gaudi3", "HL-325L"),
        note="Two compute dies of 4 deep-learning cores (8 matrix engines, 64 tensor processor cores); its own "
        "family, with no measured run in the forecast's fit.",
    ),
    Chip(
        key="trainium2",
        name="Trainium2",
        vendor="AWS",
        source="vendor",
        hbm=_TRAINIUM2(
            96 * 2**30, "B", "96 GiB of device memory", "Four HBM stacks; AWS writes GiB (the comparison table: 96)."
        ),
        hbm_bandwidth=_TRAINIUM2(2.9 * TB, "B/s", "with 2.9 TB/sec of bandwidth", "The device memory's."),
        peak_flops={
            "fp32": _TRAINIUM2(181 * TERA, "FLOP/s", "181 FP32 TFLOPS", _TRN2_DENSE),
            "tf32": _TRAINIUM2(667 * TERA, "FLOP/s", "667 BF16/FP16/TF32 TFLOPS", _TRN2_DENSE),
            "bf16": _TRAINIUM2(667 * TERA, "FLOP/s", "667 BF16/FP16/TF32 TFLOPS", _TRN2_DENSE),
            "fp16": _TRAINIUM2(667 * TERA, "FLOP/s", "667 BF16/FP16/TF32 TFLOPS", _TRN2_DENSE),
            "fp8": _TRAINIUM2(1299 * TERA, "FLOP/s", "1,299 FP8 TFLOPS", _TRN2_DENSE),
        },
        on_chip=_TRAINIUM2(
            224 * MiB / 8,
            "B",
            "SBUF Capacity (MiB) ... 224",
            "One NeuronCore-v3's software-managed SRAM (SBUF): the chip's 224 MiB over its eight cores [derived], as "
            "a TPU record holds one TensorCore's VMEM (a GEMM blocks into its own core's scratchpad).",
        ),
        interconnect=_TRAINIUM2(
            1280 * GB,
            "B/s",
            "NeuronLink-v3 ... provides 1.28 TB/sec bandwidth per chip",
            "Chip-to-chip NeuronLink, per chip (the comparison table: 'Inter-chip Interconnect (GB/sec/chip) 1280'); "
            "the page does not say whether this counts both directions.",
        ),
        aliases=("AWS Trainium2", "Trn2", "Trainium 2"),
        note="AWS publishes no power figure for the chip. Its own family, with no measured run in the forecast's fit.",
    ),
)
"""Intel's Gaudi 3 and AWS's Trainium2."""
