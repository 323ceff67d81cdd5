"""Measure this machine: achieved FLOP/s of matmuls, achieved bandwidth, XLA's own counts.

Everything runs with JAX on its default device (the CPU, or a GPU or TPU when one is
present, with no code change). A kernel is compiled by ``jax.jit``, run once to warm up
(compilation is not timed), then timed ``repeats`` times with ``time.perf_counter``
around the call and ``jax.block_until_ready`` (JAX dispatches asynchronously, so without
it the clock would stop before the work does); the median is the result, because one
slow repeat (another process, a page fault) moves the mean but not the median.

Kernels and what hwlib counts for them:

* matmul ``(m x k) @ (k x n)``: ``hw.matmul_flops`` (2 m k n) and the minimum traffic
  ``hw.matmul_bytes`` (each operand read once, the result written once), the model of the
  chapter "Rooflines and ridge points";
* stream ``y = a x + b`` over a large vector, updated in place (the input buffer is
  donated to the output): 2 FLOPs and 2 x element-size bytes (one read, one write) per
  element, the "scale and add" of McCalpin's STREAM benchmark ("Memory bandwidth and
  machine balance in current high performance computers", IEEE TCCA Newsletter, 1995),
  with a scalar instead of a second vector so the traffic is one read and one write.

The roofline built from these measurements is Williams, Waterman and Patterson's
("Roofline", CACM 52(4), 2009), with the measured best matmul rate as the roof and the
measured stream bandwidth as the slope. A CPU's theoretical peak is cores x clock x FLOPs
per cycle, and FLOPs per cycle = SIMD lanes x 2 (a fused multiply-add is two FLOPs) x FMA
units per core (Dolbeau, "Theoretical peak FLOPS per instruction set: a tutorial",
J. Supercomputing 74(3), 2018, Sec. 2). Lanes and the clock are read from /proc/cpuinfo;
the number of FMA units per core is not in it, so it stays an explicit argument.

JAX is imported only inside the functions, so ``import hwlib`` stays fast and does not need
JAX. Explained in the chapter "Your own roofline".
"""

from __future__ import annotations

import datetime
import os
import re
import statistics
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from hwlib._checks import as_real_array, broadcast, one_of, positive, scalar_or_array, Number
from hwlib.hardware import Chip, Sourced
from hwlib.roofline import matmul_bytes, matmul_flops
from hwlib.units import GiB, MiB, dtype_bytes

MEASURE_DTYPES = ("fp32", "bf16")
"""dtypes the measuring functions accept (hwlib's names; JAX's float32 and bfloat16)."""

KERNELS = ("matmul", "stream")

STREAM_FLOPS_PER_ELEMENT = 2
"""y = a x + b: one multiply and one add per element."""

STREAM_ARRAYS_TOUCHED = 2
"""y = a x + b in place: x read once, y written once (a and b are scalars)."""

SIMD_FP32_LANES = {"avx512f": 16, "avx2": 8, "avx": 8, "sse2": 4, "asimd": 4, "neon": 4}
"""fp32 lanes of the widest vector unit each /proc/cpuinfo flag announces (512-, 256- and
128-bit registers hold 16, 8 and 4 fp32 values), in order of preference."""


def _jax() -> tuple:
    import jax
    import jax.numpy as jnp

    return jax, jnp


def _jax_dtype(dtype: str) -> object:
    one_of("dtype", dtype, MEASURE_DTYPES)
    _, jnp = _jax()
    return {"fp32": jnp.float32, "bf16": jnp.bfloat16}[dtype]


def _whole(name: str, value: object) -> int:
    array = as_real_array(name, value, minimum=0.0, strictly_above=True, integral=True)
    if array.ndim:
        raise TypeError(f"{name} must be one whole number (one compilation per shape), got {value!r}")
    return int(array)


def _matmul(dtype: str) -> Callable:
    """The jitted matmul: fp32 at full fp32 precision (GPUs would otherwise use TF32 and TPUs
    bf16 passes, which are other dtypes' peaks); bf16 at the backend's default."""
    jax, _ = _jax()
    precision = jax.lax.Precision.HIGHEST if dtype == "fp32" else jax.lax.Precision.DEFAULT
    return jax.jit(lambda a, b: jax.numpy.matmul(a, b, precision=precision))


def _repeats(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"repeats must be a whole number >= 1, got {value!r}")
    return int(value)


# --- records -----------------------------------------------------------------------


@dataclass(frozen=True)
class Measurement:
    """One timed kernel: hwlib's FLOP and byte counts and the wall-clock times of its repeats (s)."""

    kernel: str
    dtype: str
    shape: tuple[int, ...]
    flops: float
    n_bytes: float
    times_s: tuple[float, ...]

    def __post_init__(self) -> None:
        one_of("kernel", self.kernel, KERNELS)
        one_of("dtype", self.dtype, MEASURE_DTYPES)
        positive("flops", self.flops)
        positive("n_bytes", self.n_bytes)
        times = positive("times_s", list(self.times_s))
        if times.ndim != 1 or times.size == 0:
            raise ValueError(f"times_s must be a non-empty tuple of seconds, got {self.times_s!r}")

    @property
    def median_s(self) -> float:
        return float(statistics.median(self.times_s))

    @property
    def spread(self) -> float:
        """Slowest over fastest repeat: 1.0 means perfectly repeatable."""
        return max(self.times_s) / min(self.times_s)

    @property
    def flops_per_s(self) -> float:
        """Achieved FLOP/s at the median time."""
        return self.flops / self.median_s

    @property
    def bytes_per_s(self) -> float:
        """Achieved bytes/s at the median time, counting hwlib's (minimum) bytes."""
        return self.n_bytes / self.median_s

    @property
    def intensity(self) -> float:
        """hwlib's FLOPs over hwlib's bytes (FLOP/byte)."""
        return self.flops / self.n_bytes

    @property
    def name(self) -> str:
        if self.kernel == "stream":
            return f"stream {self.dtype}, {self.n_bytes / STREAM_ARRAYS_TOUCHED / MiB:,.0f} MiB"
        m, k, n = self.shape
        label = f"{m}" if m == k == n else f"{m}x{k}x{n}"
        return f"matmul {self.dtype}, {label}"


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
        return max(64, int(np.sqrt(self.stream_bytes / dtype_bytes("fp32"))) // 64 * 64)


@dataclass(frozen=True)
class XlaCost:
    """What XLA's cost analysis reports for one compiled kernel: FLOPs and bytes accessed."""

    flops: float
    bytes_accessed: float


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


# --- the device ----------------------------------------------------------------------


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
    from hwlib.hardware import chip

    jax, _ = _jax()
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
    return DeviceInfo(platform=platform, device_kind=kind, device_count=jax.device_count(),
                      cpu_cores=_cpu_cores(), cpu=_read_cpuinfo(), memory_bytes=memory, catalogue_key=key)


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
        raise TypeError(f"info must be a DeviceInfo from hw.device_info(), got {info!r}")
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
        raise TypeError(f"info must be a DeviceInfo from hw.device_info(), got {info!r}")
    one_of("dtype", dtype, MEASURE_DTYPES)
    if info.platform == "cpu":
        estimate = estimated_cpu_peak(info, (1, 2)) if dtype == "fp32" else None
        if estimate is None:
            return {}
        return {f"estimated {dtype} peak, {units} FMA unit{'s' if units > 1 else ''} per core": float(value)
                for units, value in zip((1, 2), estimate)}
    if info.catalogue_key is None:
        return {}
    from hwlib.hardware import chip

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
        jax, _ = _jax()
        platform = jax.devices()[0].platform
    one_of("platform", platform, ("cpu", "gpu", "cuda", "rocm", "tpu"))
    if platform == "cpu":
        cache, memory = _last_level_cache_bytes(), _physical_memory()
        stream = max(64 * MiB, 2 * cache) if cache else 256 * MiB
        reason = (f"2 x last-level cache ({cache / MiB:,.0f} MiB), at least 64 MiB" if cache
                  else "last-level cache size unknown: 256 MiB")
        if memory and stream > memory / 16:
            stream, reason = memory / 16, reason + ", capped at 1/16 of the memory"
        return MeasurePlan("cpu", (32, 64, 128, 256, 512, 1024), int(stream // 64 * 64), 7, reason)
    return MeasurePlan(platform, (64, 256, 512, 1024, 2048, 4096, 8192), int(GiB), 10,
                       "1 GiB: several times any accelerator's on-chip cache")


# --- timing ----------------------------------------------------------------------------


def _time(step: Callable, state: object, repeats: int, chained: bool) -> tuple[float, ...]:
    """Warm up once, then time ``repeats`` calls; ``chained`` feeds each output back as input."""
    jax, _ = _jax()
    result = jax.block_until_ready(step(*state))
    if chained:
        state = (result, *state[1:])
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = jax.block_until_ready(step(*state))
        times.append(time.perf_counter() - start)
        if chained:
            state = (result, *state[1:])
    return tuple(times)


def _matmul_operands(m: int, k: int, n: int, dtype: str) -> tuple:
    """Uniform random operands made by numpy and copied to the device (no compilation per shape).

    At most 2^20 random values are drawn; larger operands repeat them, which costs a copy
    instead of seconds of random number generation and does not change a kernel's speed.
    """
    jax, _ = _jax()
    generator = np.random.default_rng(0)
    jdtype = _jax_dtype(dtype)

    def operand(shape: tuple[int, ...]) -> object:
        values = generator.random(min(int(np.prod(shape)), 2**20), dtype=np.float32)
        return jax.device_put(np.resize(values, shape).astype(jdtype, copy=False))

    return operand((m, k)), operand((k, n) if n > 1 else (k,))


def measure_matmul(m: int, k: int, n: int, dtype: str = "fp32", repeats: int = 5) -> Measurement:
    """Time ``(m x k) @ (k x n)`` (n = 1: a matrix-vector product) in ``dtype`` on the default device.

    FLOPs and bytes are hwlib's (``hw.matmul_flops``, ``hw.matmul_bytes``); times in seconds.
    fp32 is asked for at full precision (``Precision.HIGHEST``), so a GPU does not quietly
    use TF32 nor a TPU bf16 passes.
    On a CPU, XLA may convert bf16 operands to fp32 and multiply in fp32 (see
    ``xla_matmul_cost``), so bf16 is measured, not assumed faster.
    """
    rows, inner, cols = _whole("m", m), _whole("k", k), _whole("n", n)
    one_of("dtype", dtype, MEASURE_DTYPES)
    count = _repeats(repeats)
    jax, _ = _jax()
    operands = _matmul_operands(rows, inner, cols, dtype)
    times = _time(_matmul(dtype), operands, count, chained=False)
    return Measurement("matmul", dtype, (rows, inner, cols), float(matmul_flops(rows, inner, cols)),
                       float(matmul_bytes(rows, inner, cols, dtype_bytes(dtype))), times)


def stream_counts(n_elements: Number, dtype: str = "fp32") -> tuple[Number, Number]:
    """FLOPs and bytes of y = a x + b in place over ``n_elements``: (2 n, 2 n x element size)."""
    elements = positive("n_elements", n_elements, integral=True)
    size = dtype_bytes(one_of("dtype", dtype, MEASURE_DTYPES))
    return (scalar_or_array(STREAM_FLOPS_PER_ELEMENT * elements),
            scalar_or_array(STREAM_ARRAYS_TOUCHED * size * elements))


def measure_stream(n_bytes: int, dtype: str = "fp32", repeats: int = 5) -> Measurement:
    """Time y = a x + b in place over an array of ``n_bytes`` bytes; its ``bytes_per_s`` is the bandwidth.

    The input buffer is donated to the output, so no call allocates (and page-faults) a
    fresh array: each call reads ``n_bytes`` and writes ``n_bytes``.
    """
    size = dtype_bytes(one_of("dtype", dtype, MEASURE_DTYPES))
    elements = _whole("n_bytes", n_bytes) // int(size)
    if elements < 1:
        raise ValueError(f"n_bytes must hold at least one {dtype} element, got {n_bytes!r}")
    count = _repeats(repeats)
    jax, jnp = _jax()
    kernel = jax.jit(lambda x, a, b: x * a + b, donate_argnums=0)
    x = jnp.ones((elements,), _jax_dtype(dtype))
    a, b = jnp.asarray(0.5, x.dtype), jnp.asarray(0.25, x.dtype)
    with warnings.catch_warnings():  # a backend that cannot donate says so and copies instead
        warnings.simplefilter("ignore")
        times = _time(kernel, (x, a, b), count, chained=True)
    flops, moved = stream_counts(elements, dtype)
    return Measurement("stream", dtype, (elements,), float(flops), float(moved), times)


def measure_matmuls(sizes: Sequence[int], dtypes: Sequence[str] = MEASURE_DTYPES,
                    repeats: int = 5) -> list[Measurement]:
    """Square matmuls of every size in ``sizes`` for every dtype in ``dtypes``, in that order."""
    values = as_real_array("sizes", sizes, minimum=0.0, strictly_above=True, integral=True)
    if values.ndim != 1 or values.size == 0:
        raise TypeError(f"sizes must be a non-empty sequence of whole numbers, got {sizes!r}")
    if isinstance(dtypes, str) or not isinstance(dtypes, Sequence) or not dtypes:
        raise TypeError(f"dtypes must be a non-empty sequence of {MEASURE_DTYPES}, got {dtypes!r}")
    checked = [int(size) for size in values]
    for dtype in dtypes:
        one_of("dtypes", dtype, MEASURE_DTYPES)
    count = _repeats(repeats)
    # one compilation and one timing per kernel: a loop over kernels, not over points of a formula
    return [measure_matmul(n, n, n, dtype, count) for dtype in dtypes for n in checked]


def measurements_table(measurements: Sequence[Measurement]) -> "pandas.DataFrame":  # noqa: F821
    """One row per measurement: hwlib's counts, intensity, median time, spread, FLOP/s and bytes/s."""
    import pandas as pd

    records = list(measurements) if isinstance(measurements, (list, tuple)) else None
    if not records or not all(isinstance(record, Measurement) for record in records):
        raise TypeError(f"measurements must be a non-empty sequence of Measurement records, got {measurements!r}")
    rows = [
        {"kernel": record.name, "FLOPs": record.flops, "bytes (minimum)": record.n_bytes,
         "intensity (FLOP/byte)": record.intensity, "median time (ms)": record.median_s * 1e3,
         "slowest / fastest": record.spread, "achieved GFLOP/s": record.flops_per_s / 1e9,
         "achieved GB/s": record.bytes_per_s / 1e9}
        for record in records
    ]
    return pd.DataFrame(rows).set_index("kernel")


# --- XLA's own counts --------------------------------------------------------------------


def _cost(compiled: object) -> XlaCost:
    """FLOPs and bytes accessed of a compiled computation: a dict, or (older JAX) a list of dicts."""
    cost = compiled.cost_analysis()
    entries = cost if isinstance(cost, (list, tuple)) else [cost]
    if not entries or any(not isinstance(entry, dict) for entry in entries):
        raise RuntimeError(f"this JAX backend gives no cost analysis (got {cost!r})")
    return XlaCost(flops=float(sum(entry.get("flops", 0.0) for entry in entries)),
                   bytes_accessed=float(sum(entry.get("bytes accessed", 0.0) for entry in entries)))


def xla_matmul_cost(m: int, k: int, n: int, dtype: str = "fp32") -> XlaCost:
    """XLA's FLOPs and bytes accessed for the matmul ``measure_matmul`` times (compiled, not run).

    For fp32 XLA counts 2 m k n FLOPs and the minimum bytes, as hwlib does; where a backend
    has no native bf16 matmul (CPUs), it also counts the conversions to and from fp32.
    """
    rows, inner, cols = _whole("m", m), _whole("k", k), _whole("n", n)
    jax, _ = _jax()
    jdtype = _jax_dtype(dtype)
    a = jax.ShapeDtypeStruct((rows, inner), jdtype)
    b = jax.ShapeDtypeStruct((inner, cols) if cols > 1 else (inner,), jdtype)
    return _cost(_matmul(dtype).lower(a, b).compile())


def xla_stream_cost(n_elements: int, dtype: str = "fp32") -> XlaCost:
    """XLA's FLOPs and bytes accessed for the stream kernel ``measure_stream`` times."""
    elements = _whole("n_elements", n_elements)
    jax, _ = _jax()
    jdtype = _jax_dtype(dtype)
    x = jax.ShapeDtypeStruct((elements,), jdtype)
    scalar = jax.ShapeDtypeStruct((), jdtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = jax.jit(lambda v, a, b: v * a + b, donate_argnums=0).lower(x, scalar, scalar).compile()
    return _cost(compiled)


def xla_counts_table(measurements: Sequence[Measurement]) -> "pandas.DataFrame":  # noqa: F821
    """For each measured kernel: hwlib's FLOPs and bytes beside XLA's, and their ratios."""
    import pandas as pd

    records = list(measurements) if isinstance(measurements, (list, tuple)) else None
    if not records or not all(isinstance(record, Measurement) for record in records):
        raise TypeError(f"measurements must be a non-empty sequence of Measurement records, got {measurements!r}")
    rows = []
    for record in records:  # one compilation per kernel
        if record.kernel == "matmul":
            cost = xla_matmul_cost(*record.shape, dtype=record.dtype)
        else:
            cost = xla_stream_cost(record.shape[0], dtype=record.dtype)
        rows.append({"kernel": record.name, "hwlib FLOPs": record.flops, "XLA FLOPs": cost.flops,
                     "XLA / hwlib FLOPs": cost.flops / record.flops, "hwlib bytes (minimum)": record.n_bytes,
                     "XLA bytes accessed": cost.bytes_accessed,
                     "XLA / hwlib bytes": cost.bytes_accessed / record.n_bytes})
    return pd.DataFrame(rows).set_index("kernel")


# --- the measured roofline -------------------------------------------------------------------


def measured_chip(matmuls: Sequence[Measurement], stream: Measurement, info: DeviceInfo | None = None,
                  name: str = "this machine") -> Chip:
    """A chip-like record whose peak per dtype is the best measured matmul rate and whose bandwidth is ``stream``'s.

    Use it with ``hw.ridge_point``, ``hw.attainable_flops_per_s``, ``hw.plot_roofline`` and
    ``hw.RooflineExplorer``; it is never added to the catalogue.
    """
    records = list(matmuls) if isinstance(matmuls, (list, tuple)) else None
    if not records or not all(isinstance(r, Measurement) and r.kernel == "matmul" for r in records):
        raise TypeError(f"matmuls must be a non-empty sequence of matmul Measurements, got {matmuls!r}")
    if not isinstance(stream, Measurement) or stream.kernel != "stream":
        raise TypeError(f"stream must be the Measurement of measure_stream, got {stream!r}")
    if info is not None and not isinstance(info, DeviceInfo):
        raise TypeError(f"info must be a DeviceInfo from hw.device_info() or None, got {info!r}")
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty string, got {name!r}")
    today = datetime.date.today().isoformat()
    kind = f"{info.platform}: {info.device_kind}" if info else "default JAX device"

    def measured(value: float, unit: str, how: str) -> Sourced:
        return Sourced(float(value), unit, f"measured with hwlib.measure ({how}) on {kind}", today)

    peaks = {}
    for dtype in dict.fromkeys(record.dtype for record in records):
        best = max((r for r in records if r.dtype == dtype), key=lambda r: r.flops_per_s)
        peaks[dtype] = measured(best.flops_per_s, "FLOP/s", f"best of the {dtype} matmuls: {best.name}")
    memory = info.memory_bytes if info and info.memory_bytes else stream.n_bytes
    return Chip(
        key="measured", name=name, vendor=kind, source="measured",
        hbm=measured(memory, "B", "memory as the OS or JAX reports it"),
        hbm_bandwidth=measured(stream.bytes_per_s, "B/s", stream.name),
        peak_flops=peaks,
        note="Built from this run's measurements; not part of the catalogue.",
    )
