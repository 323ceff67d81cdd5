"""hwlib.energy: document 002's Table 1 and Table 2's balances, per-bit energies (hwlib.data.literature)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hwlib as hw
from hwlib import energy
from hwlib.data import doc002, literature

DOC = {name: hw.chip(name, source="doc002") for name in ("A100-80GB", "A100-40GB", "H100-SXM", "B200")}
A100 = DOC["A100-80GB"]

# Document 002, Table 1: (item, pJ, int8-adds) as printed with :8.3f and :10.0f.
TABLE_1 = [
    ("int8 add (datapath)", "0.008", "1"),
    ("BF16 FLOP, datapath only", "0.100", "12"),
    ("BF16 FLOP, all-in on A100", "0.900", "112"),
    ("1 byte moved 1 mm", "0.800", "100"),
    ("1 byte across a 16 mm die", "12.800", "1600"),
    ("1 byte from register file", "0.300", "37"),
    ("1 byte from SMEM/L1 (192 KB)", "1.000", "125"),
    ("1 byte from L2 (40 MB)", "12.000", "1500"),
    ("1 byte from HBM2e (interface)", "40.000", "5000"),
    ("1 byte from HBM2e (all-in)", "60.000", "7500"),
    ("1 byte from HBM2e (far corner)", "78.000", "9750"),
]


def test_table_1_is_reproduced_with_the_documents_rounding():
    table = hw.viz.byte_cost_table()
    assert list(table.index) == [row[0] for row in TABLE_1]
    for item, pj, adds in TABLE_1:
        assert f"{table.loc[item, 'energy (pJ)']:.3f}" == pj
        assert f"{table.loc[item, 'int8 adds']:.0f}" == adds


def test_rows_derived_from_per_bit_costs():
    costs = {row.item: row for row in hw.byte_costs()}
    assert costs["1 byte moved 1 mm"].joules == pytest.approx(8 * 100e-15, rel=1e-12)
    assert costs["1 byte across a 16 mm die"].joules == pytest.approx(16 * 8 * 100e-15, rel=1e-12)
    assert costs["1 byte from HBM2e (interface)"].joules == pytest.approx(40e-12, rel=1e-12)
    assert costs["BF16 FLOP, all-in on A100"].joules == A100.flop_energy_j == 0.90e-12
    assert all(row.source and row.note for row in costs.values())


def test_rebuilt_rows():
    rebuilt = hw.rebuilt_byte_costs()
    assert rebuilt["1 byte from HBM2e (all-in)"] == pytest.approx(60e-12)
    assert rebuilt["1 byte from HBM2e (far corner)"] == pytest.approx(78.4e-12)
    assert rebuilt["1 byte from L2 (40 MB)"] == pytest.approx(12e-12)
    assert rebuilt["1 byte from SMEM/L1 (192 KB)"] == pytest.approx(0.8e-12)  # Table 1 prints 1.0


def test_add_equivalent_unit():
    assert energy.ADD_EQUIVALENT_J == pytest.approx(8e-15) and energy.BITS_PER_BYTE == 8
    assert hw.add_equivalents(8e-15) == pytest.approx(1.0)
    assert hw.add_equivalent_distance_mm() == pytest.approx(0.010)  # one add = one byte moved 10 um
    assert hw.add_equivalents(hw.wire_energy_j(1, 16)) == pytest.approx(1600)
    np.testing.assert_allclose(hw.wire_energy_j(np.array([1, 2]), 1.0), [0.8e-12, 1.6e-12])
    for value in (
        literature.WIRE_ENERGY_PER_BIT_MM,
        literature.ADD_ENERGY_PER_BIT,
        literature.SRAM_ENERGY_PER_BIT,
        literature.HBM_INTERFACE_ENERGY_PER_BIT,
    ):
        assert value.read_on == "2026-11-30" and "Dally" in value.source


def test_table_2_balances():
    printed = {"A100-80GB": (153, 67), "A100-40GB": (201, 67), "H100-SXM": (295, 91), "B200": (281, 136)}
    for name, (time_balance, energy_balance) in printed.items():
        balance = hw.machine_balance(DOC[name])
        assert (round(balance.time), round(balance.energy)) == (time_balance, energy_balance)
    assert hw.machine_balance(A100).time == 312e12 / 2.039e12
    assert hw.machine_balance(A100).energy == 60e-12 / 0.90e-12


def test_e_flop_note_and_implied_hbm_power():
    assert hw.flop_energy_from_power(A100, hbm_w=40.0) == pytest.approx(300 / 312e12)
    assert f"{hw.flop_energy_from_power(A100, hbm_w=40.0) * 1e12:.2f}" == "0.96"
    assert hw.hbm_power_w(A100) == pytest.approx(122.34)
    assert hw.flop_energy_from_power(A100) == pytest.approx((400 - 60 - 122.34) / 312e12)
    assert hw.implied_hbm_power_w(A100) == pytest.approx(59.2)


def test_full_load_power_exceeds_tdp():
    expected = {"A100-80GB": 463, "A100-40GB": 434, "H100-SXM": 801, "B200": 1252}
    for name, watts in expected.items():
        assert round(hw.full_load_power_w(DOC[name])) == watts
        assert hw.full_load_power_w(DOC[name]) > DOC[name].tdp_w


def test_energy_per_flop_doubles_at_the_energy_balance():
    balance = hw.machine_balance(A100).energy
    assert hw.energy_per_flop_j(balance, A100) == pytest.approx(2 * A100.flop_energy_j)
    assert hw.energy_per_flop_j(np.inf, A100) == A100.flop_energy_j


@given(st.floats(min_value=1e-3, max_value=1e6), st.floats(min_value=1e-3, max_value=1e6))
def test_energy_per_flop_falls_with_intensity(low, high):
    low, high = sorted((low, high))
    assert hw.energy_per_flop_j(low, A100) >= hw.energy_per_flop_j(high, A100)


@given(st.floats(min_value=0, max_value=1e9), st.floats(min_value=0, max_value=1e3))
def test_wire_energy_is_linear(n_bytes, mm):
    assert math.isclose(hw.wire_energy_j(n_bytes, mm), n_bytes * mm * 0.8e-12, rel_tol=1e-12, abs_tol=1e-300)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: hw.machine_balance(hw.chip("A100-80GB")).energy, ValueError, "has no hbm_energy, flop_energy"),
        (lambda: hw.machine_balance("A100"), TypeError, "chip must be a Chip record"),
        (lambda: hw.full_load_power_w(hw.chip("H100")), ValueError, "hbm_energy, flop_energy, static_power"),
        (lambda: hw.hbm_power_w(hw.chip("v5e")), ValueError, "has no hbm_energy"),
        (lambda: hw.implied_hbm_power_w(hw.chip("v5e")), ValueError, "has no hbm_energy"),
        (lambda: hw.flop_energy_from_power(A100, hbm_w=-1), ValueError, "hbm_w must be >= 0"),
        (lambda: hw.flop_energy_from_power(A100, hbm_w=400), ValueError, "hbm_w must leave power"),
        (lambda: hw.add_equivalents(-1.0), ValueError, "joules must be >= 0"),
        (lambda: hw.add_equivalents("8 fJ"), TypeError, "joules must be a real number"),
        (lambda: hw.wire_energy_j(1, float("nan")), ValueError, "distance_mm must not be NaN"),
        (lambda: hw.wire_energy_j(-1, 1), ValueError, "n_bytes must be >= 0"),
        (lambda: hw.energy_per_flop_j(0, A100), ValueError, "intensity must be > 0"),
    ],
)
def test_bad_input_names_the_parameter(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_derived_rows_match_what_table_1_prints():
    for row in hw.byte_costs():
        assert row.printed == dict(doc002.TABLE1)[row.item].value
        if row.derivation:
            assert row.joules == pytest.approx(row.printed, rel=1e-12), row.item
        else:
            assert row.joules == row.printed, row.item
    assert dict(doc002.TABLE1)["BF16 FLOP, datapath only"].value == doc002.E_DATAPATH_A100.value
    assert doc002.TABLE1_HBM_POWER.value == 40.0 and doc002.ROUND_TRIP_MM["1 byte from L2 (40 MB)"] == 10.0
    assert hw.flop_energy_from_power(A100, hbm_w=doc002.TABLE1_HBM_POWER.value) == pytest.approx(300 / 312e12)


def test_time_balance_works_for_every_chip_and_energy_balance_needs_energy_parameters():
    for record in hw.chips():
        balance = hw.machine_balance(record)
        assert balance.time == hw.ridge_point(record) and balance.chip is record
        if record.hbm_energy is None or record.flop_energy is None:
            with pytest.raises(ValueError, match=r"has no (hbm_energy|flop_energy)"):
                _ = balance.energy
        else:
            assert balance.energy == record.hbm_energy_j_per_byte / record.flop_energy_j
