"""hwlib.measure: device information (device.py), JAX helpers (kernels.py), timing (timing.py), XLA's counts (xla.py).

Ported from the 0.1 tests/test_measure.py (hwlib.measure was one module; it is a package now).
"""

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hwlib as hw
from hwlib.measure import device, kernels, xla
from hwlib.measure.device import DeviceInfo, cpu_peak_flops_per_s, parse_cpuinfo
from hwlib.measure.timing import Measurement, stream_counts

pytest.importorskip("jax")

X86 = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Gold 6430
cpu MHz\t\t: 2100.000
flags\t\t: fpu sse sse2 avx avx2 fma avx512f avx512bw

processor\t: 1
model name\t: something else
cpu MHz\t\t: 999.000
"""

ARM = """processor\t: 0
BogoMIPS\t: 50.00
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32
CPU implementer\t: 0x41
"""


def _info(platform="cpu", cores=2, text=X86, memory=8 * hw.GiB):
    return DeviceInfo(
        platform=platform,
        device_kind="cpu",
        device_count=1,
        cpu_cores=cores,
        cpu=parse_cpuinfo(text),
        memory_bytes=memory,
        catalogue_key=None,
    )


@pytest.fixture(scope="module")
def small():
    """Tiny kernels, measured once for the module: two matmuls per dtype, a matvec and a stream."""
    matmuls = hw.measure.measure_matmuls([8, 32], repeats=3)
    matvec = hw.measure.measure_matmul(64, 64, 1, repeats=3)
    stream = hw.measure.measure_stream(hw.MiB, repeats=3)
    return matmuls, matvec, stream


def test_parse_cpuinfo_reads_the_first_processor():
    cpu = parse_cpuinfo(X86)
    assert cpu.model == "Intel(R) Xeon(R) Gold 6430"
    assert cpu.clock_hz == 2100e6
    assert cpu.simd == "avx512f" and cpu.fp32_lanes == 16 and cpu.has_fma
    avx2 = parse_cpuinfo("model name: x\ncpu MHz: 3000\nflags: sse2 avx avx2 fma\n")
    assert avx2.simd == "avx2" and avx2.fp32_lanes == 8 and avx2.clock_hz == 3e9


def test_parse_cpuinfo_says_unknown_rather_than_guessing():
    arm = parse_cpuinfo(ARM)
    assert arm.model is None and arm.clock_hz is None
    assert arm.simd == "asimd" and arm.fp32_lanes == 4 and arm.has_fma
    empty = parse_cpuinfo("")
    assert empty.model is None and empty.clock_hz is None and empty.simd is None and empty.fp32_lanes is None
    assert not empty.has_fma
    no_fma = parse_cpuinfo("cpu MHz: 2000\nflags: sse2 avx\n")
    assert no_fma.fp32_lanes == 8 and not no_fma.has_fma
    assert parse_cpuinfo("cpu MHz: n/a\n").clock_hz is None
    assert parse_cpuinfo("cpu MHz: 0\n").clock_hz is None


def test_cpu_peak_is_cores_times_clock_times_lanes_times_two_times_units():
    assert cpu_peak_flops_per_s(2, 2.1e9, 16, 2) == 2 * 2.1e9 * 16 * 2 * 2 == 268.8e9
    assert cpu_peak_flops_per_s(1, 1e9, 4, 1) == 8e9
    np.testing.assert_array_equal(cpu_peak_flops_per_s(2, 2.1e9, 16, [1, 2]), [134.4e9, 268.8e9])


@given(st.integers(1, 512), st.floats(1e8, 6e9), st.sampled_from([4, 8, 16]), st.integers(1, 4))
def test_cpu_peak_is_linear_in_cores_and_units(cores, clock, lanes, units):
    one = cpu_peak_flops_per_s(cores, clock, lanes, units)
    assert math.isclose(cpu_peak_flops_per_s(2 * cores, clock, lanes, units), 2 * one)
    assert math.isclose(cpu_peak_flops_per_s(cores, clock, lanes, units + 1), one * (units + 1) / units)


def test_estimated_cpu_peak_only_when_it_can_be_computed():
    np.testing.assert_array_equal(hw.measure.estimated_cpu_peak(_info()), [134.4e9, 268.8e9])
    assert hw.measure.estimated_cpu_peak(_info(), fma_units=2) == 268.8e9
    assert hw.measure.estimated_cpu_peak(_info(text=ARM)) is None  # no clock
    assert hw.measure.estimated_cpu_peak(_info(text="cpu MHz: 2000\nflags: sse2 avx\n")) is None  # no FMA
    assert hw.measure.estimated_cpu_peak(_info(platform="gpu")) is None


def test_theoretical_peaks_are_known_or_absent():
    assert hw.measure.theoretical_peaks(_info()) == {
        "estimated fp32 peak, 1 FMA unit per core": 134.4e9,
        "estimated fp32 peak, 2 FMA units per core": 268.8e9,
    }
    assert hw.measure.theoretical_peaks(_info(), "bf16") == {}
    assert hw.measure.theoretical_peaks(_info(text=ARM)) == {}
    h200 = DeviceInfo(
        platform="gpu",
        device_kind="NVIDIA H200",
        device_count=1,
        cpu_cores=16,
        cpu=parse_cpuinfo(""),
        memory_bytes=None,
        catalogue_key="h200",
    )
    assert hw.measure.theoretical_peaks(h200, "bf16") == {"H200 bf16 peak (vendor)": hw.chip("H200").peak("bf16")}
    assert hw.measure.theoretical_peaks(h200, "fp32") == {"H200 fp32 peak (vendor)": hw.chip("H200").peak("fp32")}
    unknown = DeviceInfo(
        platform="tpu",
        device_kind="TPU v99",
        device_count=1,
        cpu_cores=1,
        cpu=parse_cpuinfo(""),
        memory_bytes=None,
        catalogue_key=None,
    )
    assert hw.measure.theoretical_peaks(unknown) == {}


def test_device_info_describes_the_default_device():
    info = hw.measure.device_info()
    assert info.platform in {"cpu", "gpu", "tpu"} and info.device_count >= 1 and info.cpu_cores >= 1
    fields = info.describe()
    assert fields["platform"] == info.platform and "CPU clock (/proc/cpuinfo)" in fields
    if info.platform == "cpu":
        assert info.catalogue_key is None
    unknown = _info(text="").describe()
    assert unknown["CPU clock (/proc/cpuinfo)"] == "unknown" and unknown["widest SIMD extension"] == "unknown"
    assert _info().describe()["CPU clock (/proc/cpuinfo)"] == "2.10 GHz"


def test_measurement_plans():
    cpu = hw.measure.measurement_plan("cpu")
    assert cpu.platform == "cpu" and list(cpu.matmul_sizes) == sorted(cpu.matmul_sizes)
    assert cpu.stream_bytes >= 64 * hw.MiB or cpu.stream_bytes >= device._physical_memory() / 16 - 64
    assert cpu.stream_bytes % 64 == 0 and cpu.repeats >= 5
    gpu = hw.measure.measurement_plan("gpu")
    assert gpu.stream_bytes == hw.GiB and gpu.matmul_sizes[-1] == 8192
    assert gpu.matvec_size == 16384  # a 16384 x 16384 fp32 matrix is exactly 1 GiB
    assert hw.measure.measurement_plan().platform == hw.measure.device_info().platform


def test_matmul_measurement_counts_with_hwlib(small):
    matmuls, matvec, _ = small
    assert [(r.dtype, r.shape) for r in matmuls] == [
        ("fp32", (8, 8, 8)),
        ("fp32", (32, 32, 32)),
        ("bf16", (8, 8, 8)),
        ("bf16", (32, 32, 32)),
    ]
    for record in matmuls + [matvec]:
        m, k, n = record.shape
        assert record.flops == hw.matmul_flops(m, k, n) == 2 * m * k * n
        assert record.n_bytes == hw.matmul_bytes(m, k, n, hw.dtype_bytes(record.dtype))
        assert record.intensity == pytest.approx(hw.matmul_intensity(m, k, n, hw.dtype_bytes(record.dtype)))
        assert len(record.times_s) == 3 and all(math.isfinite(t) and t > 0 for t in record.times_s)
        assert record.flops_per_s == record.flops / record.median_s > 0
        assert min(record.times_s) <= record.median_s <= max(record.times_s) and record.spread >= 1
    assert matvec.name == "matmul fp32, 64x64x1" and matmuls[1].name == "matmul fp32, 32"


def test_stream_measurement_counts_one_read_and_one_write(small):
    stream = small[2]
    elements = hw.MiB // 4
    assert stream.kernel == "stream" and stream.shape == (elements,)
    assert stream.flops == 2 * elements and stream.n_bytes == 2 * hw.MiB
    assert stream.intensity == 0.25 and stream.bytes_per_s > 0 and math.isfinite(stream.bytes_per_s)
    assert stream_counts(10, "bf16") == (20.0, 40.0)
    flops, moved = stream_counts(np.array([1, 2]))
    np.testing.assert_array_equal(moved, [8.0, 16.0])


def test_xla_counts_the_matmul_as_hwlib_does():
    for m, k, n in ((64, 32, 16), (7, 5, 3), (64, 64, 1)):
        cost = hw.measure.xla_matmul_cost(m, k, n, "fp32")
        assert cost.flops == hw.matmul_flops(m, k, n) == 2 * m * k * n
        assert cost.bytes_accessed >= hw.matmul_bytes(m, k, n, 4)
    bf16 = hw.measure.xla_matmul_cost(64, 32, 16, "bf16")
    assert bf16.flops >= hw.matmul_flops(64, 32, 16)
    assert bf16.bytes_accessed >= hw.matmul_bytes(64, 32, 16, 2)
    stream = xla.xla_stream_cost(1000)
    assert stream.flops == 2000 and stream.bytes_accessed >= 8000


def test_cost_handles_a_dict_a_list_and_nothing():
    class Fake:
        def __init__(self, cost):
            self.cost = cost

        def cost_analysis(self):
            return self.cost

    assert kernels.compiled_cost(Fake({"flops": 3.0, "bytes accessed": 8.0})) == kernels.XlaCost(3.0, 8.0)
    assert kernels.compiled_cost(Fake([{"flops": 3.0, "bytes accessed": 8.0}, {"flops": 1.0}])) == kernels.XlaCost(
        4.0, 8.0
    )
    with pytest.raises(RuntimeError, match="no cost analysis"):
        kernels.compiled_cost(Fake(None))


def test_tables_have_one_row_per_kernel(small):
    matmuls, matvec, stream = small
    records = matmuls + [matvec, stream]
    table = hw.viz.measurements_table(records)
    assert list(table.index) == [r.name for r in records]
    assert (table["achieved GFLOP/s"] > 0).all() and (table["slowest / fastest"] >= 1).all()
    counts = hw.viz.xla_counts_table(records)
    assert list(counts.index) == list(table.index)
    fp32 = counts[[r.dtype == "fp32" for r in records]]
    assert (fp32["XLA / hwlib FLOPs"] == 1.0).all()
    assert (counts["XLA / hwlib bytes"] >= 1.0).all() and (counts["XLA / hwlib FLOPs"] >= 1.0).all()


def test_measured_chip_is_a_roofline_record_outside_the_catalogue(small):
    matmuls, _, stream = small
    record = hw.measure.measured_chip(matmuls, stream, _info())
    best = max(r.flops_per_s for r in matmuls if r.dtype == "fp32")
    assert record.peak("fp32") == best and set(record.peak_flops_per_s) == {"fp32", "bf16"}
    assert record.hbm_bytes_per_s == stream.bytes_per_s and record.hbm_bytes == 8 * hw.GiB
    assert hw.ridge_point(record, "fp32") == best / stream.bytes_per_s
    assert hw.attainable_flops_per_s(1e9, record, "fp32") == best
    assert record.label == "this machine [measured]" and record not in hw.chips()
    assert "measured with hwlib.measure" in record.hbm_bandwidth.source
    assert hw.measure.measured_chip(matmuls, stream).hbm_bytes == stream.n_bytes
    assert record.source == "measured"
    with pytest.raises(ValueError, match="source must be one of"):
        hw.chips("measured")


def test_plot_measured_roofline(small):
    matmuls, matvec, stream = small
    record = hw.measure.measured_chip(matmuls, stream)
    ax = hw.viz.plot_measured_roofline(record, matmuls + [matvec, stream], peaks={"estimate": 2 * record.peak("fp32")})
    roofs = [line for line in ax.get_lines() if len(line.get_xdata()) > 2]
    assert len(roofs) == 2 and "FLOP/byte" in ax.get_xlabel() and "FLOP/s" in ax.get_ylabel()
    points = [line for line in ax.get_lines() if len(line.get_xdata()) == 1 and line.get_marker() in "o^s"]
    assert len(points) >= len(matmuls) + 2
    plt.close("all")


@given(st.lists(st.floats(1e-6, 1.0), min_size=1, max_size=9))
def test_median_lies_between_the_fastest_and_the_slowest(times):
    record = Measurement("matmul", "fp32", (2, 2, 2), 16.0, 48.0, tuple(times))
    assert min(times) <= record.median_s <= max(times)
    assert record.spread >= 1 and record.flops_per_s == 16.0 / record.median_s


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: parse_cpuinfo(None), TypeError, "text must be the contents of /proc/cpuinfo"),
        (lambda: cpu_peak_flops_per_s(0, 1e9, 16, 2), ValueError, "cores must be > 0"),
        (lambda: cpu_peak_flops_per_s(2, float("nan"), 16, 2), ValueError, "clock_hz must not be NaN"),
        (lambda: cpu_peak_flops_per_s(2, 1e9, 16, 1.5), ValueError, "fma_units must be a whole number"),
        (lambda: cpu_peak_flops_per_s(2, 1e9, "16", 2), TypeError, "fp32_lanes must be a real number"),
        (lambda: cpu_peak_flops_per_s([1, 2], 1e9, 16, [1, 2, 3]), ValueError, "must broadcast together"),
        (lambda: hw.measure.estimated_cpu_peak("cpu"), TypeError, "info must be a DeviceInfo"),
        (lambda: hw.measure.estimated_cpu_peak(_info(), fma_units=0), ValueError, "fma_units must be > 0"),
        (lambda: hw.measure.measurement_plan("fpga"), ValueError, "platform must be one of"),
        (lambda: hw.measure.theoretical_peaks(None), TypeError, "info must be a DeviceInfo"),
        (lambda: hw.measure.theoretical_peaks(_info(), "fp64"), ValueError, "dtype must be one of"),
        (lambda: hw.measure.measure_matmul(0, 4, 4), ValueError, "m must be > 0"),
        (lambda: hw.measure.measure_matmul(4, 2.5, 4), ValueError, "k must be a whole number"),
        (lambda: hw.measure.measure_matmul([4, 8], 4, 4), TypeError, "m must be one whole number"),
        (lambda: hw.measure.measure_matmul(4, 4, 4, dtype="fp8"), ValueError, "dtype must be one of"),
        (lambda: hw.measure.measure_matmul(4, 4, 4, repeats=0), ValueError, "repeats must be a whole number >= 1"),
        (lambda: hw.measure.measure_matmul(4, 4, 4, repeats=2.0), ValueError, "repeats must be a whole number"),
        (lambda: hw.measure.measure_stream(2, dtype="fp32"), ValueError, "n_bytes must hold at least one fp32"),
        (lambda: hw.measure.measure_stream(-8), ValueError, "n_bytes must be > 0"),
        (lambda: hw.measure.measure_stream(1024, dtype=32), TypeError, "dtype must be a string"),
        (lambda: hw.measure.measure_matmuls([], repeats=1), TypeError, "sizes must be a non-empty sequence"),
        (lambda: hw.measure.measure_matmuls([8, 0]), ValueError, "sizes must be > 0"),
        (lambda: hw.measure.measure_matmuls([8], dtypes="fp32"), TypeError, "dtypes must be a non-empty sequence"),
        (lambda: hw.measure.measure_matmuls([8], dtypes=["int8"]), ValueError, "dtypes must be one of"),
        (lambda: stream_counts(0), ValueError, "n_elements must be > 0"),
        (lambda: stream_counts(4, "fp16"), ValueError, "dtype must be one of"),
        (lambda: hw.viz.measurements_table([]), TypeError, "measurements must be a non-empty sequence"),
        (lambda: hw.viz.xla_counts_table([1]), TypeError, "measurements must be a non-empty sequence"),
        (lambda: hw.measure.xla_matmul_cost(4, 4, -1), ValueError, "n must be > 0"),
        (lambda: hw.measure.xla_matmul_cost(4, 4, 4, dtype="int4"), ValueError, "dtype must be one of"),
        (lambda: xla.xla_stream_cost(1.5), ValueError, "n_elements must be a whole number"),
        (lambda: hw.measure.measured_chip([], None), TypeError, "matmuls must be a non-empty sequence"),
        (lambda: Measurement("conv", "fp32", (1,), 1.0, 1.0, (1.0,)), ValueError, "kernel must be one of"),
        (lambda: Measurement("stream", "fp32", (1,), 1.0, 1.0, ()), ValueError, "times_s must be a non-empty"),
        (lambda: Measurement("stream", "fp32", (1,), 1.0, 1.0, (0.0,)), ValueError, "times_s must be > 0"),
        (lambda: Measurement("stream", "fp32", (1,), -1.0, 1.0, (1.0,)), ValueError, "flops must be > 0"),
        (lambda: hw.viz.plot_measured_roofline("cpu", []), TypeError, "chip must be a Chip record"),
    ],
)
def test_bad_input_names_the_parameter(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_measured_chip_rejects_bad_parts(small):
    matmuls, matvec, stream = small
    with pytest.raises(TypeError, match="stream must be the Measurement of measure_stream"):
        hw.measure.measured_chip(matmuls, matvec)
    with pytest.raises(TypeError, match="matmuls must be a non-empty sequence of matmul"):
        hw.measure.measured_chip([stream], stream)
    with pytest.raises(TypeError, match="info must be a DeviceInfo"):
        hw.measure.measured_chip(matmuls, stream, info="cpu")
    with pytest.raises(TypeError, match="name must be a non-empty string"):
        hw.measure.measured_chip(matmuls, stream, name="")


def test_kernel_helpers():
    _, jnp = kernels.load_jax()
    assert kernels.MEASURE_DTYPES == ("fp32", "bf16")
    assert kernels.jax_dtype("fp32") == jnp.float32 and kernels.jax_dtype("bf16") == jnp.bfloat16
    assert kernels.whole_number("n", 4.0) == 4 and isinstance(kernels.whole_number("n", 4.0), int)
    with pytest.raises(TypeError, match="n must be one whole number"):
        kernels.whole_number("n", [1, 2])
    with pytest.raises(ValueError, match="n must be > 0"):
        kernels.whole_number("n", 0)
    with pytest.raises(ValueError, match="dtype must be one of"):
        kernels.jax_dtype("fp8")


# jax.Device.device_kind as JAX reports it on each accelerator, and the catalogue record it should find
DEVICE_KINDS = {
    "TPU v4": "v4",
    "TPU v5 lite": "v5e",
    "TPU7x": "tpu7x",
    "NVIDIA H200": "h200",
    "NVIDIA B200": "b200",
    "NVIDIA A100-SXM4-80GB": "a100-80gb",
    "NVIDIA A100-SXM4-40GB": "a100-40gb",
}
MISSED_DEVICE_KINDS = {"NVIDIA H100 80GB HBM3": "h100-sxm", "TPU v5": "v5p", "TPU v6 lite": "v6e"}


@pytest.mark.parametrize(("kind", "key"), DEVICE_KINDS.items())
def test_device_kinds_find_their_catalogue_record(kind, key):
    # device_info's catalogue_key is hw.chip(device_kind).key (None on a KeyError)
    assert hw.chip(kind).key == key


@pytest.mark.parametrize(("kind", "key"), MISSED_DEVICE_KINDS.items())
def test_device_kinds_hwlib_misses(kind, key):
    assert hw.chip(kind).key == key
