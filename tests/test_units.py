"""hwlib.units: prefixes, one dtype list, conversion and formatting."""

import math

import numpy as np
import pytest

import hwlib as hw
from hwlib import units
from hwlib.units import format_bytes_per_s, format_flops_per_s, format_quantity


def test_binary_and_decimal_prefixes_are_exact():
    assert hw.GiB == 2**30 and hw.GB == 10**9
    assert hw.KiB == 1024 and hw.MiB == 1024**2 and units.TiB == 1024**4
    # kB, PB, TiB, GIGA and PETA left the top namespace in 0.2: they live in hwlib.units
    assert units.kB == 1e3 and hw.MB == 1e6 and hw.TB == 1e12 and units.PB == 1e15
    assert hw.TERA == 1e12 and units.PETA == 1e15 and units.GIGA == 1e9
    assert units.BYTE_UNITS["GiB"] == hw.GiB and units.BYTE_UNITS["GB"] == hw.GB


def test_convert_bytes_between_systems():
    assert hw.convert_bytes(16 * hw.GiB, "GiB") == 16
    assert math.isclose(hw.convert_bytes(16 * hw.GiB, "GB"), 17.179869184)
    np.testing.assert_array_equal(hw.convert_bytes(np.array([1, 2]) * hw.MB, "kB"), [1000, 2000])


@pytest.mark.parametrize(
    ("dtype", "size"),
    [
        ("fp32", 4),
        ("tf32", 4),
        ("bf16", 2),
        ("fp16", 2),
        ("fp8", 1),
        ("int8", 1),
        ("fp4", 0.5),
        ("int4", 0.5),
        ("nvfp4", 0.5 + 1 / 16),
        ("mxfp4", 0.5 + 1 / 32),
    ],
)
def test_dtype_bytes(dtype, size):
    assert hw.dtype_bytes(dtype) == size == hw.BYTES_PER_ELEMENT[dtype]


def test_one_dtype_list():
    assert set(hw.BYTES_PER_ELEMENT) == {"fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4", "int4", "nvfp4", "mxfp4"}
    with pytest.raises(TypeError):
        hw.BYTES_PER_ELEMENT["fp64"] = 8.0


def test_formatting_names_the_prefix():
    assert hw.format_bytes(16 * hw.GiB) == "16 GiB"
    assert hw.format_bytes(16 * hw.GiB, binary=False) == "17.2 GB"
    assert hw.format_bytes(512) == "512 B"
    assert format_bytes_per_s(819e9) == "819 GB/s"
    assert format_flops_per_s(197e12) == "197 TFLOP/s"
    assert hw.format_flops(2.147483648e9) == "2.15 GFLOP"
    assert hw.format_seconds(1.31e-3) == "1.31 ms"
    assert hw.format_seconds(2.5) == "2.5 s"
    assert hw.format_seconds(4e-12) == "0.004 ns"


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: hw.dtype_bytes("bf17"), ValueError, "dtype must be one of"),
        (lambda: hw.dtype_bytes(2), TypeError, "dtype must be a string"),
        (lambda: hw.convert_bytes(1, "GIB"), ValueError, "unit must be one of"),
        (lambda: hw.convert_bytes(-1, "GB"), ValueError, "n_bytes must be >= 0"),
        (lambda: hw.convert_bytes(float("nan"), "GB"), ValueError, "n_bytes must not be NaN"),
        (lambda: hw.convert_bytes("16", "GB"), TypeError, "n_bytes must be a real number"),
        (lambda: hw.format_bytes(-5), ValueError, "n_bytes must be >= 0"),
        (lambda: hw.format_seconds(float("inf")), ValueError, "seconds must be finite"),
        (lambda: format_flops_per_s(True), TypeError, "flops_per_s must be a real number"),
    ],
)
def test_bad_input_names_the_parameter(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_numbers_for_people_never_use_an_exponent():
    assert [hw.format_number(x) for x in (65536, 3.14159, 0.012345, 8.55208e10, -1234.5, 0)] == [
        "65,500",
        "3.14",
        "0.0123",
        "85,500,000,000",
        "-1,230",
        "0",
    ]
    assert hw.format_number(65536, 5) == "65,536"
    assert format_quantity(819e9, "B/s") == "819 GB/s"
    assert format_quantity(100e-15, "J/bit/mm") == "100 fJ/bit/mm"
    assert format_quantity(70.6e9, "parameters") == "70.6 billion parameters"
    assert format_quantity(6, "links") == "6 links"
    assert "e+" not in str(hw.chip("v5e").hbm_bandwidth) and str(hw.chip("v5e").hbm_bandwidth).startswith("819 GB/s")
    with pytest.raises(ValueError, match="value must not be NaN"):
        hw.format_number(float("nan"))


@pytest.mark.parametrize("value", [999.7, 1000, 1023.9, 0.99996, 123456.0])
def test_formatted_quantities_never_print_an_exponent(value):
    texts = (
        hw.format_bytes(value * hw.MiB),
        hw.format_seconds(value * 1e-3),
        format_bytes_per_s(value * 1e9),
        format_flops_per_s(value * 1e12),
    )
    assert not any("e+" in text or "e-" in text for text in texts), texts


def test_seconds_that_round_up_to_the_next_unit_take_it():
    assert [hw.format_seconds(v) for v in (0.9997, 0.9994, 999.6e-6)] == ["1 s", "999 ms", "1 ms"]


def test_block_scaled_formats_carry_their_scales_and_run_at_their_elements_peak():
    """NVFP4: one E4M3 byte per 16 values; MXFP4: one E8M0 byte per 32; both multiply at fp4's peak."""
    assert hw.units.BLOCK_SCALED == {"nvfp4": ("fp4", 16, 1.0), "mxfp4": ("fp4", 32, 1.0)}
    assert [hw.units.element_dtype(d) for d in ("nvfp4", "mxfp4", "fp8")] == ["fp4", "fp4", "fp8"]
    b200, h100 = hw.chip("b200"), hw.chip("h100-sxm")
    assert b200.peak("nvfp4") == b200.peak("mxfp4") == b200.peak("fp4")
    with pytest.raises(KeyError, match="nvfp4"):
        h100.peak("nvfp4")
    nvfp4, fp4 = hw.PRECISIONS["nvfp4, fp8 KV"], hw.PRECISIONS["fp4, fp8 KV"]
    model = hw.model("llama-3-70b")
    scaled = hw.inference_step(model, b200, 8, 1024, **nvfp4)
    bare = hw.inference_step(model, b200, 8, 1024, **fp4)
    assert 1.0 < scaled.time_s / bare.time_s < 1.125  # the weights' read grows by 1/8, the cache's not at all
