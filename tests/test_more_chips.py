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


# key: (printed capacity B, capacity a program sees B, bandwidth B/s, bf16 FLOP/s, fp8 FLOP/s, on-chip B, TDP W)
OTHER = {
    "gaudi3": (128 * GB, 128 * GiB, 3.67 * TB, 1835 * TERA, 1835 * TERA, 96e6, 900.0),
    "trainium2": (96 * GiB, 96 * GiB, 2.9 * TB, 667 * TERA, 1299 * TERA, 28 * 2**20, None),
}


@pytest.mark.parametrize("key", sorted(OTHER))
def test_gaudi3_and_trainium2_keep_their_makers_numbers_and_are_their_own_families(key):
    chip = hw.chip(key)
    printed, seen, bandwidth, bf16, fp8, on_chip, tdp = OTHER[key]
    assert chip.family == {"gaudi3": "Gaudi", "trainium2": "Trainium"}[key] and chip.source == "vendor"
    assert chip.hbm_bytes == pytest.approx(printed, rel=1e-12)
    assert chip.capacity_bytes == pytest.approx(seen, rel=1e-12)
    assert chip.hbm_bytes_per_s == pytest.approx(bandwidth, rel=1e-12)
    assert (chip.peak("bf16"), chip.peak("fp8")) == pytest.approx((bf16, fp8), rel=1e-12)
    assert chip.on_chip_bytes == pytest.approx(on_chip, rel=1e-12) and chip.tdp_w == tdp
    assert hw.ridge_point(chip) == pytest.approx(bf16 / bandwidth, rel=1e-12)
    for name, quantity in chip.sourced_values().items():
        assert quantity.source and quantity.quoted and quantity.read_on == "2026-12-06", name
    with pytest.raises(KeyError, match="no sourced peak"):
        chip.peak("fp4")


def test_the_other_accelerators_are_found_by_their_names():
    assert hw.chip("HL-325L") is hw.chip("gaudi3") is hw.chip("Intel Gaudi 3")
    assert hw.chip("Trn2") is hw.chip("trainium2") is hw.chip("AWS Trainium2")
    assert "third-party" in hw.chip("gaudi3").hbm.source  # Intel's own copy of the slides was not found


def test_the_gaudi3_box_joins_eight_chips_all_to_all_and_leaves_each_three_ports_to_the_network():
    box = hw.cluster("hls-gaudi3")
    assert box.chip is hw.chip("gaudi3") and box.node_size == 8
    per_direction_up, per_direction_out = 21 * 200e9 / 8, 3 * 200e9 / 8  # 200 Gb/s ports, bytes per direction
    assert box.node_fabric.bandwidth.value == pytest.approx(per_direction_up) and box.node_fabric.directions == 1
    assert box.network.bandwidth.value == pytest.approx(per_direction_out) and box.network.directions == 1
    inside = hw.group_topology(box, 8, 1, 64)
    assert inside.where == "node"
    assert hw.collective_time_s("all-reduce", 1e9, inside) == pytest.approx(2 * 7 / 8 * 1e9 / per_direction_up)
    across = hw.group_topology(box, 8, 8, 64)  # one chip of each of eight boxes: only the network
    assert hw.collective_time_s("all-reduce", 1e9, across) > 2 * 7 / 8 * 1e9 / per_direction_out
    assert hw.clusters(hw.chip("gaudi3")) == (box,) and hw.clusters(hw.chip("trainium2")) == ()
