"""The GPUs of ``vendor_more`` keep the numbers their sources print: capacity, bandwidth, dense bf16 (and fp8) peak,
TDP. Sparse datasheet figures are stored halved."""

import pytest

import hwlib as hw
from hwlib.data.vendor_more import MORE_GPUS

GB, TB, TERA, GiB = 1e9, 1e12, 1e12, 2.0**30

# key: (capacity B, bandwidth B/s, bf16 FLOP/s, fp8 FLOP/s, TDP W)
PINNED = {
    "l4": (24 * GB, 300 * GB, 121 * TERA, 242.5 * TERA, 72.0),
    "l40s": (48 * GB, 864 * GB, 362.05 * TERA, 733 * TERA, 350.0),
    "h100-pcie": (80 * GB, 2 * TB, 756.5 * TERA, 1513 * TERA, 350.0),
    "h20": (96 * GB, 4 * TB, 148 * TERA, 296 * TERA, 400.0),
    "mi325x": (256 * GiB, 6 * TB, 1307.4 * TERA, 2614.9 * TERA, 1000.0),
    "mi355x": (288 * GiB, 8 * TB, 2516.6 * TERA, 5033.2 * TERA, 1400.0),
}


@pytest.mark.parametrize("key", sorted(PINNED))
def test_each_new_chip_keeps_its_sourced_numbers(key):
    chip = hw.chip(key)
    capacity, bandwidth, bf16, fp8, tdp = PINNED[key]
    assert chip.key == key and chip.source == "vendor" and chip.family == "GPU"
    assert chip.hbm_bytes == pytest.approx(capacity, rel=1e-12)
    assert chip.hbm_bytes_per_s == pytest.approx(bandwidth, rel=1e-12)
    assert chip.peak("bf16") == pytest.approx(bf16, rel=1e-12)
    assert chip.peak("fp8") == pytest.approx(fp8, rel=1e-12)
    assert chip.tdp_w == tdp
    for name, quantity in chip.sourced_values().items():
        assert quantity.source and quantity.quoted and quantity.read_on == "2026-12-06", name


def test_the_new_chips_are_in_the_catalogue_and_found_by_their_names():
    keys = {chip.key for chip in hw.chips("vendor")}
    assert set(PINNED) <= keys and {chip.key for chip in MORE_GPUS} == set(PINNED)
    assert hw.chip("H100 PCIe") is hw.chip("h100-pcie") and hw.chip("H100") is hw.chip("h100-sxm")
    assert hw.chip("AMD Instinct MI355X") is hw.chip("mi355x")


def test_sparse_figures_are_halved_and_say_so():
    assert hw.chip("h100-pcie").peak_flops["bf16"].quoted == "1,513 teraFLOPS*"
    assert "half the printed figure" in hw.chip("l4").peak_flops["fp8"].note
    # the L40S page prints the dense figure itself
    assert hw.chip("l40s").peak_flops["bf16"].quoted.startswith("362.05 |")
    # NVIDIA published no H20 page: every value says it is third-party
    assert all("third" in (q.source + q.note).lower() for q in hw.chip("h20").sourced_values().values())
