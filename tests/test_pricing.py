"""The one pricer (``hwlib.pricing``): serving, the simulator and training price the same work alike, every forecast
is its bound at peak, and each term of the forecast does what it says."""

from __future__ import annotations

import numpy as np
import pytest

import hwlib as hw
from hwlib.data import efficiencies
from hwlib.efficiency import (
    collective_efficiency,
    fuses_elementwise,
    hides_collectives,
    matmul_fraction,
    small_allreduce_s,
)
from hwlib.placement import scope_of
from hwlib.pricing import BACKWARD_SHARE, Collective, Part, Work, hidden_s, price, windows
from hwlib.serving.engine import Priced
from hwlib.serving.pricing import StepPricer
from hwlib.training.plan import training_run_forecast

AT_PEAK = hw.Efficiency.at_peak()
H100, NODE, V5P = hw.chip("h100-sxm"), hw.cluster("hgx-h100-ndr"), hw.cluster("tpu-v5p")
LLAMA8, LLAMA70, MIXTRAL = hw.model("llama-3-8b"), hw.model("llama-3-70b"), hw.model("mixtral-8x7b")


def priced(model, chip, topology, n_chips, efficiency=None, estimate="forecast", **options):
    precision = hw.Precision(**options)
    settings = {"expert_parallel": False, "efficiency": efficiency, "estimate": estimate}
    return Priced(model, chip, topology, n_chips, precision, settings, 4096)


@pytest.mark.parametrize(
    "model, where, n_chips, options",
    [
        (LLAMA8, H100, 1, {}),
        (LLAMA70, NODE, 8, {"weight_dtype": "fp8", "kv_dtype": "fp8", "compute_dtype": "fp8"}),
        (LLAMA70, NODE, 16, {}),  # a tensor-parallel group across two nodes' NICs
        (LLAMA70, hw.cluster("tpu-v5e"), 8, {"weight_dtype": "int8"}),
        (hw.model("gemma-2-9b"), H100, 1, {}),  # sliding windows: no closed form
        (MIXTRAL, NODE, 8, {}),
    ],
    ids=["8b-h100", "70b-fp8-tp8", "70b-tp16-nics", "70b-v5e", "gemma2-windows", "mixtral"],
)
@pytest.mark.parametrize("estimate", ["forecast", "bound"])
def test_the_simulator_prices_a_step_as_inference_step_does(model, where, n_chips, options, estimate):
    chip, topology = hw.placement.serving_place(where, model, n_chips)
    engine = priced(model, chip, topology, n_chips, estimate=estimate, **options)
    for batch, context, new in ((1, 0, 512), (4, 0, 700), (64, 3000, 1), (256, 100, 1), (7, 20000, 1)):
        step = hw.inference_step(model, where, batch, context, new, n_chips, **options)
        expected = step.forecast_time_s if estimate == "forecast" else step.time_s
        seconds = engine.step_s(batch * new, batch, np.full(batch, float(new)), np.full(batch, float(context)))
        assert float(seconds) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("efficiency", [None, AT_PEAK], ids=["forecast", "at-peak"])
def test_a_decode_stretch_priced_as_a_line_is_its_steps(efficiency):
    engine = priced(LLAMA8, H100, None, 1, efficiency=efficiency)
    context = np.array([100.0, 2000.0, 7000.0, 30.0] * 40)
    first, growth, straight = engine.decode_line(context)
    steps = int(min(straight, 500))
    expected = engine.decode_s(context, steps)
    np.testing.assert_allclose(first + growth * np.arange(steps), expected, rtol=1e-12)


def test_an_overlapping_decode_line_ends_where_the_other_roofline_term_takes_over():
    at_peak = priced(LLAMA8, H100, None, 1, efficiency=AT_PEAK)
    context = np.full(400, 10.0)  # at a short context compute leads; each step's cache reads catch up
    first, growth, straight = at_peak.decode_line(context)
    assert np.isfinite(straight) and straight >= 1
    steps = at_peak.decode_s(context, int(straight) + 200)
    np.testing.assert_allclose(first + growth * np.arange(straight), steps[: int(straight)], rtol=1e-12)
    assert not np.allclose(first + growth * np.arange(steps.size), steps)


def test_at_peak_every_forecast_is_its_bound():
    batch, context = np.array([1, 16, 256]), np.array([[128], [8192]])
    for model, where, n_chips, options in (
        (LLAMA70, H100, 8, {"weight_dtype": "fp8", "kv_dtype": "fp8", "compute_dtype": "fp8"}),
        (LLAMA70, NODE, 16, {}),
        (LLAMA70, V5P, 8, {}),
        (MIXTRAL, NODE, 8, {"expert_parallel": True}),
        (LLAMA8, H100, 1, {"speculation": hw.Speculation(3, 0.7, draft=hw.model("qwen2.5-1.5b"))}),
    ):
        step = hw.inference_step(model, where, batch, context, 1, n_chips, efficiency=AT_PEAK, **options)
        np.testing.assert_allclose(step.forecast_time_s, step.time_s, rtol=1e-12)
    for model, cluster, mesh in (
        (LLAMA70, NODE, hw.Mesh(fsdp=16, tp=8, pp=2)),
        (LLAMA70, NODE, hw.Mesh(dp=4, tp=8, pp=4, cp=2)),
        (MIXTRAL, NODE, hw.Mesh(dp=2, fsdp=4, tp=2, ep=4)),
        (LLAMA8, V5P, hw.Mesh(fsdp=32, tp=4)),
    ):
        step = hw.train_step(model, cluster, mesh, 2**22, 8192, efficiency=AT_PEAK)
        assert step.forecast_time_s == pytest.approx(step.time_s, rel=1e-12)
        assert step.time_upper_s >= step.time_s
    options = dict(n_requests=200, arrival_rate_per_s=20, prompt_len=512, output_len=64, seed=3)
    forecast = hw.simulate_serving(LLAMA8, H100, efficiency=AT_PEAK, **options)
    bound = hw.simulate_serving(LLAMA8, H100, estimate="bound", **options)
    np.testing.assert_allclose(forecast.finish_s, bound.finish_s, rtol=1e-9)


def test_training_and_serving_price_the_same_work_alike():
    """One step's work handed to the pricer directly, and by each caller: the same seconds."""
    step = hw.inference_step(LLAMA70, NODE, 32, 4096, 1, 8)
    pricer = StepPricer(LLAMA70, H100, hw.group_topology(NODE, 8, 1, 8), 8, hw.Precision())
    attention = 32 * LLAMA70.table().attention_flops(1, 4096), 32 * LLAMA70.table().kv_bytes(4097)
    direct = price(pricer.work(32.0, 32.0, *attention), H100, "bf16")
    assert (step.time_s, step.time_upper_s, step.forecast_time_s) == pytest.approx(
        (direct.bound_s, direct.no_overlap_s, direct.forecast_s), rel=1e-12
    )
    # a training step's tensor-parallel all-reduce and a serving step's, of the same bytes on the same group, cost
    # the same at the bound and at the forecast
    group = hw.group_topology(NODE, 8, 1, 64)
    tp = Collective("tp all-reduce", "all-reduce", 8192 * LLAMA70.d_model * 2, group, 160)
    work = Work({"matmuls": Part(1e15, 0.0)}, (tp,))
    serving_like = Work({"weights": Part(1e15, 0.0)}, (tp,), layers=0, sequences=0)
    a, b = price(work, H100, "bf16"), price(serving_like, H100, "bf16")
    assert (a.bound_s, a.forecast_s) == pytest.approx((b.bound_s, b.forecast_s), rel=1e-12)


def test_a_group_knows_where_it_runs_and_its_collectives_the_efficiency_there():
    inside, across, mixed = (hw.group_topology(NODE, 8, s, 64) for s in (1, 8, 4))
    assert (inside.where, across.where, mixed.where) == ("node", "network", "hierarchy")
    assert [scope_of(t) for t in (inside, across, mixed)] == ["node", "network", "network"]
    torus = hw.group_topology(V5P, 4, 1, 128)
    assert torus.where == "torus" and scope_of(torus) == "node"
    assert scope_of(hw.switch(8, 450e9)) == "node" and scope_of(hw.hierarchy(hw.switch(8, 1e9), hw.switch(2, 1e9)))
    # serving across two nodes prices its all-reduces at the network's achieved share, not the node's
    one = Collective("tp", "all-reduce", 2**26, mixed, 1)
    alone = Work({"weights": Part(0.0, 0.0)}, (one,))
    bound = price(alone, H100, "bf16", AT_PEAK).bound_s
    forecast = price(alone, H100, "bf16", hw.Efficiency(small_allreduce_s=0.0)).forecast_s
    assert forecast == pytest.approx(bound / collective_efficiency("network"), rel=1e-12)
    assert collective_efficiency("network") != collective_efficiency("node")


def test_training_collectives_take_the_smallest_all_reduce_as_their_floor():
    tiny = Collective("tp all-reduce", "all-reduce", 64.0, hw.group_topology(NODE, 8, 1, 8), 1000)
    work = Work({"matmuls": Part(0.0, 0.0)}, (tiny,), unmodelled=True)
    floored = price(work, H100, "bf16", hw.Efficiency(unmodelled_share=0.0, small_allreduce_s=1e-3))
    assert floored.forecast_s == pytest.approx(1000 * 1e-3, rel=1e-12)
    measured = hw.Efficiency(unmodelled_share=0.0, small_allreduce_s=float(small_allreduce_s(8)))
    default = price(work, H100, "bf16", hw.Efficiency(unmodelled_share=0.0))
    assert default.forecast_s == pytest.approx(price(work, H100, "bf16", measured).forecast_s, rel=1e-12)
    assert default.forecast_s >= 1000 * float(small_allreduce_s(8))
    send = Collective("pp send/recv", "send", 64.0, hw.group_topology(NODE, 2, 8, 16), 10)
    floorless = price(Work({}, (send,)), H100, "bf16", hw.Efficiency(collective=1.0))
    assert floorless.forecast_s == pytest.approx(floorless.bound_s) and floorless.bound_s < 10 * 1e-5


def test_the_overlap_rule_shares_windows_and_the_compute():
    backward, compute = BACKWARD_SHARE * 3.0, 3.0
    assert hidden_s([(5.0, "backward")], windows(3.0, 0.5)) == [pytest.approx(backward)]
    # two collectives behind the attention share its window; behind the compute they take turns
    assert hidden_s([(0.4, "attention"), (0.4, "attention")], windows(3.0, 0.5)) == pytest.approx([0.4, 0.1])
    assert hidden_s([(2.5, "backward"), (2.5, "compute")], windows(compute, 0.0)) == pytest.approx([2.0, 1.0])
    assert hidden_s([(1.0, None)], windows(compute, 0.0)) == [0.0]


def test_gradients_accumulated_over_micro_batches_hide_behind_the_last_ones_backward_only():
    compute, micro_batches = 3.0, 4
    last = BACKWARD_SHARE * compute / micro_batches
    assert windows(compute, 0.5, micro_batches)["last backward"] == pytest.approx(last)
    assert hidden_s([(5.0, "last backward")], windows(compute, 0.5, micro_batches)) == [pytest.approx(last)]
    # the last micro-batch's backward is part of the backward pass: what hides behind one leaves the other
    both = hidden_s([(0.4, "last backward"), (5.0, "backward")], windows(compute, 0.0, micro_batches))
    assert both == pytest.approx([0.4, BACKWARD_SHARE * compute - 0.4])
    backward_first = hidden_s([(1.9, "backward"), (1.0, "last backward")], windows(compute, 0.0, micro_batches))
    assert backward_first == pytest.approx([1.9, BACKWARD_SHARE * compute - 1.9])
    assert hidden_s([(5.0, "last backward")], windows(compute, 0.0)) == [pytest.approx(BACKWARD_SHARE * compute)]


def test_a_collective_hides_at_the_bound_where_the_best_implementation_hides_it():
    group = hw.group_topology(NODE, 16, 1, 16)
    spread = Collective("ep all-to-all", "all-to-all", 1e9, group, 10, None, "compute")
    work = Work({"matmuls": Part(1e15, 0.0)}, collectives=(spread,))
    usual = price(work, H100, "bf16")
    whole = float(usual.comm_s["ep all-to-all"])
    assert float(usual.exposed_s["ep all-to-all"]) == pytest.approx(max(whole - float(usual.compute_s), 0.0))
    assert float(usual.forecast_exposed_s["ep all-to-all"]) > float(usual.exposed_s["ep all-to-all"])
    best = price(work, H100, "bf16", hw.Efficiency(best_overlap=True))
    assert float(best.forecast_exposed_s["ep all-to-all"]) < float(usual.forecast_exposed_s["ep all-to-all"])
    assert Collective("x", "all-reduce", 1.0, None, 1, "backward").bound_overlaps == "backward"
    with pytest.raises(ValueError, match="Collective.overlaps_at_bound must be one of"):
        Collective("x", "all-reduce", 1.0, None, 1, None, "later")
    with pytest.raises(TypeError, match="Collective.calls must be a real number"):
        Collective("x", "all-reduce", 1.0, None, "backward")
    with pytest.raises(ValueError, match="Collective.calls must be >= 0"):
        Collective("x", "all-reduce", 1.0, None, -1)
    with pytest.raises(ValueError, match="Collective.n_bytes must not be NaN"):
        Collective("x", "all-reduce", float("nan"), None)


def test_each_forecast_term_adds_what_it_says():
    matmul = Part(1e14, 1e9, "matmul", 0.5)
    attention = Part(2e13, 3e10, "attention")
    work = Work({"matmuls": matmul, "attention": attention}, elementwise_bytes=1e10, layers=10, sequences=4)
    peak, bandwidth = H100.peak("bf16"), H100.hbm_bytes_per_s
    at_peak = price(work, H100, "bf16", AT_PEAK)
    assert at_peak.forecast_s == pytest.approx(max(1.2e14 / peak, 3.1e10 / bandwidth))
    assert at_peak.bound_s == pytest.approx(at_peak.forecast_s)
    assert at_peak.no_overlap_s == pytest.approx(1e14 / peak + max(2e13 / peak, 3e10 / bandwidth))
    knobs = dict(
        matmul=0.5, attention=0.25, hbm=0.5, elementwise_passes=2.0, layer_overhead_s=1e-3, sequence_overhead_s=1e-2
    )
    forecast = price(work, H100, "bf16", hw.Efficiency(**{**AT_PEAK.__dict__, **knobs, "parts_overlap": False}))
    expected = (
        max(1e14 / (peak * 0.5), 1e9 / (bandwidth * 0.5))
        + max(2e13 / (peak * 0.25), 3e10 / (bandwidth * 0.5))
        + 2.0 * 1e10 / (bandwidth * 0.5)
        + 10 * 1e-3
        + 4 * 1e-2
    )
    assert forecast.forecast_s == pytest.approx(expected, rel=1e-12)
    quantized = price(work, H100, "bf16", hw.Efficiency(**{**forecast_knobs(knobs), "quantization": True}))
    assert quantized.forecast_parts_s["matmuls"] == pytest.approx(1e14 / (peak * 0.5 * 0.5))
    assert sum(forecast.forecast_parts_s.values()) == pytest.approx(forecast.forecast_s)
    unmodelled = price(
        Work(work.parts, unmodelled=True), H100, "bf16", hw.Efficiency(**{**AT_PEAK.__dict__, "unmodelled_share": 0.2})
    )
    assert unmodelled.forecast_s == pytest.approx(at_peak.forecast_s / 0.8)


def forecast_knobs(knobs: dict) -> dict:
    return {**AT_PEAK.__dict__, **knobs, "parts_overlap": False}


def test_precision_is_one_record_of_four_dtypes():
    fp8 = hw.PRECISIONS["fp8"]
    assert isinstance(fp8, hw.Precision) and dict(fp8) == {
        "weight_dtype": "fp8",
        "kv_dtype": "fp8",
        "activation_dtype": "fp8",
        "compute_dtype": "fp8",
    }
    by_name = hw.inference_step(LLAMA70, NODE, 16, 2048, 1, 8, precision="fp8")
    by_keywords = hw.inference_step(LLAMA70, NODE, 16, 2048, 1, 8, **fp8)
    assert by_name.forecast_time_s == by_keywords.forecast_time_s and by_name.time_s == by_keywords.time_s
    with pytest.raises(ValueError, match="Precision.kv_dtype must be one of"):
        hw.Precision(kv_dtype="fp7")
    with pytest.raises(ValueError, match="precision must be one of"):
        hw.inference_step(LLAMA8, H100, 1, 1, precision="fp9")
    with pytest.raises(TypeError, match="precision must be an hw.Precision"):
        hw.inference_step(LLAMA8, H100, 1, 1, precision=8)


def test_xla_fuses_the_elementwise_work_into_the_matmuls_on_tpus():
    """On a TPU no elementwise pass is priced (XLA fuses them; the JAX Pallas guide measures a fused activation
    costing a v5e matmul nothing); on a GPU the fitted passes cost their bytes at the achieved bandwidth."""
    v5e, h100 = hw.cluster("tpu-v5e"), hw.cluster("hgx-h100-ndr")
    assert fuses_elementwise(v5e.chip) and not fuses_elementwise(h100.chip)
    llama, mesh = hw.model("llama-3-8b"), hw.Mesh(fsdp=16)
    tpu = hw.train_step(llama, v5e, mesh, 64 * 2048, 2048, 2048, "full")
    gpu = hw.train_step(llama, h100, mesh, 64 * 2048, 2048, 2048, "full")
    none = hw.Efficiency(elementwise_passes=0.0)  # what is left is the optimizer's update
    assert tpu.forecast_parts_s["elementwise"] == pytest.approx(
        hw.train_step(llama, v5e, mesh, 64 * 2048, 2048, 2048, "full", efficiency=none).forecast_parts_s["elementwise"]
    )
    more = hw.Efficiency(elementwise_passes=6.0)
    assert hw.train_step(llama, v5e, mesh, 64 * 2048, 2048, 2048, "full", efficiency=more).forecast_time_s == (
        tpu.forecast_time_s
    )
    assert hw.train_step(llama, h100, mesh, 64 * 2048, 2048, 2048, "full", efficiency=more).forecast_time_s > (
        gpu.forecast_time_s
    )


def test_v5e_matmuls_run_at_the_jax_guides_measured_share():
    """XLA's bf16 8192^3 matmul on one v5e: 92.2960 % of 197 TFLOP/s; v4 and v5p (MXUs of 128 x 128) take it, v6e
    (256 x 256, as TPU7x) takes TPU7x's microbenchmark."""
    v5e = efficiencies.BY_CHIP["v5e"].matmul["bf16"]
    assert v5e.value == 0.922960 and "92.2960%" in v5e.quoted
    for key in ("v4", "v5p"):
        assert efficiencies.BY_CHIP[key].matmul["bf16"].value == v5e.value
    assert efficiencies.BY_CHIP["v6e"].matmul["bf16"].value == efficiencies.BY_CHIP["tpu7x"].matmul["bf16"].value
    assert matmul_fraction(hw.chip("v5e"), "bf16") == pytest.approx(v5e.value)


def test_the_usual_software_hides_collectives_on_tpus_and_not_on_gpus():
    """XLA (MaxText's LIBTPU_INIT_ARGS) overlaps the collectives the bound hides; Megatron leaves tensor-parallel
    all-reduces exposed. An Efficiency's best_overlap overrides the chip's usual software either way."""
    v5e, h100 = hw.cluster("tpu-v5e"), hw.cluster("hgx-h100-ndr")
    assert hides_collectives(v5e.chip) and not hides_collectives(h100.chip)
    assert not hides_collectives(v5e.chip, hw.Efficiency(best_overlap=False))
    assert hides_collectives(h100.chip, hw.Efficiency(best_overlap=True))
    llama, mesh, best = hw.model("llama-3-8b"), hw.Mesh(fsdp=16, tp=16), hw.Efficiency(best_overlap=True)
    for cluster, hidden in ((v5e, True), (h100, False)):
        usual = hw.train_step(llama, cluster, mesh, 256 * 2048, 2048, 2048, "full")
        hiding = hw.train_step(llama, cluster, mesh, 256 * 2048, 2048, 2048, "full", efficiency=best)
        same = float(usual.forecast_time_s) == pytest.approx(float(hiding.forecast_time_s), rel=1e-12)
        assert same is hidden and float(usual.forecast_time_s) >= float(hiding.forecast_time_s), cluster.key


def test_at_peak_is_every_term_at_its_ideal():
    peak = hw.Efficiency.at_peak()
    assert (peak.matmul, peak.attention, peak.hbm, peak.collective) == (1.0, 1.0, 1.0, 1.0)
    assert (peak.small_allreduce_s, peak.elementwise_passes, peak.unmodelled_share, peak.overlap_slowdown) == (0,) * 4
    assert (peak.layer_overhead_s, peak.sequence_overhead_s) == (0.0, 0.0)
    assert peak.quantization is False and peak.parts_overlap is True and peak.attention_dtype == "matmul"
    assert peak.best_overlap is True and hw.Efficiency().best_overlap is None
    with pytest.raises(ValueError, match="Efficiency.attention_dtype must be"):
        hw.Efficiency(attention_dtype="fp7")
    with pytest.raises(TypeError, match="Efficiency.parts_overlap must be True or False"):
        hw.Efficiency(parts_overlap=1)


def test_the_simulator_takes_a_precision_whole():
    options = dict(n_requests=50, arrival_rate_per_s=10, prompt_len=256, output_len=32, seed=1)
    by_name = hw.simulate_serving(LLAMA8, H100, precision="fp8", **options)
    by_keywords = hw.simulate_serving(LLAMA8, H100, **hw.PRECISIONS["fp8"], **options)
    np.testing.assert_array_equal(by_name.finish_s, by_keywords.finish_s)
    with pytest.raises(ValueError, match="precision must be one of"):
        hw.simulate_serving(LLAMA8, H100, precision="fp9", **options)


def test_bad_work_is_refused_by_name():
    with pytest.raises(ValueError, match="Part.kind must be one of"):
        Part(1.0, 1.0, "scores")
    with pytest.raises(ValueError, match="Collective.kind must be one of"):
        Collective("tp", "broadcast", 1.0, None)
    with pytest.raises(ValueError, match="Collective.overlaps must be one of"):
        Collective("tp", "all-reduce", 1.0, None, overlaps="forward")
    with pytest.raises(TypeError, match="work must be an hwlib.pricing.Work"):
        price({"weights": Part()}, H100, "bf16")
    with pytest.raises(TypeError, match="efficiency must be an hw.Efficiency"):
        price(Work({}), H100, "bf16", efficiency={"matmul": 0.5})


@pytest.mark.parametrize("run", [r for r in hw.training_runs() if r.key.startswith(("llama3-405b", "maxtext", "nemo"))])
def test_a_forecast_waterfall_adds_up_from_its_bound_to_its_forecast(run):
    seconds = hw.viz.forecast_waterfall(run)["seconds"]
    terms = seconds.drop(["bound", "forecast", "left unexplained", "measured"])
    assert seconds["bound"] + terms.sum() == pytest.approx(seconds["forecast"], rel=1e-9)


def test_a_parallel_block_reduces_once_a_layer_where_megatrons_layer_reduces_twice():
    import dataclasses

    palm = hw.model("palm-540b")
    serial = dataclasses.replace(palm, parallel_block=False)
    assert palm.parallel_block and (palm.table().tp_allreduces_per_layer, serial.table().tp_allreduces_per_layer) == (
        1,
        2,
    )
    v4 = hw.cluster("tpu-v4")
    mesh = hw.Mesh(fsdp=64, tp=8)
    one, two = (hw.train_step(m, v4, mesh, 512 * 2048, 2048, 2048) for m in (palm, serial))
    assert one.comm_time_s["tp all-reduce"] == pytest.approx(two.comm_time_s["tp all-reduce"] / 2, rel=1e-12)
    once, twice = (hw.inference_step(m, v4, 64, 2048, 1, 8) for m in (palm, serial))
    assert once.comm_time_s == pytest.approx(twice.comm_time_s / 2, rel=1e-12)


def test_every_forecast_that_misses_by_more_than_fifteen_percent_names_its_largest_term():
    runs = hw.training_runs()
    misses = hw.viz.forecast_misses(runs)
    errors = {
        run.key: 100 * (float(training_run_forecast(run)) - run.measured.value) / run.measured.value for run in runs
    }
    assert set(misses.index) == {key for key, error in errors.items() if abs(error) > 15}
    for key, row in misses.iterrows():
        seconds = hw.viz.forecast_waterfall(next(run for run in runs if run.key == key))["seconds"]
        terms = seconds.drop(["bound", "forecast", "left unexplained", "measured"])
        assert row["largest term"] == terms.abs().idxmax() and row["its seconds"] == terms[terms.abs().idxmax()]
        assert row["forecast error (%)"] == pytest.approx(errors[key])
        assert row["left unexplained (s)"] == pytest.approx(seconds["left unexplained"])
    within = [run for run in runs if abs(errors[run.key]) <= 15][:3]
    assert hw.viz.forecast_misses(within).empty


def test_the_forecasts_bubble_does_not_stretch_a_part_run_once_a_step():
    bubble = 0.5
    parts = {"matmuls": Part(1e15, 0.0), "update": Part(0.0, 1e11, per_step=True)}
    priced = price(Work(parts, bubble_share=bubble), H100, "bf16")
    alone = price(Work({"matmuls": parts["matmuls"]}, bubble_share=bubble), H100, "bf16")
    assert priced.forecast_parts_s["pipeline bubble"] == pytest.approx(alone.forecast_parts_s["pipeline bubble"])
    assert priced.forecast_parts_s["update"] > 0
    with pytest.raises(TypeError, match="Part.per_step must be True or False"):
        Part(0.0, 1.0, per_step="yes")
