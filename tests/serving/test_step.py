"""Serving: hw.inference_step and what is built on it (first-token and per-token times, the compute-bound batch,
the fewest chips, the throughput bound), and every published measured run under its bound."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hwlib as hw
from hwlib.serving.throughput import max_mean_prompt

LLAMA70 = hw.model("llama-3-70b")
H100 = hw.chip("H100-SXM")


def test_decode_at_batch_one_is_the_weights_and_cache_over_bandwidth():
    step = hw.inference_step(LLAMA70, H100, 1, 2048)
    weights = LLAMA70.matmul_params(active=False) * 2
    cache = 2048 * LLAMA70.kv_bytes_per_token("bf16") + LLAMA70.kv_bytes_per_token("bf16")
    assert step.part_bytes["weights"] == weights and step.part_bytes["attention"] == cache
    assert step.bound == "memory" and step.comm_time_s == 0
    assert step.time_s == pytest.approx(step.bytes / H100.hbm_bytes_per_s)
    assert step.time_s <= step.time_upper_s


def test_the_bound_turns_to_compute_at_large_batch_and_for_prefill():
    batches = 2 ** np.arange(0, 13)
    step = hw.inference_step(hw.model("llama-3-8b"), H100, batches, 128)
    assert step.bound[0] == "memory" and step.bound[-1] == "compute"
    turn = batches[np.argmax(step.bound == "compute")]
    assert 100 < turn < 2000  # near the ridge point in tokens per weight read (about 295 for bf16)
    prefill = hw.inference_step(LLAMA70, H100, 1, 0, new_tokens=4096)
    assert prefill.bound == "compute"
    assert prefill.part_flops["weights"] == 2 * LLAMA70.matmul_params() * 4096


def test_tensor_parallelism_splits_the_work_and_adds_all_reduces():
    """The bound hides the all-reduces behind the step's weight reads, as engines that overlap or fuse them do: the
    slower of the two sets it; the no-overlap bound and the forecast add them."""
    one, eight = hw.inference_step(LLAMA70, H100, 16, 2048), hw.inference_step(LLAMA70, H100, 16, 2048, n_chips=8)
    assert eight.flops == one.flops and eight.bytes == one.bytes
    assert eight.comm_time_s > 0
    assert eight.time_s == pytest.approx(max(one.time_s / 8, eight.comm_time_s))
    assert eight.time_upper_s >= one.time_upper_s / 8 + eight.comm_time_s * (1 - 1e-12)
    # 2 ring all-reduces per layer of 16 tokens x d bf16 over NVLink 4 (450 GB/s per direction), each ring
    # of 8 taking 2 x 7 steps of NCCL's 0.6 us NVLink latency
    message = 16 * 8192 * 2
    assert eight.comm_time_s == pytest.approx(2 * 80 * (2 * message * 7 / 8 / 450e9 + 14 * 0.6e-6))
    no_latency = hw.inference_step(LLAMA70, H100, 16, 2048, n_chips=8, link_latency_s=0)
    assert no_latency.comm_time_s == pytest.approx(2 * 80 * 2 * message * 7 / 8 / 450e9)


def test_precisions_and_experts():
    bf16, fp8 = (hw.inference_step(LLAMA70, H100, 1, 2048, weight_dtype=d) for d in ("bf16", "fp8"))
    assert fp8.part_bytes["weights"] == bf16.part_bytes["weights"] / 2
    int8_kv = hw.inference_step(LLAMA70, H100, 8, 8192, kv_dtype="int8")
    assert int8_kv.part_bytes["attention"] < hw.inference_step(LLAMA70, H100, 8, 8192).part_bytes["attention"]
    mixtral = hw.model("mixtral-8x7b")
    one = hw.inference_step(mixtral, H100, 1, 0, new_tokens=1)
    many = hw.inference_step(mixtral, H100, 1, 0, new_tokens=4096)
    all_weights = mixtral.matmul_params(active=False) * 2
    assert one.part_bytes["weights"] < 0.4 * all_weights  # one token touches 2 of 8 experts
    assert many.part_bytes["weights"] == pytest.approx(all_weights)  # a long prompt touches all of them


def test_max_batch_and_the_serving_curve():
    largest = hw.max_batch(LLAMA70, H100, 4096, n_chips=8)
    room = 8 * 0.8 * H100.capacity_bytes - LLAMA70.weight_bytes("bf16")
    assert largest == int(room // (4096 * LLAMA70.kv_bytes_per_token("bf16")))
    assert hw.max_batch(LLAMA70, H100, 4096) == 0  # 141 GB of weights on one 80 GB chip
    curve = hw.serving_curve(LLAMA70, H100, 4096, [1, 8, 64, largest, largest + 1], n_chips=8)
    assert list(curve.fits) == [True, True, True, True, False]
    assert np.all(np.diff(curve.time_per_token_s) > 0) and np.all(np.diff(curve.tokens_per_s) > 0)
    ds = hw.model("deepseek-v3")  # a latent cache is copied on every chip unless split by sequence
    heads = hw.max_batch(ds, H100, 8192, n_chips=16, weight_dtype="fp8", kv_dtype="fp8")
    batch = hw.max_batch(ds, H100, 8192, n_chips=16, weight_dtype="fp8", kv_dtype="fp8", kv_layout="batch")
    assert heads == batch // 16 and heads > 0


def test_bad_input():
    with pytest.raises(TypeError, match="model must be a ModelShape"):
        hw.inference_step("llama", H100, 1, 1)
    with pytest.raises(ValueError, match="kv_dtype must be one of"):
        hw.inference_step(LLAMA70, H100, 1, 1, kv_dtype="fp64")
    with pytest.raises(ValueError, match="batch must be > 0"):
        hw.inference_step(LLAMA70, H100, 0, 1)
    with pytest.raises(KeyError, match="has no sourced peak"):
        hw.inference_step(LLAMA70, hw.chip("v5p"), 1, 1, compute_dtype="fp4")
    with pytest.raises(TypeError, match="n_chips must be one whole number"):
        hw.inference_step(LLAMA70, H100, 1, 1, n_chips=[1, 2])
    lone = hw.custom_chip("lone", peak_flops_per_s={"bf16": 1e15}, hbm_bytes_per_s=3e12, hbm_bytes=192e9)
    with pytest.raises(ValueError, match="has no cluster record and no interconnect"):
        hw.inference_step(LLAMA70, lone, 1, 1, n_chips=4)
    with pytest.raises(ValueError, match="n_chips=3 does not divide the 64 attention heads"):
        hw.inference_step(LLAMA70, H100, 1, 1, n_chips=3)


def test_first_token_and_per_token_times_are_the_prefill_and_decode_steps():
    prefill = hw.inference_step(LLAMA70, H100, 4, 0, new_tokens=2048, n_chips=8)
    assert hw.time_to_first_token_s(LLAMA70, H100, 2048, 4, 8) == prefill.time_s
    assert hw.time_to_first_token_s(LLAMA70, H100, 2048, 4, 8, upper=True) == prefill.time_upper_s
    decode = hw.inference_step(LLAMA70, H100, np.array([1, 64]), 4096, n_chips=8, kv_dtype="fp8")
    np.testing.assert_array_equal(
        hw.time_per_output_token_s(LLAMA70, H100, 4096, [1, 64], 8, kv_dtype="fp8"), decode.time_s
    )
    assert prefill.bound == "compute" and decode.bound[0] == "memory"


def test_compute_bound_batch_is_the_first_batch_whose_flops_outlast_its_bytes():
    llama8 = hw.model("llama-3-8b")
    contexts = np.array([0, 128, 2048, 32768])
    turn = hw.compute_bound_batch(llama8, H100, contexts)
    finite = np.isfinite(turn)
    assert finite[:2].all() and not finite[2:].any()  # a long cache's attention never reaches the ridge point
    for context, batch in zip(contexts[finite], turn[finite]):
        at, below = (hw.inference_step(llama8, H100, b, context) for b in (batch, batch - 1))
        assert at.compute_time_s >= at.memory_time_s and below.compute_time_s < below.memory_time_s
    # an int8 weight and cache halve the bytes: the turn comes at about half the batch, on int8 compute twice as far
    assert hw.compute_bound_batch(llama8, H100, 0, weight_dtype="int8", kv_dtype="int8") < turn[0] * 0.6
    assert hw.compute_bound_batch(hw.model("mixtral-8x7b"), H100, 128) > turn[0]  # sparse experts: more tokens


def test_kv_heads_are_replicated_beyond_n_kv_heads_chips():
    assert [hw.kv_copies(LLAMA70, n) for n in (1, 2, 8, 16, 64)] == [1, 1, 1, 2, 8]
    v5e = hw.chip("v5e")
    sixteen = hw.inference_step(LLAMA70, v5e, 8, 4096, n_chips=16)
    assert sixteen.part_bytes["attention"] == 8 * 4097 * LLAMA70.kv_bytes_per_token() * 2
    # from 8 to 16 chips the HBM doubles but so does each token's cache: the batch grows by less than twice
    sizes = [hw.max_batch(LLAMA70, v5e, 4096, n) for n in (16, 32)]
    room = [n * 0.8 * v5e.capacity_bytes - LLAMA70.weight_bytes() for n in (16, 32)]
    assert sizes == [int(r // (4096 * LLAMA70.kv_bytes_per_token() * c)) for r, c in zip(room, (2, 4))]


def test_serving_chips_finds_the_fewest_that_hold_and_meet_the_target():
    plan = hw.serving_chips(LLAMA70, H100, 4096, batch=[1, 32, 256], tpot_target_s=0.05, by="bound")
    assert list(plan.n_chips) == [4, 4, 8]  # 141 GB of bf16 weights overflow 80 % of two 80 GB GPUs
    assert list(plan.deployment) == ["4 of 8 GPUs in one node"] * 2 + ["1 × 8-GPU node"]
    assert np.all(plan.batch >= [1, 32, 256]) and np.all(plan.time_per_token_s <= 0.05)
    np.testing.assert_array_equal(plan.batch, plan.max_batch)  # at 50 ms per token memory, not time, limits
    np.testing.assert_allclose(plan.tokens_per_s, plan.batch / plan.time_per_token_s)
    tight = hw.serving_chips(LLAMA70, H100, 4096, batch=32, tpot_target_s=1e-3, by="bound")
    assert tight.n_chips == 0 and tight.deployment == "none" and tight.time_per_token_s == np.inf
    assert tight.tokens_per_s == 0
    v5e = hw.chip("v5e")
    slow = hw.serving_chips(LLAMA70, v5e, 2048, 16, prompt_len=2048, ttft_target_s=0.15, by="bound")
    assert hw.time_to_first_token_s(LLAMA70, v5e, 2048, 1, 8) > 0.15 >= slow.time_to_first_token_s
    assert slow.n_chips == 16 and isinstance(slow.n_chips, int) and slow.deployment == "v5litepod-16 (4x4)"
    assert hw.tensor_parallel_sizes(LLAMA70, H100) == (1, 2, 4, 8)


def test_serving_chips_holds_the_forecast_to_the_targets_and_shows_the_bound_beside_it():
    plan = hw.serving_chips(LLAMA70, H100, 4096, batch=[1, 32], tpot_target_s=0.05, prompt_len=2048, ttft_target_s=2)
    bound = hw.serving_chips(
        LLAMA70, H100, 4096, batch=[1, 32], tpot_target_s=0.05, prompt_len=2048, ttft_target_s=2, by="bound"
    )
    assert plan.by == "forecast" and bound.by == "bound"
    assert np.all(plan.forecast_time_per_token_s <= 0.05) and np.all(plan.forecast_time_to_first_token_s <= 2)
    assert np.all(plan.time_per_token_s <= plan.forecast_time_per_token_s)
    assert np.all(plan.n_chips >= bound.n_chips)
    assert np.all(plan.batch <= bound.max_batch)
    np.testing.assert_allclose(plan.forecast_tokens_per_s, plan.batch / plan.forecast_time_per_token_s)
    with pytest.raises(ValueError, match="by"):
        hw.serving_chips(LLAMA70, H100, 4096, tpot_target_s=0.05, by="median")


def test_largest_batch_within_a_target_is_the_last_one_that_meets_it():
    batch = hw.largest_batch_within(LLAMA70, H100, 4096, 0.012, 8, by="bound")
    assert 1 < batch < hw.max_batch(LLAMA70, H100, 4096, 8)
    times = hw.inference_step(LLAMA70, H100, np.array([batch, batch + 1]), 4096, n_chips=8).time_s
    assert times[0] <= 0.012 < times[1]
    forecast = hw.largest_batch_within(LLAMA70, H100, 4096, 0.03, 8)
    times = hw.inference_step(LLAMA70, H100, np.array([forecast, forecast + 1]), 4096, n_chips=8).forecast_time_s
    assert 1 < forecast and times[0] <= 0.03 < times[1]
    assert forecast < hw.largest_batch_within(LLAMA70, H100, 4096, 0.03, 8, by="bound")
    contexts = hw.largest_batch_within(LLAMA70, H100, [1024, 4096, 32768], 0.04, 8)
    assert np.all(np.diff(contexts) < 0)
    assert hw.largest_batch_within(LLAMA70, H100, 4096, 1e-4, 8) == 0  # not even one sequence
    assert hw.largest_batch_within(LLAMA70, H100, 4096, 1.0, 1) == 0  # the weights do not fit


def test_throughput_bound_of_a_workload():
    llama8 = hw.model("llama-3-8b")
    bound = hw.throughput_bound(llama8, H100, 1000, 1000, weight_dtype="fp8", kv_dtype="fp8")
    assert bound.batch == hw.max_batch(llama8, H100, 1000 + 499, 1, "fp8", "fp8", usable_fraction=1.0)
    assert 0 < bound.prefill_share < 1 and bound.replicas == 1
    prefill = hw.inference_step(llama8, H100, bound.batch, 0, 1000, weight_dtype="fp8", kv_dtype="fp8")
    seconds = bound.batch * 1000 / bound.tokens_per_s  # the bound's run: its batch's prompts and answers
    assert bound.forecast_batch != bound.batch and bound.prefill_share == pytest.approx(prefill.time_s / seconds)
    # eight one-chip replicas do eight times one chip's work; one eight-chip replica pays its all-reduces
    eight = hw.throughput_bound(llama8, H100, 1000, 1000, 8, "fp8", "fp8", tensor_parallel=1)
    assert eight.tokens_per_s == pytest.approx(8 * bound.tokens_per_s) and eight.replicas == 8
    lengths = hw.throughput_bound(llama8, H100, [128, 1000, 4000], 1000)
    assert np.all(np.diff(lengths.tokens_per_s) < 0)  # longer prompts: more prefill per answer
    assert hw.throughput_bound(LLAMA70, H100, 1000, 1000).tokens_per_s == 0  # does not fit on one GPU
    with pytest.raises(ValueError, match="tensor_parallel must divide n_chips=8"):
        hw.throughput_bound(llama8, H100, 10, 10, 8, tensor_parallel=3)


def test_no_measured_run_beats_its_bound():
    runs = hw.serving_runs()
    assert len(runs) >= 12 and len({run.key for run in runs}) == len(runs)
    for run in runs:
        bound = hw.serving_run_bound(run)
        assert 0 < run.tokens_per_s.value < bound.tokens_per_s, run.key
        assert run.tokens_per_s.source and run.tokens_per_s.quoted
    unknown = [run for run in runs if run.input_len is None and run.output_len is not None]
    limits = {run.key: max_mean_prompt(run) for run in unknown}
    assert all(0 < limit <= 1024 for limit in limits.values())
    with pytest.raises(ValueError, match="states its prompt length"):
        max_mean_prompt(next(run for run in runs if run.input_len is not None))


@settings(max_examples=60, deadline=None)
@given(
    batch=st.integers(1, 4096),
    context=st.integers(0, 32768),
    new=st.integers(1, 64),
    chips=st.sampled_from([1, 2, 4, 8]),
    key=st.sampled_from(["llama-3-8b", "llama-3-70b", "mixtral-8x7b"]),
)
def test_step_properties(batch, context, new, chips, key):
    model = hw.model(key)
    step = hw.inference_step(model, H100, batch, context, new, chips)
    assert step.time_s <= step.time_upper_s + 1e-15
    assert step.time_s == pytest.approx(max(step.compute_time_s, step.memory_time_s, step.comm_time_s))
    bigger = hw.inference_step(model, H100, batch + 1, context, new, chips)
    assert bigger.time_s >= step.time_s and bigger.tokens_per_s >= step.tokens_per_s * (1 - 1e-12)


def test_memory_bound_context_is_where_the_turn_goes_to_infinity():
    llama8 = hw.model("llama-3-8b")
    limit = hw.memory_bound_context(llama8, H100)
    below, above = hw.compute_bound_batch(llama8, H100, [int(limit) - 1, int(limit) + 1])
    assert np.isfinite(below) and np.isinf(above)
    # the criterion without attention's FLOPs and the activations: s KV / beta = 2 P_a / pi
    rough = 2 * llama8.matmul_params() / H100.peak("bf16") / (llama8.kv_bytes_per_token() / H100.hbm_bytes_per_s)
    assert 0.8 * limit < rough < 1.2 * limit  # activations and the new token's write add bytes: the limit is lower
    curve = hw.serving_curve(LLAMA70, H100, 4096, [1, 64, 1024], 8, include_largest=True)
    largest = hw.max_batch(LLAMA70, H100, 4096, 8)
    assert largest in curve.batches and curve.fits[list(curve.batches).index(largest)]
    assert not curve.fits[-1]


def test_attention_data_parallelism_holds_all_but_the_routed_experts_on_every_chip():
    from hwlib.serving.pricing import StepPricer, held_weight_bytes

    model, node = hw.model("deepseek-v3"), hw.cluster("hgx-h200-ndr")
    table, batch, context = model.table(), 64, 2048
    split, dp = (
        hw.inference_step(model, node, batch, context, 1, 8, precision="fp8", expert_parallel=True, attention_dp=dp)
        for dp in (False, True)
    )
    whole = table.matmul_params(active=False) - table.expert_params() * model.n_experts  # attention, shared, head
    touched = table.touched_matmul_params(batch)
    assert dp.part_bytes["weights"] == pytest.approx(8 * (whole + (touched - whole) / 8))  # fp8: a byte each
    unsplit = model.mla.down_params(model.d_model) * model.n_layers  # whole on each of the 8 chips without DP
    assert split.part_bytes["weights"] == pytest.approx(touched + 7 * unsplit)
    assert dp.part_bytes["attention"] == pytest.approx(batch * model.kv_bytes(context + 1, "fp8"))  # stored once
    assert split.part_bytes["attention"] == pytest.approx(8 * dp.part_bytes["attention"])  # MLA: one latent head
    assert dp.part_flops["weights"] == pytest.approx(split.part_flops["weights"] - 2 * 7 * unsplit * batch)
    pricer = StepPricer(
        model, node.chip, split_topology(node), 8, hw.PRECISIONS["fp8"], expert_parallel=True, attention_dp=True
    )
    assert {c.part for c in pricer.collectives(np.array([64.0]))} == {"ep all-to-all"}  # no all-reduce left
    held = held_weight_bytes(model, "fp8", 8, attention_dp=True)
    assert held == pytest.approx(model.weight_bytes("fp8") + 7 * (model.params() - table.expert_params() * 256))
    assert held_weight_bytes(model, "fp8", 8) == model.weight_bytes("fp8")
    served = hw.simulate_serving(
        model,
        node,
        8,
        prompt_len=1024,
        output_len=32,
        n_requests=16,
        concurrency=16,
        precision="fp8",
        expert_parallel=True,
        attention_dp=True,
    )
    assert served.finish_s.max() > 0
    with pytest.raises(ValueError, match="attention_dp needs expert_parallel=True"):
        hw.inference_step(model, node, 1, 0, 1, 8, attention_dp=True)
    with pytest.raises(TypeError, match="attention_dp must be True or False"):
        hw.simulate_serving(model, node, 8, expert_parallel=True, attention_dp="yes")


def split_topology(node):
    from hwlib.placement import serving_place

    return serving_place(node, hw.model("deepseek-v3"), 8)[1]


def test_an_mla_s_down_projections_stay_whole_on_every_tensor_parallel_chip():
    """DeepSeek-V3's query and latent down-projections, d x (r_q + r_kv + d_rope) = 7,168 x 2,112 a layer, are not
    split by tensor parallelism: each of n chips reads and multiplies all of them, (n - 1) copies more than a split;
    one chip, attention data parallelism and a model without MLA add nothing."""
    model, node = hw.model("deepseek-v3"), hw.cluster("hgx-h200-ndr")
    assert model.mla.down_params(model.d_model) == 7168 * (1536 + 512 + 64)
    unsplit = model.mla.down_params(model.d_model) * model.n_layers
    touched = model.table().touched_matmul_params(16)
    flops = model.table().weight_flops(16)
    for chips in (2, 8):
        step = hw.inference_step(model, node, 16, 1024, 1, chips, precision="fp8")
        assert step.part_bytes["weights"] == pytest.approx(touched + (chips - 1) * unsplit)  # fp8: a byte each
        assert step.part_flops["weights"] == pytest.approx(flops + 2 * 16 * (chips - 1) * unsplit)
    one = hw.inference_step(model, hw.chip("H200"), 16, 1024, precision="fp8")
    assert one.part_bytes["weights"] == pytest.approx(touched)
    llama = hw.model("llama-3-70b")
    eight = hw.inference_step(llama, hw.cluster("hgx-h100-ndr"), 16, 1024, 1, 8, precision="fp8")
    assert eight.part_bytes["weights"] == pytest.approx(llama.table().touched_matmul_params(16))
    no_q_rank = replace(model.mla, q_lora_rank=None)
    assert no_q_rank.down_params(model.d_model) == 7168 * (512 + 64)
