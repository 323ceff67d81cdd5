"""The device JAX runs on: platform, kind, CPU cores, clock and SIMD width, and its theoretical peaks.

A CPU's theoretical peak is cores x clock x FLOPs per cycle, and FLOPs per cycle = SIMD lanes x 2
(a fused multiply-add is two FLOPs) x FMA units per core (Dolbeau, "Theoretical peak FLOPS per
instruction set: a tutorial", J. Supercomputing 74(3), 2018, Sec. 2). Lanes and the clock are
read from /proc/cpuinfo; the number of FMA units per core is not in it, so it stays an explicit
argument. Explained in the chapter :ref:`ch-own-roofline`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from hwlib._checks import Number, broadcast, one_of, positive, scalar_or_array
from hwlib.data import chip
from hwlib.measure.kernels import MEASURE_DTYPES, load_jax
from hwlib.units import GiB, MiB, dtype_bytes

SIMD_FP32_LANES = {"avx512f": 16, "avx2": 8, "avx": 8, "sse2": 4, "asimd": 4, "neon": 4}
"""fp32 lanes of the widest vector unit each /proc/cpuinfo flag announces (512-, 256- and
128-bit registers hold 16, 8 and 4 fp32 values), in order of preference."""


@dataclass(frozen=True)
class MeasurePlan:
    """Sizes to measure on one platform: square matmul sizes, stream array bytes, repeats."""

    platform: str
    matmul_sizes: tuple[int, ...]
    stream_bytes: int
    repeats: int
    reason: str

    @property
    def matvec_size(self) -> int:
        """n of an n x n fp32 matrix-vector product whose matrix is about ``stream_bytes`` (multiple of 64)."""
        return max(64, int((self.stream_bytes / dtype_bytes("fp32")) ** 0.5) // 64 * 64)


@dataclass(frozen=True)
class CpuInfo:
    """What /proc/cpuinfo says about the CPU; None where it does not say."""

    model: str | None
    clock_hz: float | None
    flags: frozenset[str] = field(default_factory=frozenset)

    @property
    def simd(self) -> str | None:
        """The widest vector extension announced, e.g. 'avx512f', or None."""
        return next((flag for flag in SIMD_FP32_LANES if flag in self.flags), None)

    @property
    def fp32_lanes(self) -> int | None:
        return SIMD_FP32_LANES[self.simd] if self.simd else None

    @property
    def has_fma(self) -> bool:
        """Fused multiply-add: the x86 'fma' flag (AVX-512 implies it); Arm's asimd has FMLA."""
        return bool({"fma", "avx512f", "asimd"} & self.flags)


@dataclass(frozen=True)
class DeviceInfo:
    """The device JAX runs on: platform, kind, count, CPU cores and what /proc/cpuinfo says."""

    platform: str
    device_kind: str
    device_count: int
    cpu_cores: int
    cpu: CpuInfo
    memory_bytes: float | None
    catalogue_key: str | None

    def describe(self) -> dict[str, str]:
        """Readable fields for a table, "unknown" where a value cannot be read."""
        cpu = self.cpu

        def known(value: object, text: str) -> str:
            return "unknown" if value is None else text

        return {
            "platform": self.platform,
            "device kind": self.device_kind,
            "devices": str(self.device_count),
            "in the catalogue as": self.catalogue_key or "not in the catalogue",
            "CPU cores available": str(self.cpu_cores),
            "CPU model (/proc/cpuinfo)": cpu.model or "unknown",
            "CPU clock (/proc/cpuinfo)": known(cpu.clock_hz, f"{(cpu.clock_hz or 0) / 1e9:.2f} GHz"),
            "widest SIMD extension": cpu.simd or "unknown",
            "fp32 lanes per vector": known(cpu.fp32_lanes, str(cpu.fp32_lanes)),
            "fused multiply-add": "yes" if cpu.has_fma else "not announced",
            "memory": known(self.memory_bytes, f"{(self.memory_bytes or 0) / GiB:.1f} GiB"),
        }


def parse_cpuinfo(text: str) -> CpuInfo:
    """Model name, clock (Hz) and flags of the first processor in a /proc/cpuinfo ``text``."""
    if not isinstance(text, str):
        raise TypeError(f"text must be the contents of /proc/cpuinfo as a string, got {text!r}")
    first = text.split("\n\n", 1)[0]
    fields: dict[str, str] = {}
    for line in first.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip().lower(), value.strip())
    model = fields.get("model name") or fields.get("cpu model") or None
    clock = None
    if fields.get("cpu mhz"):
        try:
            clock = float(fields["cpu mhz"]) * 1e6
        except ValueError:
            clock = None
    if clock is not None and not clock > 0:
        clock = None
    flags = frozenset((fields.get("flags") or fields.get("features") or "").split())
    return CpuInfo(model=model, clock_hz=clock, flags=flags)


def _read_cpuinfo() -> CpuInfo:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            return parse_cpuinfo(handle.read())
    except OSError:
        return CpuInfo(model=None, clock_hz=None)


def _cpu_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _physical_memory() -> float | None:
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def device_info() -> DeviceInfo:
    """Describe JAX's default device; on a CPU, also cores, clock and SIMD width from /proc/cpuinfo.

    ``catalogue_key`` is the hwlib catalogue record whose name matches the device kind
    (e.g. "NVIDIA H200" -> "h200"), or None (every CPU).
    """
    jax, _ = load_jax()
    device = jax.devices()[0]
    platform, kind = device.platform, str(device.device_kind)
    try:
        key = chip(kind).key if platform != "cpu" else None
    except KeyError:
        key = None
    memory = None
    if platform == "cpu":
        memory = _physical_memory()
    else:
        try:
            stats = device.memory_stats() or {}
        except Exception:  # some backends do not report memory
            stats = {}
        memory = float(stats["bytes_limit"]) if stats.get("bytes_limit") else None
    return DeviceInfo(
        platform=platform,
        device_kind=kind,
        device_count=jax.device_count(),
        cpu_cores=_cpu_cores(),
        cpu=_read_cpuinfo(),
        memory_bytes=memory,
        catalogue_key=key,
    )


def cpu_peak_flops_per_s(cores: Number, clock_hz: Number, fp32_lanes: Number, fma_units: Number) -> Number:
    """fp32 peak of a CPU in FLOP/s: cores x clock x lanes x 2 (FMA) x FMA units per core.

    Dolbeau 2018, Sec. 2. ``clock_hz`` in Hz; the result is an upper bound that assumes
    every core issues ``fma_units`` full-width FMAs every cycle at that clock.
    """
    values = broadcast(
        cores=positive("cores", cores, integral=True),
        clock_hz=positive("clock_hz", clock_hz),
        fp32_lanes=positive("fp32_lanes", fp32_lanes, integral=True),
        fma_units=positive("fma_units", fma_units, integral=True),
    )
    count, clock, lanes, units = values
    return scalar_or_array(count * clock * lanes * 2.0 * units)


def estimated_cpu_peak(info: DeviceInfo, fma_units: Number = (1, 2)) -> Number | None:
    """fp32 peak FLOP/s of ``info``'s CPU for each FMA-unit count, or None when it cannot be computed.

    None unless the device is a CPU and /proc/cpuinfo gives both the clock and a SIMD width
    with fused multiply-add: a made-up clock or width would make a made-up peak.
    """
    if not isinstance(info, DeviceInfo):
        raise TypeError(f"info must be a DeviceInfo from hw.measure.device_info(), got {info!r}")
    cpu = info.cpu
    if info.platform != "cpu" or cpu.clock_hz is None or cpu.fp32_lanes is None or not cpu.has_fma:
        return None
    return cpu_peak_flops_per_s(info.cpu_cores, cpu.clock_hz, cpu.fp32_lanes, fma_units)


def theoretical_peaks(info: DeviceInfo, dtype: str = "fp32") -> dict[str, float]:
    """Known theoretical peaks (FLOP/s) of ``info``'s device for ``dtype``, by label; empty when none is known.

    A CPU: the fp32 estimates of ``estimated_cpu_peak`` for one and two FMA units per core
    (bf16 is left unknown: its rate depends on which instructions the compiler emits). An
    accelerator in the catalogue: the vendor's dense peak for ``dtype``, if it has one.
    """
    if not isinstance(info, DeviceInfo):
        raise TypeError(f"info must be a DeviceInfo from hw.measure.device_info(), got {info!r}")
    one_of("dtype", dtype, MEASURE_DTYPES)
    if info.platform == "cpu":
        estimate = estimated_cpu_peak(info, (1, 2)) if dtype == "fp32" else None
        if estimate is None:
            return {}
        return {
            f"estimated {dtype} peak, {units} FMA unit{'s' if units > 1 else ''} per core": float(value)
            for units, value in zip((1, 2), estimate)
        }
    if info.catalogue_key is None:
        return {}
    vendor = chip(info.catalogue_key)
    if dtype not in vendor.peak_flops_per_s:
        return {}
    return {f"{vendor.label} {dtype} peak (vendor)": vendor.peak(dtype)}


def _last_level_cache_bytes() -> float | None:
    sizes = []
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        entries = [entry for entry in os.listdir(base) if entry.startswith("index")]
    except OSError:
        return None
    for entry in entries:
        try:
            with open(os.path.join(base, entry, "size"), encoding="utf-8") as handle:
                text = handle.read().strip()
        except OSError:
            continue
        match = re.fullmatch(r"(\d+)([KMG]?)", text)
        if match:
            sizes.append(int(match[1]) * {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}[match[2]])
    return float(max(sizes)) if sizes else None


def measurement_plan(platform: str | None = None) -> MeasurePlan:
    """Sizes for ``platform`` ("cpu", "gpu", "tpu"; default: JAX's default device) that run in seconds.

    CPU: square matmuls of 32 to 1024, 7 repeats, and a stream array of twice the
    last-level cache (at least 64 MiB, at most 1/16 of the memory), so the stream reads and
    writes DRAM rather than cache. GPU and TPU: matmuls of 64 to 8192, 10 repeats, and a
    1 GiB array, several times any accelerator's on-chip cache.
    """
    if platform is None:
        jax, _ = load_jax()
        platform = jax.devices()[0].platform
    one_of("platform", platform, ("cpu", "gpu", "cuda", "rocm", "tpu"))
    if platform == "cpu":
        cache, memory = _last_level_cache_bytes(), _physical_memory()
        stream = max(64 * MiB, 2 * cache) if cache else 256 * MiB
        reason = (
            f"2 x last-level cache ({cache / MiB:,.0f} MiB), at least 64 MiB"
            if cache
            else "last-level cache size unknown: 256 MiB"
        )
        if memory and stream > memory / 16:
            stream, reason = memory / 16, reason + ", capped at 1/16 of the memory"
        return MeasurePlan("cpu", (32, 64, 128, 256, 512, 1024), int(stream // 64 * 64), 7, reason)
    return MeasurePlan(
        platform,
        (64, 256, 512, 1024, 2048, 4096, 8192),
        int(GiB),
        10,
        "1 GiB: several times any accelerator's on-chip cache",
    )
