"""Every time model takes every chip: layer step, T_min, d_min, balances and the element-wise tax.

0.1's layer model needed document 002's energy parameters and the chip's L2 even for a time; 0.2's
time fields need only peak and bandwidth (and the on-chip memory for the re-blocking term, left out
and said so where none is sourced), and the energy fields raise a ValueError naming what is missing.
"""

import dataclasses
import math
import re

import numpy as np
import pytest

import hwlib as hw
from hwlib import layer_model
from hwlib.data import doc002
from hwlib.data.records import ENERGY_FIELDS

CHIPS = hw.chips()
IDS = [record.label for record in CHIPS]
ENERGY = (*layer_model.ENERGY_PARTS, "energy_j", "power_w")


def has_energy(record):
    return all(getattr(record, name) is not None for name in ENERGY_FIELDS)


@pytest.mark.parametrize("chip", CHIPS, ids=IDS)
def test_layer_step_time_fields_are_finite_and_positive(chip):
    step = hw.layer_step(4096, 2048, chip)
    for name in layer_model.TIME_FIELDS:
        value = getattr(step, name)
        assert isinstance(value, float) and math.isfinite(value) and value > 0, (name, value)
    assert step.time_s == pytest.approx(step.gemm_time_s + step.elementwise_time_s, rel=1e-12)
    assert step.flops == 72 * 4096**2 * 2048
    assert step.time_s >= step.flops / chip.peak("bf16") * (1 - 1e-12)
    assert step.reblocking is (chip.on_chip is not None)
    assert step.chip is chip and chip.label in repr(step)


@pytest.mark.parametrize("chip", CHIPS, ids=IDS)
def test_t_min_d_min_balances_and_tax_work_for_every_chip(chip):
    ridge = hw.ridge_point(chip)
    assert hw.machine_balance(chip).time == ridge
    tokens = hw.t_min(4096, chip)
    assert tokens > 0 and not math.isnan(tokens)
    if math.isfinite(tokens):
        assert hw.layer_step(4096, tokens, chip).intensity == pytest.approx(ridge, rel=1e-9)
    smallest = hw.d_min(chip)
    assert smallest > 0 and not math.isnan(smallest)
    assert math.isinf(hw.t_min(smallest * 0.99, chip))
    assert math.isfinite(hw.t_min(smallest * 1.01, chip)) or math.isinf(smallest)
    assert hw.t_min_large_d(chip, include_reblocking=False) == pytest.approx(doc002.B_W * ridge / 6)
    assert hw.t_min_large_d(chip) >= hw.t_min_large_d(chip, include_reblocking=False)
    ratio = hw.elementwise_time_ratio(np.array([768, 4096]), chip)
    np.testing.assert_allclose(ratio, doc002.A * ridge / (72 * np.array([768, 4096])))
    share = hw.elementwise_time_share(4096, chip)
    assert share == pytest.approx(ratio[1] / (1 + ratio[1]))
    assert 0 < hw.blocking_elements(chip) <= math.inf


@pytest.mark.parametrize("chip", [c for c in CHIPS if not has_energy(c)], ids=lambda c: c.label)
def test_energy_fields_of_a_chip_without_energy_parameters_name_what_is_missing(chip):
    missing = [name for name in ENERGY_FIELDS if getattr(chip, name) is None]
    step = hw.layer_step(4096, 2048, chip)
    for name in ENERGY:
        with pytest.raises(ValueError, match=re.escape(f"chip {chip.label} has no {', '.join(missing)};")) as error:
            getattr(step, name)
        assert all(field in str(error.value) for field in missing)
    with pytest.raises(ValueError, match="has no"):
        step.energy_shares()
    with pytest.raises(ValueError, match="has no"):
        _ = hw.machine_balance(chip).energy
    with pytest.raises(ValueError, match="has no"):
        hw.layer_step(4096, 2048, chip, power_cap=True)
    # the time fields are still there after a failed energy read
    assert step.time_s == hw.layer_step(4096, 2048, chip).time_s


def test_vendor_chips_have_no_energy_parameters_and_document_002s_do():
    assert not any(has_energy(record) for record in hw.chips("vendor"))
    assert all(has_energy(record) for record in hw.chips("doc002"))
    step = hw.layer_step(4096, 2048, hw.chip("A100-80GB", source="doc002"))
    parts = sum(getattr(step, name) for name in layer_model.ENERGY_PARTS)
    assert step.energy_j == pytest.approx(parts, rel=1e-12) and step.power_w > 0


def test_without_on_chip_memory_the_reblocking_term_is_left_out_and_said_so():
    chip = dataclasses.replace(hw.chip("v5e"), on_chip=None)
    assert hw.blocking_elements(chip) == math.inf
    step = hw.layer_step(4096, 2048, chip)
    assert step.reblocking is False
    assert "re-blocking term left out" in step.note and chip.label in step.note
    d, T, b_w, a = 4096, 2048, doc002.B_W, doc002.A
    assert step.weight_hbm_bytes == 12 * d * d * b_w  # no 6 T / sqrt(Z) term
    assert step.activation_hbm_bytes == a * d * T
    ridge = hw.ridge_point(chip)
    closed_form = 12 * b_w * d * ridge / (72 * d - a * ridge)
    assert hw.t_min(d, chip) == pytest.approx(closed_form, rel=1e-12)
    assert hw.d_min(chip) == pytest.approx(a * ridge / 72, rel=1e-12)
    assert hw.t_min_large_d(chip) == hw.t_min_large_d(chip, include_reblocking=False)
    # with the on-chip memory the term is in, and named in the note
    full = hw.layer_step(4096, 2048, hw.chip("v5e"))
    assert full.reblocking is True and "re-blocking term with" in full.note
    z = hw.blocking_elements(hw.chip("v5e"))
    assert z == 0.5 * 128 * 2**20 / 2
    assert full.weight_hbm_bytes == pytest.approx(12 * d * d * (b_w + 6 * T / math.sqrt(z)), rel=1e-12)
    assert hw.t_min(d, hw.chip("v5e")) > hw.t_min(d, chip)


def test_document_000_chips_have_no_on_chip_memory_so_their_steps_say_so():
    for chip in hw.chips("doc000"):
        step = hw.layer_step(4096, 2048, chip)
        assert step.reblocking is (chip.on_chip is not None)
        if chip.on_chip is None:
            assert "re-blocking term left out" in step.note


def test_document_002_records_still_give_its_printed_tables():
    a100 = hw.chip("A100-80GB", source="doc002")
    assert round(hw.t_min(4096, a100)) == 361
    assert round(hw.machine_balance(a100).time) == 153 and round(hw.machine_balance(a100).energy) == 67
    assert round(hw.d_min(a100)) == 447
    assert round(hw.t_min_large_d(a100, include_reblocking=False)) == 306
    printed = {"A100-40GB": 501, "H100-SXM": 824, "B200": 741}  # Table 3, d = 4096
    for name, value in printed.items():
        assert round(hw.t_min(4096, hw.chip(name, source="doc002"))) == value
    assert math.isinf(hw.t_min(512, hw.chip("H100-SXM", source="doc002")))


@pytest.mark.parametrize("chip", [hw.chip("A100-80GB", source="doc002"), hw.chip("TPU v6e")], ids=lambda c: c.label)
def test_the_vectorised_layer_step_equals_a_loop_of_scalar_calls(chip):
    ds = np.linspace(256, 16384, 1000)[:, None]
    ts = np.geomspace(1, 1e6, 1000)[None, :]
    grid = hw.layer_step(ds, ts, chip, seq_len=2048)
    fields = layer_model.TIME_FIELDS + (ENERGY if has_energy(chip) else ())
    values = {name: getattr(grid, name) for name in fields}
    assert all(np.shape(v) == (1000, 1000) for v in values.values())
    for i, j in ((0, 0), (999, 999), (0, 999), (999, 0), (123, 456), (500, 501), (731, 17)):
        one = hw.layer_step(float(ds[i, 0]), float(ts[0, j]), chip, seq_len=2048)
        for name in fields:
            assert values[name][i, j] == pytest.approx(getattr(one, name), rel=1e-14, abs=0), (name, i, j)
    # a second grid does not write over the first (hwlib reuses memory only nobody holds)
    kept = grid.time_s.copy()
    other = hw.layer_step(ds * 2, ts, chip)
    np.testing.assert_array_equal(grid.time_s, kept)
    view = other.time_s
    before = view.copy()
    del other
    hw.layer_step(ds * 3, ts, chip)
    np.testing.assert_array_equal(view, before)
