import dataclasses
import re

import pytest

import hwlib as hw

VENDOR_KEYS = ["v4", "v5e", "v5p", "v6e", "tpu7x", "a100-40gb", "a100-80gb", "h100-sxm", "h200", "b200", "mi300x"]


@pytest.mark.parametrize("name", ["v5e", "TPU v5e", "tpu-v5e", "V5E", "tpu_v5e", "Google TPU v5e"])
def test_lookup_is_forgiving_about_spelling(name):
    assert hw.chip(name) is hw.chip("v5e")


@pytest.mark.parametrize(
    ("alias", "key"),
    [("Trillium", "v6e"), ("Ironwood", "tpu7x"), ("H100", "h100-sxm"), ("nvidia h100-sxm", "h100-sxm"),
     ("A100-80GB", "a100-80gb"), ("amd mi300x", "mi300x")],
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
        assert all(1 * hw.TERA < value < 50 * hw.PETA for value in record.peak_flops_per_s.values())


def test_every_number_is_sourced_with_unit_and_date():
    for record in hw.chips():
        for field, value in record.sourced_values().items():
            assert isinstance(value, hw.Sourced), (record, field)
            assert value.unit in {"B", "B/s", "FLOP/s", "W", "J/B", "J/FLOP"}, (record, field)
            assert value.source and value.quoted, (record, field)
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.read_on)
            assert value.value > 0


def test_units_of_each_field():
    expected = {"hbm": "B", "hbm_bandwidth": "B/s", "l2": "B", "tdp": "W", "interconnect": "B/s",
                "hbm_energy": "J/B", "flop_energy": "J/FLOP", "static_power": "W"}
    for record in hw.chips():
        for field, value in record.sourced_values().items():
            unit = "FLOP/s" if field.startswith("peak_flops") else expected[field]
            assert value.unit == unit, (record, field)


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
        values = (record.peak_flops_per_s["bf16"], record.hbm_bytes_per_s, record.l2.value,
                  record.hbm_energy.value, record.flop_energy.value, record.static_power.value, record.tdp.value)
        assert values == (peak, bw, l2, e_hbm, e_flop, static, tdp), name


def test_chips_filters_by_source():
    assert len(hw.chips()) == len(hw.chips("vendor")) + len(hw.chips("doc000")) + len(hw.chips("doc002"))
    assert {record.key for record in hw.chips("vendor")} >= set(VENDOR_KEYS)
    assert all(record.source == "doc000" for record in hw.chips("doc000"))


def test_labels_and_printing():
    assert hw.chip("v6e", source="doc000").label.endswith("[doc000]")
    assert "read 2026" in str(hw.chip("v5e", source="doc000").hbm_bandwidth)
    assert "819" in str(hw.chip("v5e", source="doc000").hbm_bandwidth)


def test_unknown_names_suggest_close_matches():
    with pytest.raises(KeyError, match=r"unknown chip name 'v5f'.*did you mean"):
        hw.chip("v5f")
    with pytest.raises(KeyError, match="unknown chip name 'zzz'"):
        hw.chip("zzz")
    with pytest.raises(KeyError, match="no record from source 'doc000'"):
        hw.chip("H100", source="doc000")


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: hw.chip(5), TypeError, "name must be a chip name string"),
        (lambda: hw.chip("v5e", source="blog"), ValueError, "source must be one of"),
        (lambda: hw.chips("blog"), ValueError, "source must be one of"),
        (lambda: hw.chip("v5e").peak("bf17"), KeyError, "dtype 'bf17'"),
        (lambda: hw.Sourced(-1.0, "B", "x", "2026-11-30"), ValueError, "Sourced.value must be a positive number"),
        (lambda: hw.Sourced(1.0, "B", "x", "30 Nov"), ValueError, "Sourced.read_on must be a date"),
    ],
)
def test_bad_input_names_the_parameter(call, error, words):
    with pytest.raises(error, match=words):
        call()
