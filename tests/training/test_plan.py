"""The planner's search (hwlib/training/plan.py) and the choices it searches (ZeRO over dp, micro-batches,
recomputation; hwlib/training/step.py): real runs get meshes that fit, and the choices do what they say."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hwlib as hw
from hwlib.memory import RECOMPUTE
from hwlib.pricing import BACKWARD_SHARE
from hwlib.training.mesh import local_params
from hwlib.training.plan import PIPELINES, best_step
from hwlib.training.savers import NO_SAVERS, Savers, update_bytes
from hwlib.training.step import step_memory
from hwlib.training.zero import ZERO_SHARDED

H100 = hw.cluster("hgx-h100-ndr")
LLAMA8, LLAMA70, LLAMA405 = hw.model("llama-3-8b"), hw.model("llama-3-70b"), hw.model("llama-3.1-405b")


@pytest.fixture(scope="module")
def plan_405b():
    return hw.plan_training(LLAMA405, H100, 16 * 2**20, 8192, 1024)


def test_llama_405b_on_1024_h100s_has_meshes_that_fit(plan_405b):
    assert len(plan_405b.feasible) >= 10
    best = plan_405b.feasible[0].step
    assert best.fits and best.memory_per_chip_bytes <= best.usable_bytes
    # the ones that fit shard the optimizer state or recompute: the dp=8 tp=8 pp=16 among them
    megatron = next(p for p in plan_405b.meshes if p.mesh == hw.Mesh(dp=8, tp=8, pp=16))
    assert megatron.fits and megatron.step.zero >= 1 and megatron.step.recompute == "full"
    assert megatron.step.micro_batch_tokens == 8192


def test_the_plan_ranks_every_fitting_mesh_by_its_forecast(plan_405b):
    times = [float(p.step.forecast_time_s) for p in plan_405b.feasible]
    assert times == sorted(times)
    assert all(p.fits for p in plan_405b.meshes[: len(plan_405b.feasible)])


def test_an_8b_model_on_64_h100s_trains_with_fsdp_near_the_best():
    plan = hw.plan_training(LLAMA8, H100, 2**20, 2048, 64)
    fsdp = next(p for p in plan.meshes if p.mesh == hw.Mesh(fsdp=64))
    assert fsdp.fits  # a micro-batch of a few sequences, not all eight of a rank at once
    best = float(plan.feasible[0].step.forecast_time_s)
    assert float(fsdp.step.forecast_time_s) <= 1.05 * best
    assert fsdp.step.micro_batch_tokens < 2**20 / 64


def test_a_fixed_choice_is_kept():
    plan = hw.plan_training(LLAMA70, H100, 2**22, 8192, 256, recompute="full", micro_batch_tokens=8192)
    assert {p.step.recompute for p in plan.meshes if p.step} == {"full"}
    assert {p.step.micro_batch_tokens for p in plan.meshes if p.step} == {8192}


def test_zero_over_dp_splits_what_it_says_and_costs_no_time_at_stage_one():
    mesh, args = hw.Mesh(dp=8, tp=8, pp=16), (LLAMA405, H100)
    steps = {z: hw.train_step(*args, mesh, 16 * 2**20, 8192, 8192, "full", zero=z) for z in (0, 1, 2)}
    for stage, sharded in ZERO_SHARDED.items():
        for part, value in steps[stage].memory_parts.items():
            expected = steps[0].memory_parts[part] / (8 if part in sharded else 1)
            assert value == pytest.approx(expected, rel=1e-12), (stage, part)
    # at the bound stage 1 costs nothing; in the forecast each rank updates 1/8 of the parameters
    assert steps[1].time_s == steps[0].time_s and steps[1].forecast_time_s < steps[0].forecast_time_s
    # stage 2 reduce-scatters each micro-batch's gradients: more traffic than one all-reduce
    assert steps[2].comm_time_s["dp all-reduce"] > steps[1].comm_time_s["dp all-reduce"]
    one_micro = hw.train_step(LLAMA8, H100, hw.Mesh(dp=8), 8 * 8192, 8192, zero=2)
    assert one_micro.comm_time_s == hw.train_step(LLAMA8, H100, hw.Mesh(dp=8), 8 * 8192, 8192, zero=1).comm_time_s


@pytest.mark.parametrize(
    "zero, error, match",
    [
        (3, ValueError, "zero=3 over the dp ranks is FSDP"),
        (4, ValueError, r"zero must be one of \(0, 1, 2\), got 4"),
        (True, ValueError, "zero must be one of"),
        ("1", ValueError, "zero must be one of"),
    ],
)
def test_a_bad_zero_stage_is_refused(zero, error, match):
    with pytest.raises(error, match=match):
        hw.train_step(LLAMA8, H100, hw.Mesh(dp=8), 8 * 8192, 8192, zero=zero)


def test_step_memory_is_the_steps_memory():
    mesh = hw.Mesh(dp=4, fsdp=2, tp=4, pp=2)
    parts, room = step_memory(LLAMA70, H100, mesh, 2**22, 8192, 8192, "selective", zero=1)
    step = hw.train_step(LLAMA70, H100, mesh, 2**22, 8192, 8192, "selective", zero=1)
    assert parts == step.memory_parts and room == step.usable_bytes


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([1, 2, 4, 8]), st.sampled_from(RECOMPUTE), st.sampled_from([1, 2, 4]))
def test_more_micro_batches_never_raise_the_activation_memory(sequences, recompute, pp):
    mesh = hw.Mesh(fsdp=8 // pp * 2, tp=4, pp=pp)
    rank = 2**21 // mesh.data_parallel
    memory = [
        hw.train_step(LLAMA70, H100, mesh, 2**21, 2048, micro, recompute).memory_parts["activations"]
        for micro in (2048 * sequences, 2048 * sequences // 2 if sequences > 1 else 2048)
        if micro <= rank
    ]
    assert memory == sorted(memory, reverse=True)


@settings(max_examples=20, deadline=None)
@given(st.sampled_from([hw.Mesh(fsdp=64), hw.Mesh(dp=8, tp=8), hw.Mesh(fsdp=16, tp=2, pp=2)]), st.integers(0, 3))
def test_a_larger_global_batch_never_lowers_the_step_time(mesh, doubling):
    batch = 2**20 * 2**doubling
    small = hw.train_step(LLAMA8, H100, mesh, batch, 4096, 4096)
    large = hw.train_step(LLAMA8, H100, mesh, 2 * batch, 4096, 4096)
    assert large.time_s >= small.time_s and large.forecast_time_s >= small.forecast_time_s


def test_the_planner_takes_the_fastest_pipeline_schedule_that_fits():
    mesh = hw.Mesh(dp=8, tp=8, pp=16)
    chosen = best_step(LLAMA405, H100, mesh, 16 * 2**20, 8192)
    choice = (chosen.micro_batch_tokens, chosen.recompute)
    tried = [("1f1b", 1), *PIPELINES["GPU"]]
    steps = [
        hw.train_step(LLAMA405, H100, mesh, 16 * 2**20, 8192, *choice, zero=chosen.zero, schedule=s, interleave=v)
        for s, v in tried
    ]
    fastest = min(float(step.forecast_time_s) for step in steps if step.fits)
    assert float(chosen.forecast_time_s) == pytest.approx(fastest, rel=1e-12)
    assert chosen.schedule == "zb-v" and chosen.bubble_time_s == 0.0  # no idle at T_F = T_B = T_W
    assert not steps[-1].fits or steps[-1].forecast_time_s > chosen.forecast_time_s  # DualPipe's two copies
    fixed = best_step(LLAMA405, H100, mesh, 16 * 2**20, 8192, interleave=1)
    assert fixed.interleave == 1 and fixed.schedule == "1f1b"
    kept = best_step(LLAMA405, H100, mesh, 16 * 2**20, 8192, schedule="interleaved-1f1b", interleave=4)
    assert kept.interleave == 4 and kept.schedule == "interleaved-1f1b"


@pytest.mark.parametrize("gpus", [8192, 16384])
def test_llama_3_405b_published_mesh_is_within_five_percent_of_the_best(gpus):
    """Dubey et al. 2024 (arXiv:2407.21783), Table 4: TP 8, CP 1, PP 16, DP = GPUs / 128, 16M tokens of 8,192."""
    plan = hw.plan_training(LLAMA405, H100, 16 * 2**20, 8192, gpus)
    published = next(p for p in plan.meshes if p.mesh == hw.Mesh(dp=gpus // 128, tp=8, pp=16))
    best = plan.feasible[0].step
    assert published.fits
    assert float(published.step.forecast_time_s) <= 1.05 * float(best.forecast_time_s)


def test_a_pipeline_may_give_the_embedding_and_the_loss_chunks_of_their_own():
    mesh = hw.Mesh(dp=8, tp=8, pp=16)
    eight = hw.train_step(LLAMA405, H100, mesh, 16 * 2**20, 8192, 8192, "full", zero=1, interleave=8)
    assert eight.interleave == 8 and 16 * 8 == LLAMA405.n_layers + 2
    with pytest.raises(ValueError, match="exceeds the 126 layers with the embedding and the loss"):
        hw.train_step(LLAMA405, H100, hw.Mesh(dp=8, tp=8, pp=16), 16 * 2**20, 8192, 8192, interleave=9)
    with pytest.raises(ValueError, match="pp x interleave = 33 exceeds the 32 layers$"):
        hw.train_step(LLAMA8, H100, hw.Mesh(dp=8), 2**20, 4096, interleave=33)


def test_the_gradient_all_reduce_hides_only_behind_the_last_micro_batchs_backward():
    mesh = hw.Mesh(dp=64)
    for sequences in (1, 2, 4):
        step = hw.train_step(LLAMA8, H100, mesh, 2**20, 4096, sequences * 4096, "none")
        micro_batches = 4 // sequences
        window = BACKWARD_SHARE * step.compute_time_s / micro_batches
        reduce = step.comm_time_s["dp all-reduce"]
        assert step.exposed_comm_time_s["dp all-reduce"] == pytest.approx(max(reduce - window, 0.0), rel=1e-9)
        assert step.time_s == pytest.approx(step.compute_time_s + max(reduce - window, 0.0), rel=1e-9)


def test_the_optimizer_update_streams_its_share_of_the_state_once_a_step():
    """Mixed-precision Adam: the gradient read, the fp32 master and both moments read and written, the bf16 weight
    written, 2 + 2 (4 + 8) + 2 = 28 B for each parameter a chip updates."""
    mesh = hw.Mesh(dp=8, tp=8, pp=16)
    local = local_params(LLAMA405, mesh)
    assert update_bytes(LLAMA405, mesh, "zero_mixed_adam", 0, NO_SAVERS) == pytest.approx(28 * local, rel=1e-12)
    assert update_bytes(LLAMA405, mesh, "zero_mixed_adam", 1, NO_SAVERS) == pytest.approx(28 * local / 8, rel=1e-12)
    assert update_bytes(LLAMA405, mesh, "fp32_adam", 0, NO_SAVERS) == pytest.approx((4 + 16 + 8) * local, rel=1e-12)
    offloaded = Savers(offload=hw.Offload())
    assert update_bytes(LLAMA405, mesh, "zero_mixed_adam", 0, offloaded) == pytest.approx(2 * local, rel=1e-12)
    lora = Savers(adapter=hw.LoRA(rank=16))
    assert update_bytes(LLAMA405, mesh, "zero_mixed_adam", 0, lora) < 1e-2 * 28 * local
    # a chip's update runs after its backward in the forecast, at the achieved bandwidth; the bound may fuse it
    small = hw.train_step(LLAMA8, H100, hw.Mesh(dp=8), 8 * 8192, 8192, 8192, "none")
    mixed = update_bytes(LLAMA8, hw.Mesh(dp=8), "zero_mixed_adam", 0, NO_SAVERS)
    without = hw.train_step(LLAMA8, H100, hw.Mesh(dp=8), 8 * 8192, 8192, 8192, "none", recipe="bf16_fp32_moments")
    lighter = update_bytes(LLAMA8, hw.Mesh(dp=8), "bf16_fp32_moments", 0, NO_SAVERS)
    assert mixed - lighter == pytest.approx(LLAMA8.params() * (2 + 8 + 2 - 4), rel=1e-12)
    assert small.forecast_parts_s["elementwise"] > without.forecast_parts_s["elementwise"]
