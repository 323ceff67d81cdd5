"""AMD's GPUs as the ROCm documentation and AMD's product pages describe them (gathered with NVIDIA's in
``vendor_gpus``). Values in plain SI units (see ``vendor_chips``). Chapter :ref:`ch-rooflines` and the hardware
appendix.
"""

from __future__ import annotations

from hwlib.data.records import Chip, cite
from hwlib.data.vendor_notes import third_party
from hwlib.units import TB, TERA, GiB, MiB

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
        "ROCm's table labels it GiB (8 HBM3 stacks); AMD's product page and CDNA 3 white paper write '192 GB'.",
    ),
    hbm_bandwidth=_ROCM_MI300(5.3 * TB, "B/s", "5.3 TB per second", "Theoretical aggregated peak memory bandwidth."),
    peak_flops={
        "fp32": _ROCM_MI300(163.4 * TERA, "FLOP/s", "Matrix FP32 | 256 | 163.4", "Vector FP32 is also 163.4."),
        "tf32": _ROCM_MI300(653.7 * TERA, "FLOP/s", "Vector TF32 | 1024 | 653.7", _MI300X_DENSE),
        "bf16": _ROCM_MI300(1307.4 * TERA, "FLOP/s", "Matrix BF16 | 2048 | 1307.4", _MI300X_DENSE),
        "fp16": _ROCM_MI300(1307.4 * TERA, "FLOP/s", "Matrix FP16 | 2048 | 1307.4", _MI300X_DENSE),
        "fp8": _ROCM_MI300(2614.9 * TERA, "FLOP/s", "Matrix FP8 | 4096 | 2614.9", _MI300X_DENSE),
        "int8": _ROCM_MI300(2614.9 * TERA, "FLOP/s", "Matrix INT8 | 4096 | 2614.9", _MI300X_DENSE),
    },
    on_chip=_ROCM_SPECS(
        32 * MiB,
        "B",
        "L2 Cache (MiB): 32 (4 per XCD)",
        "Total of the eight XCDs' 4 MiB L2 caches. Behind them sits the 256 MiB AMD "
        "Infinity Cache ('L3 Cache (MiB): 256' in the same table), not counted here.",
    ),
    tdp=_AMD_MI300X(
        750.0,
        "W",
        "750W",
        "Peak total board power of the OAM module. "
        + third_party("gpu.blog/gpus/instinct-mi300x-mi300x ('TDP 750 W')"),
    ),
    aliases=("Instinct MI300X", "AMD Instinct MI300X"),
    note="No interconnect stored: AMD quotes Infinity Fabric as a per-link peak (128 GB/s) and a "
    "link count rather than a per-GPU total.",
)

AMD_GPUS: tuple[Chip, ...] = (_MI300X,)
"""AMD's GPUs."""
