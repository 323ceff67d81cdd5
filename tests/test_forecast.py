"""The forecast beside every bound: its efficiencies, its calibration on measured runs, and its error."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import hwlib as hw
from hwlib.calibration_fit import FEWEST_BAND_RUNS, KIND_ERRORS, SOURCE_OUT_TARGETS, TARGETS, forecast_error_lines
from hwlib.data import calibrated, efficiencies
from hwlib.data.records import KernelEfficiency
from hwlib.efficiency import collective_efficiency, small_allreduce_s, tile_quantization
from hwlib.serving.throughput import serving_run_bound
from hwlib.training.forecast import FORECAST_PARTS
from hwlib.training.plan import training_run_bound, training_run_forecast

AT_PEAK = hw.Efficiency.at_peak()
"""Every efficiency at 100 %: the forecast falls back to the bound's own counts."""


@pytest.fixture(scope="module")
def calibration():
    return hw.calibration()


def test_the_error_table_prints_and_the_errors_meet_their_targets(calibration):
    print(calibration.summary.T.round(1).to_string())
    for domain, (mean, worst) in TARGETS.items():
        row = calibration.summary.loc[domain]
        assert row["mean error, leave one out (%)"] <= 100 * mean, domain
        assert row["worst, leave one out (%)"] <= 100 * worst, domain
        # a whole source out is no easier than one run out, up to the fit grid's steps (a tenth of a point)
        assert row["mean error, leave source out (%)"] >= row["mean error, leave one out (%)"] - 0.1, domain


def test_with_each_source_left_out_the_training_forecast_meets_its_targets(calibration):
    summary = calibration.summary
    assert summary.loc["training", "in targets"] >= 100  # over at least 100 runs
    for domain, (mean, worst) in SOURCE_OUT_TARGETS.items():
        assert summary.loc[domain, "mean error, leave source out (%)"] <= 100 * mean, domain
        if worst is not None:
            assert summary.loc[domain, "worst, leave source out (%)"] <= 100 * worst, domain


def test_enough_runs_and_sources_are_in_the_targets(calibration):
    summary = calibration.summary
    assert summary.loc["training", "in targets"] >= 30 and summary.loc["training", "sources"] >= 4
    assert summary.loc["serving", "in targets"] >= 25 and summary.loc["serving", "sources"] >= 4
    chips = {hw.cluster(run.cluster_key).chip.vendor for run in hw.training_runs() if not run.outside_model}
    assert {"NVIDIA", "Google"} <= chips


def test_the_stored_values_are_the_fit(calibration):
    assert calibration.fitted.keys() == calibration.stored.keys()
    for name, value in calibration.stored.items():
        assert calibration.fitted[name] == pytest.approx(value, rel=1e-9, abs=1e-12), name


def test_leave_out_errors_are_computed_on_runs_outside_the_fit(calibration):
    table = calibration.serving
    counted = table[table["in targets"]]
    assert counted["error, leave source out (%)"].notna().all()
    assert (table.loc[~table["in targets"], "why not"] != "").all()


@pytest.mark.parametrize("run", hw.training_runs(), ids=lambda run: run.key)
def test_a_training_forecast_never_exceeds_its_bound(run):
    bound, step = training_run_bound(run)
    assert training_run_forecast(run) <= bound * (1 + 1e-9)
    assert step.forecast_time_s >= step.time_s * (1 - 1e-9)
    assert sum(step.forecast_parts_s.values()) == pytest.approx(step.forecast_time_s)
    assert set(step.forecast_parts_s) == set(FORECAST_PARTS)


@pytest.mark.parametrize("run", hw.serving_runs(), ids=lambda run: run.key)
def test_a_serving_forecast_never_exceeds_its_bound(run):
    result = serving_run_bound(run)
    assert 0 < result.forecast_tokens_per_s <= result.tokens_per_s * (1 + 1e-9)


def test_at_peak_a_serving_forecast_is_the_bound():
    model = hw.model("llama-3-70b")
    batch, context = np.array([1, 16, 256]), np.array([[128], [4096]])
    for where in (hw.chip("h100-sxm"), hw.cluster("hgx-h100-ndr"), hw.cluster("tpu-v5p")):
        step = hw.inference_step(model, where, batch, context, 1, 8, "fp8", "fp8", efficiency=AT_PEAK)
        np.testing.assert_allclose(step.forecast_time_s, step.time_s, rtol=1e-12)
        assert np.all(step.time_upper_s >= step.time_s)
    moe = hw.inference_step(
        hw.model("mixtral-8x7b"), hw.chip("h100-sxm"), 64, 2048, 1, 8, expert_parallel=True, efficiency=AT_PEAK
    )
    assert moe.forecast_time_s == pytest.approx(moe.time_s, rel=1e-12)


def test_at_peak_a_training_forecast_is_the_bound():
    model, cluster = hw.model("llama-3-70b"), hw.cluster("hgx-h100-ndr")
    mesh = hw.Mesh(fsdp=16, tp=8, pp=2)
    step = hw.train_step(model, cluster, mesh, 4 * 2**20, 8192, efficiency=AT_PEAK)
    assert step.forecast_time_s == pytest.approx(step.time_s, rel=1e-12)
    assert step.forecast_mfu == pytest.approx(step.mfu, rel=1e-12)


def test_each_serving_overhead_adds_what_it_says():
    model, chip = hw.model("llama-3-8b"), hw.chip("h100-sxm")
    base = hw.inference_step(model, chip, 32, 1024, 1, efficiency=AT_PEAK).forecast_time_s
    per_layer = hw.Efficiency(**{**AT_PEAK.__dict__, "layer_overhead_s": 1e-5})
    per_sequence = hw.Efficiency(**{**AT_PEAK.__dict__, "sequence_overhead_s": 1e-5})
    assert hw.inference_step(model, chip, 32, 1024, 1, efficiency=per_layer).forecast_time_s == pytest.approx(
        base + model.n_layers * 1e-5
    )
    assert hw.inference_step(model, chip, 32, 1024, 1, efficiency=per_sequence).forecast_time_s == pytest.approx(
        base + 32 * 1e-5
    )


def test_a_hidden_collective_slows_the_compute_beside_it_by_the_measured_share():
    model, cluster = hw.model("llama-3-8b"), hw.cluster("hgx-h100-ndr")
    mesh, batch, seq = hw.Mesh(fsdp=64), 64 * 8192, 8192
    quiet = hw.train_step(model, cluster, mesh, batch, seq, efficiency=AT_PEAK)
    loud = hw.train_step(
        model, cluster, mesh, batch, seq, efficiency=hw.Efficiency(**{**AT_PEAK.__dict__, "overlap_slowdown": 0.25})
    )
    hidden = sum(quiet.comm_time_s.values()) - sum(quiet.exposed_comm_time_s.values())
    assert hidden > 0
    assert loud.forecast_parts_s["overlap slowdown"] == pytest.approx(0.25 * hidden)
    assert loud.forecast_time_s == pytest.approx(quiet.forecast_time_s + 0.25 * hidden)
    default = hw.train_step(model, cluster, mesh, batch, seq)
    assert default.forecast_parts_s["overlap slowdown"] > 0
    assert efficiencies.BY_CHIP["h100-sxm"].overlap_slowdown.value == pytest.approx(0.189)
    tpu = hw.train_step(model, hw.cluster("tpu-v5p"), mesh, batch, seq)
    assert tpu.forecast_parts_s["overlap slowdown"] == 0  # no TPU measurement: none applied


def test_a_run_whose_software_predates_flashattention_2_takes_the_older_kernel():
    runs = {run.key: run for run in hw.training_runs()}
    old, new = runs["mpt-h100-13b-8"], runs["nemo2407-llama3-8b"]
    assert old.attention.value == pytest.approx(335 / 989) and new.attention is None
    _, step = training_run_bound(old)
    _, fast = training_run_bound(old, hw.Efficiency(attention=0.75))
    assert step.forecast_parts_s["attention"] == pytest.approx(fast.forecast_parts_s["attention"] * 0.75 / (335 / 989))
    assert runs["mpt-a100-7b-8"].attention.value == pytest.approx(0.40)


def test_the_smallest_allreduce_is_a_floor_between_its_measurements():
    known = efficiencies.SMALL_ALLREDUCE_S
    np.testing.assert_allclose(
        small_allreduce_s(np.array([1, 2, 4, 8, 64])),
        [0.0, known[2].value, (known[2].value + known[8].value) / 2, known[8].value, known[8].value],
    )
    model, chip = hw.model("llama-3-8b"), hw.chip("h100-sxm")
    floor = hw.Efficiency(**{**AT_PEAK.__dict__, "small_allreduce_s": 1e-3})
    step = hw.inference_step(model, chip, 1, 128, 1, 8, efficiency=floor)
    # at peak the forecast hides its collectives as the bound does: the floored all-reduces set the step
    floored = 2 * model.n_layers * 1e-3
    assert step.forecast_time_s == pytest.approx(max(step.compute_time_s, step.memory_time_s, floored))


def test_tile_and_wave_quantization():
    assert tile_quantization(128, 128, (128, 128), 1) == pytest.approx(1.0)
    assert tile_quantization(129, 128, (128, 128), 1) == pytest.approx(129 / 256)
    assert tile_quantization(8, 128, (128, 128), 1) == pytest.approx(8 / 16)  # the row tile shrinks to 16
    assert tile_quantization(128, 133 * 128, (128, 128), 132) == pytest.approx(133 / 264)  # a second, near-empty wave
    assert tile_quantization(4096, 4096, (128, 128), 132) == pytest.approx(1024 / (8 * 132))


def test_a_forecast_follows_its_matmul_fraction():
    model, cluster = hw.model("llama-3-8b"), hw.cluster("hgx-h100-ndr")
    slow = hw.train_step(model, cluster, hw.Mesh(fsdp=8), 2**20, 8192, efficiency=hw.Efficiency(matmul=0.4))
    fast = hw.train_step(model, cluster, hw.Mesh(fsdp=8), 2**20, 8192, efficiency=hw.Efficiency(matmul=0.8))
    assert slow.forecast_parts_s["matmuls"] == pytest.approx(2 * fast.forecast_parts_s["matmuls"])
    assert slow.time_s == fast.time_s


def test_efficiencies_broadcast_as_arrays():
    model, chip = hw.model("llama-3-8b"), hw.chip("h100-sxm")
    step = hw.inference_step(model, chip, 8, 1024, 1, efficiency=hw.Efficiency(hbm=np.array([0.5, 1.0])))
    assert np.shape(step.forecast_time_s) == (2,)
    assert step.forecast_time_s[0] > step.forecast_time_s[1]


def test_collective_efficiency_is_a_fraction_per_scope():
    for scope in ("node", "network"):
        assert 0 < collective_efficiency(scope) <= 1
    with pytest.raises(ValueError, match="scope must be one of"):
        collective_efficiency("rack")


def test_every_kernel_record_is_sourced_and_a_fraction():
    for record in efficiencies.RECORDS:
        hw.chip(record.chip_key)
        for quantity in (record.attention, *record.matmul.values()):
            assert 0 < quantity.value <= 1 and quantity.source and quantity.quoted
    with pytest.raises(ValueError, match="attention must be a fraction"):
        KernelEfficiency(
            "x",
            {"bf16": efficiencies.RECORDS[0].attention},
            efficiencies.KV_CACHE_FRACTION.__class__(1.5, "1", "s", "2026-12-02", "q"),
            (128, 128),
            efficiencies.RECORDS[0].parallel_tiles,
        )


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"matmul": 1.5}, ValueError, r"Efficiency\.matmul must be a fraction in \(0, 1\], got 1\.5"),
        ({"hbm": 0}, ValueError, r"Efficiency\.hbm"),
        ({"unmodelled_share": 1.0}, ValueError, r"Efficiency\.unmodelled_share must be in \[0, 1\)"),
        ({"overlap_slowdown": 1.5}, ValueError, r"Efficiency\.overlap_slowdown must be in \[0, 1\)"),
        ({"layer_overhead_s": -1e-6}, ValueError, r"Efficiency\.layer_overhead_s"),
        ({"sequence_overhead_s": float("nan")}, ValueError, r"Efficiency\.sequence_overhead_s"),
        ({"quantization": "yes"}, TypeError, r"Efficiency\.quantization must be True or False"),
    ],
)
def test_bad_efficiencies_are_refused_by_name(options, error, match):
    with pytest.raises(error, match=match):
        hw.Efficiency(**options)


def test_a_forecast_refuses_what_is_not_an_efficiency():
    with pytest.raises(TypeError, match=r"efficiency must be an hw\.Efficiency"):
        hw.inference_step(hw.model("llama-3-8b"), hw.chip("h100-sxm"), 1, 128, 1, efficiency=0.5)
    with pytest.raises(TypeError, match=r"efficiency must be an hw\.Efficiency"):
        hw.train_step(hw.model("llama-3-8b"), hw.cluster("hgx-h100-ndr"), hw.Mesh(fsdp=8), 2**20, 8192, efficiency={})


def test_the_stored_error_bands_by_kind_are_the_calibrations(calibration):
    from hwlib.data import calibrated

    stored = {record.kind: record for record in calibrated.FORECAST_ERRORS}
    paste = "FORECAST_ERRORS in hwlib/data/calibrated.py should read:\n" + forecast_error_lines(calibration)
    assert set(stored) == set(calibration.kinds.index), paste
    mean, worst = KIND_ERRORS
    for kind, row in calibration.kinds.iterrows():
        record = stored[kind]
        assert (record.runs, record.sources) == (row["runs"], row["sources"]), paste
        assert record.mean.value == pytest.approx(row[mean] / 100, abs=5e-4), paste
        assert record.worst.value == pytest.approx(row[worst] / 100, abs=5e-4), paste


def test_every_catalogue_chip_has_a_family():
    assert {chip.family for chip in hw.chips()} == {"GPU", "TPU", "Gaudi", "Trainium"}
    assert hw.chip("v5p").family == "TPU" and hw.chip("mi300x").family == "GPU"
    assert (hw.chip("gaudi3").family, hw.chip("trainium2").family) == ("Gaudi", "Trainium")


def test_a_family_without_measured_runs_gets_no_band_and_names_the_closest_measured_kind():
    gpu = hw.forecast_band("training", hw.model("llama-3-70b"), hw.chip("h100-sxm"))
    for key, family in (("gaudi3", "Gaudi"), ("trainium2", "Trainium")):
        band = hw.forecast_band("training", hw.model("llama-3-70b"), hw.chip(key))
        assert band.family == family and band.mean is None and band.runs == 0 and band.closest == gpu
        assert band.text.startswith(f"error unknown: no {family} dense training runs")


def test_a_forecast_band_is_its_kinds_measured_error(calibration):
    dense, moe = hw.model("llama-3-8b"), hw.model("mixtral-8x7b")
    gpu, tpu = hw.chip("h100-sxm"), hw.chip("v5p")
    bands = {
        (domain, model.name, chip.family): hw.forecast_band(domain, model, chip)
        for domain in ("training", "serving")
        for model in (dense, moe)
        for chip in (gpu, tpu)
    }
    measured = bands["training", dense.name, "GPU"]
    assert measured.runs >= 30 and measured.sources >= 4 and 0 < measured.mean <= measured.worst
    assert measured.text.startswith(f"±{100 * measured.mean:.0f} % (mean leave-source-out error over ")
    assert "GPU dense training runs" in measured.text and measured.closest is None
    assert bands["training", dense.name, "TPU"].text != measured.text
    assert "TPU dense training runs" in bands["training", dense.name, "TPU"].text
    moe_gpu = bands["training", moe.name, "GPU"]
    assert moe_gpu.runs == calibration.kinds.loc[("training", "MoE", "GPU", "many"), "runs"] >= FEWEST_BAND_RUNS
    assert "GPU MoE training runs" in moe_gpu.text and moe_gpu.mean > measured.mean
    unknown = bands["training", moe.name, "TPU"]  # no MoE run on a TPU is published with its configuration
    assert unknown.mean is None and unknown.worst is None and unknown.runs == 0
    assert unknown.text.startswith("error unknown: no TPU MoE training runs")
    assert unknown.closest == moe_gpu and "the closest measured kind, GPU MoE training" in unknown.text
    assert bands["serving", moe.name, "GPU"].mean != bands["serving", dense.name, "GPU"].mean
    custom = hw.custom_chip("mine", peak_flops_per_s=1e15, hbm_bytes_per_s=1e12, hbm_bytes=8e10)
    inline = hw.forecast_band("serving", dense, custom)
    assert inline.mean is None and inline.closest is None and "chip given inline" in inline.text


def test_a_kind_of_fewer_than_five_runs_prints_no_band(monkeypatch):
    moe = ("serving", "MoE", "GPU", "")
    few = [dataclasses.replace(r, runs=4) if r.kind == moe else r for r in calibrated.FORECAST_ERRORS]
    monkeypatch.setattr(calibrated, "FORECAST_ERRORS", tuple(few))
    band = hw.forecast_band("serving", hw.model("mixtral-8x7b"), hw.chip("h100-sxm"))
    assert FEWEST_BAND_RUNS == 5 and band.mean is None and band.runs == 0
    assert band.text.startswith("error unknown: only 4 GPU MoE serving runs in the fit (a band takes 5)")
    assert band.closest is not None and band.closest.model == "dense"


@pytest.mark.parametrize(
    ("arguments", "error", "match"),
    [
        (
            ("train", "llama-3-8b", "h100-sxm"),
            ValueError,
            r"domain must be one of \('training', 'serving'\), got 'train'",
        ),
        (("serving", "llama-3-8b", "h100-sxm"), TypeError, r"model must be a ModelShape record"),
        (("serving", hw.model("llama-3-8b"), "h100-sxm"), TypeError, r"chip must be a Chip record"),
    ],
)
def test_a_forecast_band_refuses_bad_inputs_by_name(arguments, error, match):
    with pytest.raises(error, match=match):
        hw.forecast_band(*arguments)


def test_a_training_band_is_the_one_of_its_steps_micro_batches():
    llama, h100 = hw.model("llama-3-8b"), hw.chip("h100-sxm")
    many, one = (hw.forecast_band("training", llama, h100, n) for n in (16, 1))
    assert many == hw.forecast_band("training", llama, h100) and many.micro_batches == "many"
    assert one.micro_batches == "one" and one.runs >= 5 and one.mean != many.mean
    assert "GPU dense training runs of one micro-batch from" in one.text
    tpu_many = hw.forecast_band("training", llama, hw.chip("v5p"), 8)
    assert tpu_many.mean is None and tpu_many.closest.micro_batches == "one"  # the TPU runs are of one micro-batch
    assert "no TPU dense training runs of many micro-batches in the fit" in tpu_many.text
    with pytest.raises(ValueError, match="micro_batches applies to training bands only"):
        hw.forecast_band("serving", llama, h100, 4)
    with pytest.raises(ValueError, match="micro_batches must be"):
        hw.forecast_band("training", llama, h100, 0)
