"""hwlib.data: the records (Sourced, Chip, ...), the vendor and source-document chips, and the lookups.

Ported from the 0.1 tests/test_hardware.py (hwlib.hardware and hwlib.catalogue became hwlib.data).
"""

import dataclasses
import math
import re

import numpy as np
import pytest

import hwlib as hw
from hwlib.data import doc000, doc002, records, vendor_chips

UNSOLD = hw.custom_chip("unsold", peak_flops_per_s={"bf16": 1e15}, hbm_bytes_per_s=1e12, hbm_bytes=64e9)
"""A chip given inline, sold in no deployment size."""

VENDOR_KEYS = ["v4", "v5e", "v5p", "v6e", "tpu7x", "a100-40gb", "a100-80gb", "h100-sxm", "h200", "b200", "mi300x"]
FLOAT_FIELDS = {  # float property -> Sourced field it reads
    "hbm_bytes": "hbm",
    "hbm_visible_bytes": "hbm_visible",
    "hbm_bytes_per_s": "hbm_bandwidth",
    "on_chip_bytes": "on_chip",
    "tdp_w": "tdp",
    "interconnect_bytes_per_s": "interconnect",
    "ici_link_bytes_per_s": "ici_link_bandwidth",
    "hbm_energy_j_per_byte": "hbm_energy",
    "flop_energy_j": "flop_energy",
    "static_power_w": "static_power",
}


@pytest.mark.parametrize("name", ["v5e", "TPU v5e", "tpu-v5e", "V5E", "tpu_v5e", "Google TPU v5e"])
def test_lookup_is_forgiving_about_spelling(name):
    assert hw.chip(name) is hw.chip("v5e")


@pytest.mark.parametrize(
    ("alias", "key"),
    [
        ("Trillium", "v6e"),
        ("Ironwood", "tpu7x"),
        ("H100", "h100-sxm"),
        ("nvidia h100-sxm", "h100-sxm"),
        ("A100-80GB", "a100-80gb"),
        ("amd mi300x", "mi300x"),
    ],
)
def test_aliases(alias, key):
    assert hw.chip(alias).key == key


def test_every_required_vendor_chip_is_there_with_the_basics():
    for key in VENDOR_KEYS:
        record = hw.chip(key)
        assert record.source == "vendor"
        assert record.hbm_bytes > 8 * hw.GB
        assert 100 * hw.GB < record.hbm_bytes_per_s < 20 * hw.TB
        assert record.peak_flops_per_s, key
        assert all(1 * hw.TERA < value < 50 * 1e15 for value in record.peak_flops_per_s.values())


def test_every_number_is_sourced_with_unit_and_date():
    for record in hw.chips():
        for field, value in record.sourced_values().items():
            assert isinstance(value, hw.data.Sourced), (record, field)
            assert value.unit in {"B", "B/s", "FLOP/s", "W", "J/B", "J/FLOP", "links"}, (record, field)
            assert value.source and value.quoted, (record, field)
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.read_on), (record, field)
            assert value.value > 0


def test_no_note_says_a_value_was_not_verified():
    quantities = [q for record in hw.chips() for q in record.sourced_values().values()]
    quantities += [f.bandwidth for f in hw.fabrics()] + [f.domain_size for f in hw.fabrics() if f.domain_size]
    quantities += [m.n_params for m in hw.models()]
    notes = [q.note for q in quantities] + [r.note for r in (*hw.chips(), *hw.fabrics(), *hw.models())]
    notes += [d.note for d in hw.deployments()] + [r.note for r in hw.recipes()]
    assert notes and not [note for note in notes if "Not verified against a stored copy" in note]


def test_units_of_each_field():
    expected = {
        "hbm": "B",
        "hbm_visible": "B",
        "hbm_bandwidth": "B/s",
        "on_chip": "B",
        "tdp": "W",
        "interconnect": "B/s",
        "ici_links": "links",
        "ici_link_bandwidth": "B/s",
        "hbm_energy": "J/B",
        "flop_energy": "J/FLOP",
        "static_power": "W",
    }
    for record in hw.chips():
        for field, value in record.sourced_values().items():
            unit = "FLOP/s" if field.startswith("peak_flops") else expected[field]
            assert value.unit == unit, (record, field)


def test_each_field_reads_one_way_as_a_float_with_its_unit_in_the_name():
    for record in hw.chips():
        for prop, field in FLOAT_FIELDS.items():
            quantity = getattr(record, field)
            value = getattr(record, prop)
            assert value == (None if quantity is None else float(quantity.value)), (record, prop)
        assert record.capacity_bytes == (record.hbm_bytes if record.hbm_visible is None else record.hbm_visible_bytes)
        assert dict(record.peak_flops_per_s) == {k: float(q.value) for k, q in record.peak_flops.items()}


def test_records_are_immutable():
    record = hw.chip("v5e")
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.name = "other"
    with pytest.raises(TypeError):
        record.peak_flops["bf16"] = None
    with pytest.raises(TypeError):
        record.peak_flops_per_s["bf16"] = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.hbm.value = 1.0


def test_document_000_inputs_are_kept_exactly():
    expected = {"v5e": (16.0, 819.0, 197.0), "v5p": (95.0, 2765.0, 459.0), "v6e": (32.0, 1600.0, 918.0)}
    for key, (gib, gbs, tflops) in expected.items():
        record = hw.chip(key, source="doc000")
        assert record.hbm_bytes == gib * 2**30
        assert record.hbm_bytes_per_s == gbs * 1e9
        assert record.peak_flops_per_s["bf16"] == tflops * 1e12
    assert hw.chips(source="doc000") == doc000.CHIPS
    assert doc000.FILE == "000_dfa9af1fd73ea27d.txt"


def test_document_000_v6e_differs_from_google_and_both_are_reachable():
    assert hw.chip("v6e", source="doc000").hbm_bytes_per_s == 1600e9
    assert hw.chip("v6e").hbm_bytes_per_s != 1600e9


def test_document_002_inputs_are_kept_exactly():
    expected = {
        "A100-80GB": (312e12, 2.039e12, 40e6, 60e-12, 0.90e-12, 60.0, 400.0),
        "A100-40GB": (312e12, 1.555e12, 40e6, 60e-12, 0.90e-12, 60.0, 400.0),
        "H100-SXM": (989e12, 3.35e12, 50e6, 50e-12, 0.55e-12, 90.0, 700.0),
        "B200 (approx.)": (2.25e15, 8.0e12, 126e6, 45e-12, 0.33e-12, 150.0, 1000.0),
    }
    for name, (peak, bw, l2, e_hbm, e_flop, static, tdp) in expected.items():
        record = hw.chip(name, source="doc002")
        values = (
            record.peak_flops_per_s["bf16"],
            record.hbm_bytes_per_s,
            record.on_chip_bytes,
            record.hbm_energy_j_per_byte,
            record.flop_energy_j,
            record.static_power_w,
            record.tdp_w,
        )
        assert values == (peak, bw, l2, e_hbm, e_flop, static, tdp), name
    assert hw.chips(source="doc002") == doc002.CHIPS
    assert doc002.FILE == "002_501c62d3c87c2a8c.txt"


def test_document_002_borrows_the_vendors_capacity_and_says_so():
    for record in doc002.CHIPS:
        vendor = hw.chip(record.key)
        assert record.hbm is vendor.hbm and record.hbm_visible is vendor.hbm_visible
        assert record.capacity_bytes == vendor.capacity_bytes
        assert "vendor" in record.note


def test_document_002_traffic_constants_and_model():
    assert {k: v.value for k, v in doc002.TRAFFIC.items()} == {
        "b_w": 12,
        "a": 200,
        "a_store": 34,
        "b_opt": 30,
        "b_ar": 4,
        "l2_fraction": 0.5,
    }
    assert (doc002.B_W, doc002.A, doc002.B_OPT, doc002.B_AR, doc002.L2_FRACTION) == (12, 200, 30, 4, 0.5)
    assert all(isinstance(v, hw.data.Sourced) and v.quoted and doc002.FILE in v.source for v in doc002.TRAFFIC.values())
    assert (doc002.D_MODEL, doc002.N_LAYERS, doc002.SEQ_LEN, doc002.VOCAB) == (4096, 32, 2048, 50000)
    assert doc002.CRITICAL_BATCH.value == 1e6 and doc002.CRITICAL_BATCH.unit == "tokens"
    assert [s.n_chips for s in doc002.SCENARIOS] == [1, 1, 8, 64, 64, 64]
    assert [s.fabric for s in doc002.SCENARIOS] == [None, None, "scale-up", "scale-out", "scale-out", "scale-out"]


def test_chips_filters_by_source():
    assert len(hw.chips()) == len(hw.chips("vendor")) + len(hw.chips("doc000")) + len(hw.chips("doc002"))
    assert {record.key for record in hw.chips("vendor")} >= set(VENDOR_KEYS)
    assert all(record.source == "doc000" for record in hw.chips("doc000"))
    assert hw.chips("vendor") == vendor_chips.CHIPS


def test_labels_and_printing():
    assert hw.chip("v6e", source="doc000").label.endswith("[doc000]")
    assert "read 2026" in str(hw.chip("v5e", source="doc000").hbm_bandwidth)
    assert "819" in str(hw.chip("v5e", source="doc000").hbm_bandwidth)
    assert repr(hw.chip("v5e")) == "Chip('TPU v5e')"


# --- the data fixes of 0.2 -----------------------------------------------------------------


def test_tpu_hbm_is_gib_as_googles_pages_print_it():
    # changed in 0.2 (migration notes, "Data changes"): 0.1 stored 16e9, 95e9 and 32e9 B; Google's current pages
    # print GiB (v5p: 96 GiB physical, 95 GiB user-allocatable)
    v5e, v5p, v6e = hw.chip("v5e"), hw.chip("v5p"), hw.chip("v6e")
    assert v5e.hbm_bytes == 16 * 2**30 and "16 GiB" in v5e.hbm.quoted
    assert v5p.hbm_bytes == 95 * 2**30 and v5p.hbm_visible_bytes == 95 * 2**30
    assert "GiB" in v5p.hbm.quoted and "95" in v5p.hbm.quoted and "96 GiB" in v5p.hbm_visible.quoted
    assert v6e.hbm_bytes == 32 * 2**30 and "GiB" in v6e.hbm.quoted
    for record in (v5e, v5p, v6e):
        assert record.capacity_bytes == record.hbm_bytes


def test_nvidia_capacity_is_what_the_device_reports():
    # new in 0.2: hbm keeps the datasheet figure, hbm_visible the capacity nvidia-smi or CUDA reports
    h100 = hw.chip("H100")
    assert h100.hbm_bytes == 80e9 and h100.capacity_bytes == 81559 * 2**20
    assert hw.chip("A100-40GB").capacity_bytes == 42_298_834_944
    assert hw.chip("A100-80GB").capacity_bytes == 81920 * 2**20
    assert hw.chip("H200").capacity_bytes == 143771 * 2**20
    assert hw.chip("B200").capacity_bytes == 183359 * 2**20
    for record in hw.chips("vendor"):
        if record.vendor == "NVIDIA":
            assert record.hbm_visible is not None and record.hbm_visible.quoted, record


def test_chips_needed_uses_the_capacity_a_device_reports():
    h100 = hw.chip("H100")
    # 0.8 x 82 GB fits one H100 as the device reports it (85.5 GB) but not as printed (80 GB)
    total = 0.8 * 82e9
    assert total > 0.8 * h100.hbm_bytes
    assert hw.chips_needed(total, h100) == 1
    assert hw.usable_bytes(h100) == 0.8 * 81559 * 2**20
    printed_only = dataclasses.replace(h100, hbm_visible=None)
    assert printed_only.capacity_bytes == 80e9 and hw.chips_needed(total, printed_only) == 2
    totals = np.array([1, 3, 9, 17]) * 0.8 * h100.capacity_bytes
    np.testing.assert_array_equal(hw.chips_needed(totals, h100), [1, 3, 9, 17])


def test_v5p_slices_have_no_16_chip_shape():
    # changed in 0.2: 0.1 listed a 16-chip 2x2x4 slice; Google's table goes 2x2x2 (8 chips), then 2x4x4 (32)
    plan = hw.deployment(hw.chip("v5p"))
    assert 16 not in plan.sizes and plan.sizes[:3] == (4, 8, 32)
    assert "2x2x4" not in plan.topologies and plan.topologies[:3] == ("2x2x1", "2x2x2", "2x4x4")
    needs_16 = 15.5 * hw.usable_bytes(hw.chip("v5p"))
    assert hw.chips_needed(needs_16, hw.chip("v5p")) == 16
    assert hw.deployment_chips(needs_16, hw.chip("v5p")) == 32


def test_new_peaks_and_on_chip_memory():
    assert hw.chip("v5p").peak("fp8") == 459e12 and hw.chip("v5p").peak("int8") == 918e12
    assert hw.chip("v6e").peak("fp8") == 918e12 and hw.chip("B200").peak("int8") == 4.5e15
    mib = 2**20
    expected = {
        "v4": 16 * mib,
        "v5e": 128 * mib,
        "v5p": 64 * mib,
        "v6e": 128 * mib,
        "tpu7x": 64 * mib,
        "h200": 50e6,
        "b200": 126.5e6,
    }
    for key, size in expected.items():
        assert hw.chip(key).on_chip_bytes == size, key


def test_every_vendor_and_document_002_chip_has_on_chip_memory():
    # the L2 of the L4, the L40S and the H100 PCIe was in no stored source: their steps leave re-blocking out
    no_sourced_l2 = {"l4", "l40s", "h100-pcie"}
    assert all(hw.chip(key).on_chip is None for key in no_sourced_l2)
    for record in (*hw.chips("vendor"), *hw.chips("doc002")):
        if record.key in no_sourced_l2:
            continue
        assert record.on_chip is not None and record.on_chip_bytes > 1e6, record
        assert record.on_chip.source and record.on_chip.quoted, record


def test_document_000_records_state_only_what_the_document_states():
    # by design: document 000 gives no on-chip memory, so its layer steps leave the re-blocking term out
    for record in hw.chips("doc000"):
        assert record.on_chip is None
        step = hw.layer_step(4096, 2048, record)
        assert not step.reblocking and "left out" in step.note


def test_kv_cache_takes_fp4_and_every_dtype():
    assert hw.kv_cache_bytes(1, 32, 8, 128, dtype="fp4") == 2 * 32 * 8 * 128 * 0.5
    for dtype, size in hw.BYTES_PER_ELEMENT.items():
        assert hw.kv_cache_bytes(1, 32, 8, 128, dtype=dtype) == 2 * 32 * 8 * 128 * size, dtype
        assert hw.kv_cache_bytes(1, hw.model("llama-3-8b"), dtype=dtype) == 2 * 32 * 8 * 128 * size, dtype


# --- lookups: one singular, one plural per record kind -------------------------------------

LOOKUPS = [  # (singular, a misspelling, the name it should suggest, plural, record type)
    (hw.chip, "v5f", "TPU v5e", hw.chips, hw.Chip),
    (hw.fabric, "nvlnk4", "nvlink4", hw.fabrics, hw.data.Fabric),
    (hw.cluster, "hgx-h100-nd", "hgx-h100-ndr", hw.clusters, hw.Cluster),
    (hw.model, "llama-3-7b", "llama-3-8b", hw.models, hw.ModelShape),
    (hw.recipe, "zero_mixed_adm", "zero_mixed_adam", hw.recipes, hw.data.TrainingRecipe),
]


@pytest.mark.parametrize(("find", "typo", "hint", "listing", "kind"), LOOKUPS)
def test_lookups_suggest_close_matches_and_reject_non_strings(find, typo, hint, listing, kind):
    with pytest.raises(KeyError, match=rf"unknown \w+ '{typo}'; did you mean \[.*'{hint}'"):
        find(typo)
    for bad in (5, None, 1.5):
        with pytest.raises(TypeError, match="(name|key) must be a .* (name|key) string"):
            find(bad)
    everything = listing()
    assert isinstance(everything, tuple) and everything and all(isinstance(r, kind) for r in everything)


def test_deployments_are_looked_up_by_chip_record():
    plans = hw.deployments()
    assert isinstance(plans, tuple) and all(isinstance(p, records.Deployment) for p in plans)
    assert hw.deployment(hw.chip("v5e")).key == "v5e-slices"
    with pytest.raises(TypeError, match="chip must be a Chip record"):
        hw.deployment("v5e")
    with pytest.raises(KeyError, match="no deployment sizes for chip"):
        hw.deployment(UNSOLD)
    for plan in plans:
        assert plan.source.startswith("https://") and plan.read_on == "2026-11-30" and plan.quoted


def test_unknown_names_suggest_close_matches():
    with pytest.raises(KeyError, match=r"unknown chip 'v5f'.*did you mean"):
        hw.chip("v5f")
    with pytest.raises(KeyError, match="unknown chip 'zzz'"):
        hw.chip("zzz")
    with pytest.raises(KeyError, match="no record from source 'doc000'"):
        hw.chip("H100", source="doc000")


def test_source_constants():
    assert records.SOURCES == ("vendor", "doc000", "doc002")
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", records.READ_ON)
    quoted = records.cite("somewhere")(1.0, "B", "1 B")
    assert quoted.source == "somewhere" and quoted.read_on == records.READ_ON and float(quoted) == 1.0
    assert math.isclose(float(hw.chip("v5e").hbm), 16 * 2**30)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: hw.chip(5), TypeError, "name must be a chip name string"),
        (lambda: hw.chip("v5e", source="blog"), ValueError, "source must be one of"),
        (lambda: hw.chips("blog"), ValueError, "source must be one of"),
        (lambda: hw.chip("v5e").peak("bf17"), KeyError, "dtype 'bf17'"),
        (lambda: hw.data.Sourced(-1.0, "B", "x", "2026-11-30"), ValueError, "Sourced.value must be a positive number"),
        (lambda: hw.data.Sourced(1.0, "B", "x", "30 Nov"), ValueError, "Sourced.read_on must be a date"),
        (lambda: dataclasses.replace(hw.chip("v5e"), source="blog"), ValueError, "source must be one of"),
        (lambda: hw.chip("v5e").require("hbm_energy", "tdp"), ValueError, "has no hbm_energy, tdp"),
    ],
)
def test_bad_input_names_the_parameter(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_custom_chip_and_fabric_carry_the_numbers_given_inline():
    chip = hw.custom_chip(
        "A100 80GB",
        peak_flops_per_s=312e12,
        hbm_bytes_per_s=2.039e12,
        hbm_bytes=80e9,
        tdp_w=400,
        static_power_w=100,
        hbm_energy_j_per_byte=31e-12,
        flop_energy_j=0.5e-12,
    )
    assert (chip.peak("bf16"), chip.hbm_bytes_per_s, chip.hbm_bytes, chip.tdp_w) == (312e12, 2.039e12, 80e9, 400)
    assert chip.label == "A100 80GB" and chip.source == "given" and chip.on_chip_bytes is None
    assert chip.require(*hw.data.records.ENERGY_FIELDS) is chip
    assert hw.custom_chip("x", peak_flops_per_s={"fp8": 2e15}, hbm_bytes_per_s=1e12, hbm_bytes=1e9).peak("fp8") == 2e15
    fabric = hw.custom_fabric("NDR", bytes_per_s=50e9, kind="scale-out", latency_s=2.7e-6)
    assert (fabric.bytes_per_s, fabric.domain_chips, fabric.latency_s, fabric.label) == (50e9, None, 2.7e-6, "NDR")


@pytest.mark.parametrize(
    "options, error, words",
    [
        (dict(peak_flops_per_s=-1), ValueError, "peak_flops_per_s['bf16'] must be > 0"),
        (dict(peak_flops_per_s={}), ValueError, "peak_flops_per_s"),
        (dict(peak_flops_per_s={"bf17": 1e12}), ValueError, "bf17"),
        (dict(hbm_bytes=float("nan")), ValueError, "hbm_bytes must not be NaN"),
        (dict(tdp_w="400"), TypeError, "tdp_w"),
        (dict(flop_energy_j=[1e-12, 2e-12]), TypeError, "flop_energy_j must be one number"),
    ],
)
def test_custom_chip_names_bad_input(options, error, words):
    given = dict(peak_flops_per_s=1e14, hbm_bytes_per_s=1e12, hbm_bytes=1e10) | options
    with pytest.raises(error, match=re.escape(words)):
        hw.custom_chip("x", **given)


def test_custom_fabric_names_bad_input():
    with pytest.raises(ValueError, match="bytes_per_s must be > 0"):
        hw.custom_fabric("x", bytes_per_s=0)
    with pytest.raises(ValueError, match="kind"):
        hw.custom_fabric("x", bytes_per_s=1e9, kind="sideways")
    with pytest.raises(TypeError, match="name"):
        hw.custom_fabric("", bytes_per_s=1e9)
