"""hwlib.training.schedules: each pipeline schedule's bubble, in-flight activations and weight copies, pinned to its
paper, DeepSeek-V3's Table 2 reproduced, and the orderings between schedules as properties."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hwlib as hw
from hwlib.training.batch import chunk_pace
from hwlib.training.schedules import (
    INTERLEAVED,
    SCHEDULES,
    SPMD_SCHEDULES,
    bubble_time,
    default_schedule,
    min_micro_batches,
    pipeline_schedule,
    stage_layers,
    uneven_stages,
)
from hwlib.training.step import STEP_PARTS

PASSES = {"t_f": 1.3, "t_b": 1.7, "t_w": 1.1}  # unequal, so that a swapped or dropped term shows
ZERO_BUBBLE = ("zb-h1", "zb-v", "dualpipe")


def _options(schedule):
    return {"interleave": 2} if schedule in INTERLEAVED else {}


# --- each formula, pinned -----------------------------------------------------------------------------------


@pytest.mark.parametrize("p, m", [(4, 8), (8, 32), (16, 48)])
def test_each_bubble_is_its_papers_formula(p, m):
    f, b, w = PASSES["t_f"], PASSES["t_b"], PASSES["t_w"]
    ideal = m * (f + b + w)
    expected = {
        "gpipe": (p - 1) * (f + b + w),  # Narayanan et al. 2021, Sec. 2.2.1; Huang et al. 2019
        "1f1b": (p - 1) * (f + b + w),
        "interleaved-1f1b": (p - 1) * (f + b + w) / 2,  # Sec. 2.2.2, v = 2
        "circular": (p - 1) * (f + b + w) / 2,  # MaxText: (PP - 1) / (repeats * m + PP - 1) of the step
        "zb-h1": (p - 1) * (f + b - w),  # Qi et al. 2023, Table 2
        "zb-v": (p - 1) * (f + b - 2 * w),  # ZB-H2's form; 0 at T_F = T_B = T_W
        "dualpipe": (p / 2 - 1) * ((f + b + w) + (b + w) - 3 * w),  # DeepSeek-V3 Table 2, F&B = F + B
    }
    for schedule, idle in expected.items():
        assert bubble_time(schedule, p, **_options(schedule), **PASSES) == pytest.approx(idle), schedule
        cost = pipeline_schedule(schedule, p, m, **_options(schedule), **PASSES)
        assert cost.bubble_share == pytest.approx(idle / ideal), schedule


def test_at_unit_passes_the_shares_are_the_published_rates():
    p, m = 8, 64
    share = {s: pipeline_schedule(s, p, m, **_options(s)).bubble_share for s in SCHEDULES}
    assert share["gpipe"] == share["1f1b"] == pytest.approx((p - 1) / m)
    assert share["interleaved-1f1b"] == share["circular"] == pytest.approx((p - 1) / (2 * m))
    step = 1 + share["circular"]  # MaxText's docs give the bubble as a share of the whole step
    assert share["circular"] / step == pytest.approx((p - 1) / (2 * m + p - 1))
    assert share["zb-h1"] == pytest.approx((p - 1) / (3 * m))  # the authors' README: ZB1P (p-1)/3m
    assert share["zb-v"] == 0.0  # ZBV: 0
    assert share["dualpipe"] == pytest.approx((p - 2) / (3 * m))  # (p/2-1) 2 T over m 3 T


def test_in_flight_activations_pinned():
    p, m = 8, 32
    assert pipeline_schedule("gpipe", p, m).in_flight == m
    assert pipeline_schedule("1f1b", p, m).in_flight == p
    assert pipeline_schedule("1f1b", p, 3).in_flight == 3
    for v in (2, 3, 4):  # Megatron: p micro-batches times 1 + (p - 1) / (p v)
        cost = pipeline_schedule("interleaved-1f1b", p, m, v)
        assert cost.in_flight == pytest.approx(p * (1 + (p - 1) / (p * v))) == pytest.approx(p + (p - 1) / v)
        warmup = 2 * (p - 1) + (v - 1) * p  # schedules.py's first-rank warm-up, in chunks of L/(p v) layers
        assert cost.in_flight == pytest.approx((warmup + 1) / v)
    assert pipeline_schedule("interleaved-1f1b", p, p, 2).in_flight == p  # every chunk in warm-up: all m
    assert pipeline_schedule("circular", p, m, 4).in_flight == m  # every forward before any backward
    assert pipeline_schedule("zb-h1", p, m).in_flight == p
    assert pipeline_schedule("zb-v", p, m).in_flight == p
    assert pipeline_schedule("dualpipe", p, m).in_flight == p + 1


def test_weight_copies_chunks_sends_and_what_is_hidden():
    p, m = 8, 32
    costs = {s: pipeline_schedule(s, p, m, **_options(s)) for s in SCHEDULES}
    assert {s: c.weight_copies for s, c in costs.items()} == {s: 2 if s == "dualpipe" else 1 for s in SCHEDULES}
    for schedule in INTERLEAVED:
        assert costs[schedule].model_chunks == 2 * p and costs[schedule].p2p_factor == 2, schedule
    assert costs["zb-v"].model_chunks == 2 * p and costs["zb-v"].p2p_factor == 2  # README: volume 2x
    for schedule in ("gpipe", "1f1b", "zb-h1", "dualpipe"):
        assert costs[schedule].model_chunks == p and costs[schedule].p2p_factor == 1, schedule
    assert {s for s, c in costs.items() if c.splits_backward} == set(ZERO_BUBBLE)
    assert costs["dualpipe"].hidden_comm == ("ep all-to-all", "pp send/recv")
    assert set(costs["dualpipe"].hidden_comm) <= set(STEP_PARTS)
    assert all(not c.hidden_comm for s, c in costs.items() if s != "dualpipe")
    assert {s: c.min_micro_batches for s, c in costs.items()} == {
        "gpipe": 1,
        "1f1b": 1,
        "interleaved-1f1b": p,
        "circular": p,
        "zb-h1": p,
        "zb-v": 2 * p,
        "dualpipe": 2 * p,
    }


def test_tpus_run_spmd_schedules_and_gpus_megatrons():
    assert [default_schedule("TPU", v) for v in (1, 4)] == list(SPMD_SCHEDULES) == ["gpipe", "circular"]
    assert [default_schedule(family, v) for family in ("GPU", "") for v in (1, 4)] == ["1f1b", "interleaved-1f1b"] * 2
    llama, mesh = hw.model("llama-3-8b"), hw.Mesh(fsdp=8, pp=4)
    tpu = hw.train_step(llama, hw.cluster("tpu-v5p"), mesh, 2**20, 4096, 4096, "full")
    gpu = hw.train_step(llama, hw.cluster("hgx-h100-ndr"), mesh, 2**20, 4096, 4096, "full")
    assert (tpu.schedule, gpu.schedule) == ("gpipe", "1f1b")
    kept = hw.activation_bytes(4096, 1, llama, recompute="full", flash_attention=True) * llama.n_layers / mesh.pp
    working = hw.activation_bytes(4096, 1, llama, flash_attention=True) - kept * mesh.pp / llama.n_layers
    assert tpu.memory_parts["activations"] == pytest.approx(tpu.micro_batches * kept + working)  # GPipe: all 32
    assert gpu.memory_parts["activations"] == pytest.approx(mesh.pp * kept + working)  # 1F1B: four in flight


def test_one_stage_has_no_bubble():
    for schedule in ("gpipe", "1f1b", "zb-h1", "zb-v"):
        assert pipeline_schedule(schedule, 1, 4).bubble_share == 0.0
    assert pipeline_schedule("dualpipe", 2, 4).bubble_share == 0.0  # (2/2 - 1) = 0


def test_vectorised_over_stages_and_micro_batches():
    p = np.array([2, 4, 8])
    m = np.array([[16], [32]])
    cost = pipeline_schedule("1f1b", p, m)
    assert cost.bubble_share.shape == (2, 3)
    np.testing.assert_allclose(cost.bubble_share, (p - 1) / m)
    np.testing.assert_array_equal(cost.in_flight, np.broadcast_to(p, (2, 3)))
    np.testing.assert_array_equal(min_micro_batches("dualpipe", p), 2 * p)


# --- DeepSeek-V3 technical report, Table 2 -------------------------------------------------------------------


@pytest.mark.parametrize("pp", [4, 8, 16])
def test_deepseek_v3_table_2(pp):
    """Table 2 (Sec. 3.2.1): bubble, parameters and activations of 1F1B, ZB1P and DualPipe, where F is a forward
    chunk, B a full backward chunk, W its weight-gradient part and F&B an overlapped forward and backward pair."""
    F, B, W, FB = 1.3, 2.9, 1.1, 3.5  # B = T_B + T_W in Qi et al.'s split; F&B within [max(F, B), F + B]
    t = {"t_f": F, "t_b": B - W, "t_w": W}
    table = {  # method: (bubble, parameter, activation)
        "1f1b": ((pp - 1) * (F + B), 1, pp),
        "zb-h1": ((pp - 1) * (F + B - 2 * W), 1, pp),  # ZB1P
        "dualpipe": ((pp / 2 - 1) * (FB + B - 3 * W), 2, pp + 1),
    }
    m = 2 * pp
    for schedule, (bubble, parameters, activations) in table.items():
        fb = {"t_fb": FB} if schedule == "dualpipe" else {}
        assert bubble_time(schedule, pp, **t, **fb) == pytest.approx(bubble), schedule
        cost = pipeline_schedule(schedule, pp, m, **t, **fb)
        assert cost.weight_copies == parameters, schedule
        assert cost.in_flight == activations, schedule
        assert cost.bubble_share == pytest.approx(bubble / (m * (F + B)))


def test_dualpipe_published_schedule_idles_six_of_sixty_six_slots():
    """deepseek-ai/DualPipe's figure, 8 ranks and 20 micro-batches at unit passes: 66 slots a row, 6 idle, which
    F&B = F + B gives and F&B = max(F, B) would not."""
    assert bubble_time("dualpipe", 8) == 6
    assert pipeline_schedule("dualpipe", 8, 20).bubble_share == pytest.approx(6 / 60)
    assert bubble_time("dualpipe", 8, t_fb=2.0) == 3


# --- properties ---------------------------------------------------------------------------------------------

stages = st.integers(2, 64)
micro = st.integers(1, 512)
times = st.floats(0.2, 5.0)


@settings(max_examples=150, deadline=None)
@given(stages, micro, times, times, times, st.floats(0.0, 1.0))
def test_a_zero_bubble_schedule_never_idles_longer_than_1f1b(p, m, f, b, w, overlap):
    ones = pipeline_schedule("1f1b", p, m, t_f=f, t_b=b, t_w=w).bubble_share
    for schedule in ZERO_BUBBLE:
        if m < min_micro_batches(schedule, p + p % 2) or (schedule == "dualpipe" and (p % 2 or m % 2)):
            continue  # the schedule does not take this many micro-batches or stages
        extra = {}
        if schedule == "dualpipe":  # an overlapped pair lasts between the longer pass and both in a row
            extra["t_fb"] = max(f, b + w) + overlap * (f + b + w - max(f, b + w))
        cost = pipeline_schedule(schedule, p, m, t_f=f, t_b=b, t_w=w, **extra)
        assert 0.0 <= cost.bubble_share <= ones + 1e-12, schedule


@settings(max_examples=150, deadline=None)
@given(stages, st.integers(1, 8), st.integers(2, 8))
def test_interleaving_never_raises_the_bubble(p, k, v):
    m = k * p  # interleaving takes whole multiples of pp
    plain = pipeline_schedule("1f1b", p, m).bubble_share
    interleaved = pipeline_schedule("interleaved-1f1b", p, m, v).bubble_share
    assert interleaved <= plain
    assert pipeline_schedule("interleaved-1f1b", p, m, v + 1).bubble_share <= interleaved


@settings(max_examples=150, deadline=None)
@given(stages, micro, st.integers(1, 512), st.sampled_from(SCHEDULES))
def test_more_micro_batches_never_raise_the_bubble_share(p, m, more, schedule):
    if schedule == "dualpipe":
        p += p % 2
    smallest = min_micro_batches(schedule, p, **_options(schedule))
    m = max(m, smallest)
    step = p if schedule in INTERLEAVED else (2 if schedule == "dualpipe" else 1)
    m -= m % step
    larger = m + more * step
    before = pipeline_schedule(schedule, p, m, **_options(schedule)).bubble_share
    assert pipeline_schedule(schedule, p, larger, **_options(schedule)).bubble_share <= before


@settings(max_examples=150, deadline=None)
@given(stages, micro)
def test_gpipe_keeps_no_fewer_micro_batches_than_1f1b(p, m):
    assert pipeline_schedule("gpipe", p, m).in_flight >= pipeline_schedule("1f1b", p, m).in_flight


# --- uneven first and last stages ---------------------------------------------------------------------------


def test_llama_3_405b_drops_a_layer_from_the_first_and_last_stages():
    llama = hw.model("llama-3.1-405b")
    layers = stage_layers(llama.n_layers, 16, fewer_first=1, fewer_last=1)
    assert layers.tolist() == [7] + [8] * 14 + [7] and layers.sum() == 126
    parts = llama.param_breakdown()
    head = parts["lm_head"] / ((parts["attention"] + parts["mlp"]) / llama.n_layers)  # ~0.66 of a layer
    assert 0.5 < head < 1
    work = layers.astype(float)
    work[-1] += head  # the output head sits on the last stage, beside its 7 layers
    balanced = uneven_stages(work, 64)
    assert balanced.pace == pytest.approx(8 / work.mean())
    assert balanced.slowest_stage in range(1, 15)  # a middle stage of 8 layers sets the pace
    crowded = work.copy()
    crowded[-1], crowded[-2] = 8 + head, 7.0  # the head beside a full stage of 8 instead
    assert uneven_stages(crowded, 64).pace == pytest.approx((8 + head) / work.mean())
    assert uneven_stages(crowded, 64).bubble_share > balanced.bubble_share


def test_the_slowest_stage_sets_the_pace():
    even = uneven_stages([8.0] * 8, 32)
    assert even.pace == 1 and even.bubble_share == pytest.approx(even.even.bubble_share) == pytest.approx(7 / 32)
    slow = uneven_stages([8.0] * 7 + [10.0], 32, "zb-h1")
    r = 10 / (66 / 8)
    assert slow.pace == pytest.approx(r) and slow.slowest_stage == 7
    assert slow.bubble_share == pytest.approx(r * (1 + 7 / (3 * 32)) - 1)
    np.testing.assert_allclose(uneven_stages([1.0, 2.0], [4, 8]).bubble_share, (4 / 3) * (1 + 1 / np.array([4, 8])) - 1)


# --- bad inputs ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: pipeline_schedule("pipedream", 4, 8), r"schedule must be one of"),
        (lambda: pipeline_schedule("1f1b", 0, 8), r"pp must be > 0"),
        (lambda: pipeline_schedule("1f1b", 4.5, 8), r"pp must be a whole number"),
        (lambda: pipeline_schedule("1f1b", 4, 0), r"micro_batches must be > 0"),
        (lambda: pipeline_schedule("1f1b", 4, 8, 2), r"interleave must be 1 .* for schedule '1f1b', got 2"),
        (lambda: pipeline_schedule("interleaved-1f1b", 4, 8, 1), r"interleave must be >= 2"),
        (lambda: pipeline_schedule("interleaved-1f1b", 4, 6, 2), r"micro_batches must be a multiple of pp=4"),
        (lambda: pipeline_schedule("interleaved-1f1b", 1, 4, 2), r"pp must be >= 2"),
        (lambda: pipeline_schedule("circular", 4, 8, 1), r"interleave must be >= 2 \(1 is plain 'gpipe'\)"),
        (lambda: pipeline_schedule("circular", 4, 6, 2), r"micro_batches must be a multiple of pp=4"),
        (lambda: pipeline_schedule("zb-h1", 8, 7), r"micro_batches must be >= pp .* 'zb-h1', got 7"),
        (lambda: pipeline_schedule("zb-v", 8, 15), r"micro_batches must be >= 2 pp .* 'zb-v', got 15"),
        (lambda: pipeline_schedule("dualpipe", 6, 10), r"micro_batches must be >= 2 pp .* got 10"),
        (lambda: pipeline_schedule("dualpipe", 7, 14), r"pp must be even .* got 7"),
        (lambda: pipeline_schedule("dualpipe", 4, 9), r"micro_batches must be even .* got 9"),
        (lambda: pipeline_schedule("1f1b", 4, 8, t_fb=3.0), r"t_fb must be None"),
        (lambda: pipeline_schedule("dualpipe", 4, 8, t_fb=0.5), r"t_fb must be between max\(t_f, t_b \+ t_w\)"),
        (lambda: pipeline_schedule("dualpipe", 4, 8, t_fb=3.5), r"t_fb must be between"),
        (lambda: pipeline_schedule("zb-h1", 4, 8, t_w=-1.0), r"t_w must be >= 0"),
        (lambda: pipeline_schedule("zb-h1", 4, 8, t_f=0.0), r"t_f must be > 0"),
        (lambda: bubble_time("zb-v", [4, 5], interleave=2), r"interleave must be 1"),
        (lambda: stage_layers(126, 16), r"n_layers=126 .* pp=16"),
        (lambda: stage_layers(32, 1, fewer_first=1), r"must be 0 with pp=1"),
        (lambda: stage_layers(4, 4, fewer_first=4), r"k >= 4"),
        (lambda: uneven_stages([[1.0, 2.0]], 4), r"stage_work must be one value >= 0 per stage"),
        (lambda: uneven_stages([0.0, 0.0], 4), r"not all 0"),
        (lambda: uneven_stages([1.0, -1.0], 4), r"stage_work must be >= 0"),
    ],
)
def test_bad_inputs_name_the_parameter_the_value_and_what_is_allowed(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_wrong_types_are_type_errors():
    with pytest.raises(TypeError, match="schedule must be a string"):
        pipeline_schedule(3, 4, 8)
    with pytest.raises(TypeError, match="micro_batches must be a real number"):
        pipeline_schedule("1f1b", 4, "8")


def test_a_pipeline_of_whole_layers_runs_at_its_slowest_chunks_pace():
    """Every slot waits for the slowest chunk: 61 layers on 16 stages hold 4 in the slowest (the embedding and the
    loss in a layer's place each, 63 units), so the step runs at 64/63 of the even split's time."""
    assert chunk_pace(61, 16) == pytest.approx(64 / 63) and chunk_pace(80, 4) == 1.0 == chunk_pace(126, 128)
    assert chunk_pace(32, 3) == pytest.approx(33 / 32)  # 11 layers a stage, or 34 units in 12s: 36/34 is worse
    deepseek, cluster = hw.model("deepseek-v3"), hw.cluster("hgx-h800-ndr")
    mesh = hw.Mesh(dp=128, pp=16, ep=64)
    step = hw.train_step(deepseek, cluster, mesh, 15360 * 4096, 4096, 4096, "full", schedule="dualpipe", dtype="fp8")
    even = pipeline_schedule("dualpipe", 16, 120).bubble_share
    assert step.bubble_time_s == pytest.approx((64 / 63 * (1 + even) - 1) * step.compute_time_s, rel=1e-9)
