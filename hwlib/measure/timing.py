"""Time kernels on this machine: achieved FLOP/s of matmuls and achieved bandwidth, and the measured chip.

Everything runs with JAX on its default device (the CPU, or a GPU or TPU when one is present,
with no code change). A kernel is compiled by ``jax.jit``, run once to warm up (compilation is
not timed), then timed ``repeats`` times with ``time.perf_counter`` around the call and
``jax.block_until_ready`` (JAX dispatches asynchronously); the median is the result.

Kernels and what hwlib counts for them:

* matmul ``(m x k) @ (k x n)``: ``hw.matmul_flops`` (2 m k n) and the minimum traffic
  ``hw.matmul_bytes`` (each operand read once, the result written once);
* stream ``y = a x + b`` over a large vector, updated in place: 2 FLOPs and 2 x element-size
  bytes (one read, one write) per element, the "scale and add" of McCalpin's STREAM benchmark
  ("Memory bandwidth and machine balance in current high performance computers", IEEE TCCA
  Newsletter, 1995), with a scalar instead of a second vector.

The measured roofline is Williams, Waterman and Patterson's, with the best matmul rate as the
roof and the stream bandwidth as the slope. Explained in the chapter :ref:`ch-own-roofline`.
"""

from __future__ import annotations

import datetime
import statistics
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from hwlib._checks import Number, as_real_array, one_of, positive, scalar_or_array
from hwlib.data.records import Chip, Sourced
from hwlib.measure.device import DeviceInfo
from hwlib.measure.kernels import MEASURE_DTYPES, jax_dtype, load_jax, matmul_kernel, stream_kernel, whole_number
from hwlib.roofline import matmul_bytes, matmul_flops
from hwlib.units import MiB, dtype_bytes

KERNELS = ("matmul", "stream")

STREAM_FLOPS_PER_ELEMENT = 2
"""y = a x + b: one multiply and one add per element."""

STREAM_ARRAYS_TOUCHED = 2
"""y = a x + b in place: x read once, y written once (a and b are scalars)."""


def _repeats(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"repeats must be a whole number >= 1, got {value!r}")
    return int(value)


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


def _time(step: Callable, state: object, repeats: int, chained: bool) -> tuple[float, ...]:
    """Warm up once, then time ``repeats`` calls; ``chained`` feeds each output back as input."""
    jax, _ = load_jax()
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
    jax, _ = load_jax()
    generator = np.random.default_rng(0)
    jdtype = jax_dtype(dtype)

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
    rows, inner, cols = whole_number("m", m), whole_number("k", k), whole_number("n", n)
    one_of("dtype", dtype, MEASURE_DTYPES)
    count = _repeats(repeats)
    jax, _ = load_jax()
    operands = _matmul_operands(rows, inner, cols, dtype)
    times = _time(matmul_kernel(dtype), operands, count, chained=False)
    return Measurement(
        "matmul",
        dtype,
        (rows, inner, cols),
        float(matmul_flops(rows, inner, cols)),
        float(matmul_bytes(rows, inner, cols, dtype_bytes(dtype))),
        times,
    )


def stream_counts(n_elements: Number, dtype: str = "fp32") -> tuple[Number, Number]:
    """FLOPs and bytes of y = a x + b in place over ``n_elements``: (2 n, 2 n x element size)."""
    elements = positive("n_elements", n_elements, integral=True)
    size = dtype_bytes(one_of("dtype", dtype, MEASURE_DTYPES))
    return (
        scalar_or_array(STREAM_FLOPS_PER_ELEMENT * elements),
        scalar_or_array(STREAM_ARRAYS_TOUCHED * size * elements),
    )


def measure_stream(n_bytes: int, dtype: str = "fp32", repeats: int = 5) -> Measurement:
    """Time y = a x + b in place over an array of ``n_bytes`` bytes; its ``bytes_per_s`` is the bandwidth.

    The input buffer is donated to the output, so no call allocates (and page-faults) a
    fresh array: each call reads ``n_bytes`` and writes ``n_bytes``.
    """
    size = dtype_bytes(one_of("dtype", dtype, MEASURE_DTYPES))
    elements = whole_number("n_bytes", n_bytes) // int(size)
    if elements < 1:
        raise ValueError(f"n_bytes must hold at least one {dtype} element, got {n_bytes!r}")
    count = _repeats(repeats)
    jax, jnp = load_jax()
    kernel = stream_kernel()
    x = jnp.ones((elements,), jax_dtype(dtype))
    a, b = jnp.asarray(0.5, x.dtype), jnp.asarray(0.25, x.dtype)
    with warnings.catch_warnings():  # a backend that cannot donate says so and copies instead
        warnings.simplefilter("ignore")
        times = _time(kernel, (x, a, b), count, chained=True)
    flops, moved = stream_counts(elements, dtype)
    return Measurement("stream", dtype, (elements,), float(flops), float(moved), times)


def measure_matmuls(
    sizes: Sequence[int], dtypes: Sequence[str] = MEASURE_DTYPES, repeats: int = 5
) -> list[Measurement]:
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


# --- the measured roofline -------------------------------------------------------------------


def measured_chip(
    matmuls: Sequence[Measurement], stream: Measurement, info: DeviceInfo | None = None, name: str = "this machine"
) -> Chip:
    """A chip-like record whose peak per dtype is the best measured matmul rate and whose bandwidth is ``stream``'s.

    Use it with ``hw.ridge_point``, ``hw.attainable_flops_per_s``, ``hw.viz.plot_roofline`` and
    ``hw.viz.RooflineExplorer``; it is never added to the catalogue.
    """
    records = list(matmuls) if isinstance(matmuls, (list, tuple)) else None
    if not records or not all(isinstance(r, Measurement) and r.kernel == "matmul" for r in records):
        raise TypeError(f"matmuls must be a non-empty sequence of matmul Measurements, got {matmuls!r}")
    if not isinstance(stream, Measurement) or stream.kernel != "stream":
        raise TypeError(f"stream must be the Measurement of measure_stream, got {stream!r}")
    if info is not None and not isinstance(info, DeviceInfo):
        raise TypeError(f"info must be a DeviceInfo from hw.measure.device_info() or None, got {info!r}")
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
        key="measured",
        name=name,
        vendor=kind,
        source="measured",
        hbm=measured(memory, "B", "memory as the OS or JAX reports it"),
        hbm_bandwidth=measured(stream.bytes_per_s, "B/s", stream.name),
        peak_flops=peaks,
        note="Built from this run's measurements; not part of the catalogue.",
    )
