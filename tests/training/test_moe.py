"""Mixture-of-experts training (hwlib/training/step.py, mesh.py): the expert all-to-all, routing imbalance, the
grouped GEMM fed by the expert-parallel group, MFU per active parameter, and the measured MoE runs."""

from __future__ import annotations

import dataclasses
import math

import pytest

import hwlib as hw
from hwlib.data import efficiencies
from hwlib.efficiency import collective_efficiency, fp8_expert_share, fp8_grouped_speedup, matmul_fraction
from hwlib.pricing import BACKWARD_SHARE
from hwlib.training.fp8 import dispatch_share, fp8_activation_share
from hwlib.training.mesh import expert_split
from hwlib.training.plan import searched_recomputes, training_run_bound, training_run_forecast

H100, H800 = hw.cluster("hgx-h100-ndr"), hw.cluster("hgx-h800-ndr")
QWEN3, DEEPSEEK, LLAMA8 = hw.model("qwen3-30b-a3b"), hw.model("deepseek-v3"), hw.model("llama-3-8b")
BATCH, SEQ = 1024 * 4096, 4096
EP16 = hw.Mesh(dp=16, ep=16)


def _step(mesh=EP16, **options):
    return hw.train_step(QWEN3, H100, mesh, BATCH, SEQ, SEQ, "none", dtype="fp8", **options)


def test_an_imbalanced_routing_slows_the_experts_and_their_all_to_alls_by_its_factor():
    even, skewed = _step(), _step(routing_imbalance=1.5)
    experts = QWEN3.param_breakdown(active=True)["experts"] / QWEN3.matmul_params(active=True)
    assert 0.5 < experts < 1 and expert_split(QWEN3, 1.5) == pytest.approx((1 - experts, 1.5 * experts))
    assert expert_split(LLAMA8, 1.0) == (1.0, 0.0)
    matmuls = (step.forecast_parts_s["matmuls"] for step in (even, skewed))
    assert next(matmuls) * (1 + 0.5 * experts) == pytest.approx(next(matmuls), rel=1e-9)
    assert skewed.compute_time_s > even.compute_time_s
    assert skewed.comm_time_s["ep all-to-all"] > 1.4 * even.comm_time_s["ep all-to-all"]
    assert skewed.mfu < even.mfu and skewed.memory_per_chip_bytes == even.memory_per_chip_bytes


def test_routing_imbalance_is_refused_where_it_means_nothing():
    with pytest.raises(ValueError, match="routing_imbalance must be >= 1"):
        _step(routing_imbalance=0.9)
    with pytest.raises(ValueError, match="routing_imbalance must be 1 for a dense model"):
        hw.train_step(LLAMA8, H100, hw.Mesh(dp=8), 2**20, 4096, routing_imbalance=1.2)
    with pytest.raises(TypeError, match="routing_imbalance must be one number"):
        _step(routing_imbalance=[1.0, 1.2])


def test_each_tensor_parallel_rank_dispatches_its_share_of_the_tokens():
    table = QWEN3.table()
    paired = _step(hw.Mesh(dp=4, tp=2, ep=4))  # one node: the expert group of 4 at stride 2 stays on NVLink
    group = hw.group_topology(H100, 4, 2, 8)
    per_micro = SEQ / 2 * table.ep_elements_per_token() * 2
    calls = 2 * 2 * QWEN3.n_layers * BATCH / SEQ / 4  # dispatch and combine, forward and backward
    assert group.where == "node" and paired.comm_time_s["ep all-to-all"] == pytest.approx(
        calls * hw.collective_time_s("all-to-all", per_micro, group), rel=1e-9
    )


def test_across_nodes_a_token_crosses_once_to_each_node_that_holds_its_experts():
    table = QWEN3.table()
    group = hw.group_topology(H100, 16, 1, 16)  # two nodes of eight
    assert group.where == "hierarchy" and (group.inner.n_chips, group.outer.n_chips) == (8, 2)
    k, experts = QWEN3.experts_per_token, QWEN3.n_experts
    missed = math.prod((experts - experts / 2 - i) / (experts - i) for i in range(k))
    remote = 2 * (1 - missed) * (1 - 1 / 2)  # nodes touched, less the token's own
    assert table.ep_remote_elements_per_token(2) == pytest.approx(remote * QWEN3.d_model, rel=1e-12)
    assert 0.99 < remote < 1 < k / 2  # deduplicated: about one copy across, not the four of its eight experts there
    across = SEQ * remote * QWEN3.d_model * 2 * 2 / (2 - 1)
    inside = SEQ * table.ep_elements_per_token() * 2
    calls = 2 * 2 * QWEN3.n_layers * BATCH / SEQ / 16
    # forwarded on NVLink as it arrives: the two transfers overlap and the slower one sets the time
    phases = (
        hw.collective_time_s("all-to-all", across, group.outer),
        hw.collective_time_s("all-to-all", inside, group.inner),
    )
    assert phases[0] > phases[1] > 0
    assert _step().comm_time_s["ep all-to-all"] == pytest.approx(calls * max(phases), rel=1e-9)


def test_group_limited_routing_caps_the_nodes_a_token_reaches():
    """DeepSeek-V3: 256 experts in 8 groups, a token's 8 from at most 4 ('topk_group': 4), one group a node."""
    table = DEEPSEEK.table()
    assert (DEEPSEEK.expert_groups, DEEPSEEK.groups_per_token) == (8, 4)
    moe_share = sum(DEEPSEEK.moe_layers) / DEEPSEEK.n_layers
    assert table.ep_remote_elements_per_token(8) == pytest.approx(4 * (1 - 1 / 8) * DEEPSEEK.d_model * moe_share)
    free = dataclasses.replace(DEEPSEEK, expert_groups=0, groups_per_token=0).table()
    assert free.ep_remote_elements_per_token(8) > table.ep_remote_elements_per_token(8)
    assert table.ep_remote_elements_per_token(1) == 0.0 == LLAMA8.table().ep_remote_elements_per_token(8)
    with pytest.raises(ValueError, match="expert_groups .* must divide n_experts"):
        dataclasses.replace(DEEPSEEK, expert_groups=7)
    with pytest.raises(ValueError, match="groups_per_token needs expert_groups"):
        dataclasses.replace(DEEPSEEK, expert_groups=0)


def test_the_bound_hides_the_all_to_all_behind_compute_and_the_forecast_does_not():
    step = _step()
    whole, exposed = step.comm_time_s["ep all-to-all"], step.exposed_comm_time_s["ep all-to-all"]
    hidden_first = step.comm_time_s["dp all-reduce"]  # the gradients take their turn on the links first
    assert whole - step.compute_time_s <= exposed <= whole - step.compute_time_s + hidden_first + 1e-9
    assert step.forecast_parts_s["exposed communication"] > whole * 0.99  # exposed at the achieved rate


def test_the_grouped_gemm_takes_the_tokens_of_the_whole_expert_parallel_group():
    table = DEEPSEEK.table()
    rows, _, _, groups = table.layer_matmuls(4096.0, 1, ep=64)
    alone, _, _, alone_groups = table.layer_matmuls(4096.0)
    k, experts = DEEPSEEK.experts_per_token, DEEPSEEK.n_experts
    assert rows[..., 2] == pytest.approx(4096 * 64 * k / float(table.experts_touched(4096.0 * 64)))
    assert alone[..., 2] == pytest.approx(4096 * k / float(table.experts_touched(4096.0)))
    assert groups[..., 2] == pytest.approx(float(table.experts_touched(4096.0 * 64)) / 64)
    assert rows[..., 0] == alone[..., 0] and experts == 256 and alone_groups[..., 2] > groups[..., 2]


def test_mfu_counts_the_model_flops_and_six_per_active_parameter():
    step = _step()
    chips, peak = 16, H100.chip.peak("fp8")
    active = 6 * QWEN3.params(active=True) * BATCH / (chips * peak * step.time_s)
    assert step.active_param_mfu == pytest.approx(active, rel=1e-12)
    assert step.mfu > step.active_param_mfu  # the attention's FLOPs count in the model's


def test_deepseek_v3s_own_run_is_quoted_three_ways():
    """arXiv:2412.19437: 180K H800 GPU-hours per trillion tokens. Six FLOPs per active parameter per token at the
    FP8 peak is the 17 % quoted for it; the model's FLOPs, with the attention's, and the BF16 peak give more."""
    run = next(run for run in hw.training_runs() if run.key == "deepseek-v3-2048-h800")
    measured = float(run.measured.value)
    assert measured == pytest.approx(1e12 / (180e3 * 3600))
    _, step = training_run_bound(run)
    scale = measured * 2048 / step.tokens_per_s  # the step's MFU at the measured speed
    to_bf16 = H800.chip.peak("fp8") / H800.chip.peak("bf16")
    assert step.active_param_mfu * scale == pytest.approx(0.17, abs=0.01)
    assert 0.17 < step.mfu * scale < step.active_param_mfu * scale * to_bf16 < step.mfu * scale * to_bf16
    assert step.schedule == "dualpipe" and step.n_chips == 2048


def test_every_moe_run_stays_below_its_bound():
    runs = [run for run in hw.training_runs() if run.model.is_moe]
    gpus = {"hgx-h100-ndr", "hgx-h800-ndr", "hgx-b200-ndr", "gb200-nvl72-ndr", "mi355x-node"}
    tpus = {"tpu-v5p", "tpu-v6e", "tpu-7x"}
    assert len(runs) == 40 and {run.cluster_key for run in runs} == gpus | tpus
    for run in runs:
        bound, step = training_run_bound(run)
        assert float(run.measured.value) < bound, run.key
        assert step.mesh.ep == run.mesh.get("ep", 1)
        eight_a_token = run.cluster_key in tpus and run.model.experts_per_token == 8
        maverick = run.key == "maxtext-v5p256-llama4-maverick"
        host_bound = run.key.startswith("primus") and run.micro_batch_sequences <= 2  # the host's floor
        assert bool(run.outside_model) == (eight_a_token or maverick or host_bound), run.key  # the rest: fitted
        assert ("8 of" in run.outside_model) == eight_a_token and ("tensor-parallel" in run.outside_model) == maverick


def test_tpu_moe_runs_kept_out_are_faster_in_the_forecast_than_measured():
    """What the TPU runs of 8 experts a token and Maverick's tensor-parallel experts pay is unpriced: each is slower
    than its forecast, which is why they stay out of the fit; the others' expert kernels are priced."""
    runs = [run for run in hw.training_runs() if run.model.is_moe and run.cluster_key.startswith("tpu")]
    assert len(runs) == 10 and {run.source for run in runs} == {"MaxText, tpu-recipes"}
    for run in runs:
        if run.outside_model:
            assert float(training_run_forecast(run)) > 1.3 * float(run.measured.value), run.key
        else:
            assert run.experts is not None and run.model.experts_per_token <= 2, run.key


def test_the_h800_is_an_h100_with_less_nvlink():
    h800, h100 = hw.chip("H800"), hw.chip("H100")
    assert h800.peak("fp8") == h100.peak("fp8") and h800.hbm.value == h100.hbm.value
    assert h800.interconnect.value == 400e9 and h100.interconnect.value == 900e9
    assert H800.node_size == 8 and hw.deployment(h800).sizes == (8,)
    assert BACKWARD_SHARE == pytest.approx(2 / 3)


def test_ep_overlap_hides_the_all_to_alls_behind_another_micro_batch():
    """Megatron-Core's EP A2A overlap runs one micro-batch's forward beside another's backward: the all-to-alls
    hide behind compute in the forecast as in the bound; one micro-batch has nothing to overlap with."""
    plain, overlapped = _step(), _step(ep_overlap=True)
    assert plain.forecast_parts_s["exposed communication"] > 0
    assert overlapped.forecast_parts_s["exposed communication"] < plain.forecast_parts_s["exposed communication"]
    assert overlapped.forecast_time_s < plain.forecast_time_s and overlapped.time_s == plain.time_s
    assert overlapped.forecast_parts_s["overlap slowdown"] > plain.forecast_parts_s["overlap slowdown"]  # SMs shared
    one = hw.train_step(QWEN3, H100, EP16, 16 * SEQ, SEQ, SEQ, "none", dtype="fp8", ep_overlap=True)
    alone = hw.train_step(QWEN3, H100, EP16, 16 * SEQ, SEQ, SEQ, "none", dtype="fp8")
    assert one.micro_batches == 1 and one.forecast_time_s == alone.forecast_time_s
    with pytest.raises(TypeError, match="ep_overlap must be True or False"):
        _step(ep_overlap="yes")


def test_expert_all_to_alls_run_at_deepeps_measured_share():
    """Across the NICs DeepEP's dispatch and combine reach the line rate; within an H800 node 155.5 of 200 GB/s."""
    shares = efficiencies.ALL_TO_ALL_SHARE
    assert shares["network"].value == 1.0 and shares["node"].value == pytest.approx((153 + 158) / 2 / 200)
    step = _step()  # EP 16 over two nodes: the dispatch across the NICs sets the time
    assert step.forecast_parts_s["exposed communication"] == pytest.approx(
        step.comm_time_s["ep all-to-all"] + step.comm_time_s["dp all-reduce"] / collective_efficiency("network"),
        rel=0.05,
    )
    inside = _step(hw.Mesh(dp=16, ep=8))  # within a node: at DeepEP's intranode share
    exposed = inside.forecast_parts_s["exposed communication"]
    assert exposed > inside.comm_time_s["ep all-to-all"] / shares["node"].value * 0.99
    forced = _step(efficiency=hw.Efficiency(collective=0.5))  # an override applies to every collective
    assert forced.forecast_parts_s["exposed communication"] > step.forecast_parts_s["exposed communication"]


def test_up_projections_recompute_the_norms_and_mlas_expansions():
    """DeepSeek-V3, Sec. 3.2.3: the norms' outputs and MLA's up-projected queries, keys and values are recomputed;
    the latents stay. A GPT layer keeps 4 s b d bytes less (two norm outputs in 16 bits)."""
    s, b, d, heads = 2048, 2, 4096, 32
    assert hw.activation_bytes(s, b, d, heads) - hw.activation_bytes(s, b, d, heads, recompute="up-projections") == (
        4 * s * b * d
    )
    mla, table = DEEPSEEK.mla, DEEPSEEK.table()
    none_whole, none_split, _ = table.kept_activation_bytes()
    up_whole, up_split, _ = table.kept_activation_bytes(recompute="up-projections")
    assert none_whole - up_whole == 4 * DEEPSEEK.d_model
    mlp = none_split - 2 * (2 * table.q_width + DEEPSEEK.n_heads * (mla.qk_head_dim + mla.v_head_dim))
    assert up_split == pytest.approx(2 * (mla.q_lora_rank + table.q_width + mla.cache_width) + mlp)
    per_token = (
        2
        * DEEPSEEK.n_layers
        * DEEPSEEK.n_heads
        * (mla.q_lora_rank * mla.qk_head_dim + mla.kv_lora_rank * (mla.qk_nope_head_dim + mla.v_head_dim))
    )
    assert table.recompute_flops(1000, 0.0, "up-projections") == pytest.approx(1000 * per_token)
    assert LLAMA8.table().recompute_flops(1000, 5.0, "up-projections") == 0.0  # norms are elementwise work
    step = hw.train_step(
        DEEPSEEK,
        H800,
        hw.Mesh(pp=16, dp=128, ep=64),
        15360 * 4096,
        4096,
        4096,
        "up-projections",
        dtype="fp8",
        schedule="dualpipe",
        zero=1,
    )
    none = hw.train_step(
        DEEPSEEK,
        H800,
        hw.Mesh(pp=16, dp=128, ep=64),
        15360 * 4096,
        4096,
        4096,
        "none",
        dtype="fp8",
        schedule="dualpipe",
        zero=1,
    )
    assert step.memory_parts["activations"] < 0.6 * none.memory_parts["activations"]
    assert step.forecast_parts_s["attention"] == none.forecast_parts_s["attention"]  # the scores are not recomputed
    assert step.forecast_parts_s["matmuls"] > none.forecast_parts_s["matmuls"]


def test_the_planner_tries_up_projections_on_mla_models_only():
    assert "up-projections" in searched_recomputes(DEEPSEEK) and "up-projections" not in searched_recomputes(LLAMA8)
    assert searched_recomputes(LLAMA8) == ["none", "selective", "full"]


def test_deepseek_v3s_published_mesh_is_within_5_percent_of_the_planners_best():
    """pp 16, ep 64, no tensor parallelism, DualPipe on 2,048 H800s, 15,360 sequences of 4,096. With DeepSeek's
    recomputation of norms and up-projections and its FP8 recipe (activations kept and dispatched in fp8, Sec.
    3.3.3) the published mesh fits with ZeRO-1, as the paper ran it, within 5 % of the planner's best, and its
    forecast within the GPU MoE band's mean error of the measured pace. Without the
    recipe it needs ZeRO-2, and the planner's best (fewer experts a GPU, FSDP) is 5 to 10 % faster."""
    plan = hw.plan_training(DEEPSEEK, H800, 15360 * 4096, 4096, 2048, dtype="fp8", fp8="blockwise")
    published = next(p for p in plan.meshes if p.mesh == hw.Mesh(pp=16, dp=128, ep=64))
    step, best = published.step, plan.feasible[0].step
    assert published.fits and step.schedule == "dualpipe" and (step.recompute, step.zero) == ("up-projections", 1)
    assert float(step.forecast_time_s / best.forecast_time_s) < 1.05
    run = next(r for r in hw.training_runs() if r.key == "deepseek-v3-2048-h800")
    measured = 15360 * 4096 / 2048 / run.measured.value
    band = hw.forecast_band("training", DEEPSEEK, H800.chip, step.micro_batches)
    assert abs(measured / float(step.forecast_time_s) - 1) < band.mean  # throughput's error, as the band's
    plain = hw.plan_training(DEEPSEEK, H800, 15360 * 4096, 4096, 2048, dtype="fp8")
    without = next(p for p in plain.meshes if p.mesh == hw.Mesh(pp=16, dp=128, ep=64)).step
    assert without.zero == 2 and 1.04 < float(without.forecast_time_s / plain.feasible[0].step.forecast_time_s) < 1.10


def test_deepseek_v3s_fp8_recipe_keeps_the_mlp_and_dispatches_in_fp8():
    blockwise = hw.training.fp8.FP8_SCALINGS["blockwise"]
    assert blockwise.cached_mlp_bytes == blockwise.dispatch_bytes == 1 + 4 / 128
    assert dispatch_share(blockwise) == pytest.approx((1 + 4 / 128 + 2) / 4) and dispatch_share(None) == 1.0
    assert dispatch_share(hw.training.fp8.FP8_SCALINGS["delayed"]) == 1.0  # Transformer Engine's: bf16 all-to-alls
    whole, split, _ = DEEPSEEK.table().kept_activation_bytes(recompute="up-projections")
    mlp = 2 * 3 * DEEPSEEK.table().mlp_width
    assert fp8_activation_share(blockwise, DEEPSEEK, "up-projections") == pytest.approx(
        1 - (1 - (1 + 4 / 128) / 2) * mlp / (whole + split)
    )
    assert fp8_activation_share(blockwise, DEEPSEEK, "full") == 1.0 == fp8_activation_share(None, DEEPSEEK, "none")
    args = (DEEPSEEK, H800, hw.Mesh(pp=16, dp=128, ep=64), 15360 * 4096, 4096, 4096, "up-projections")
    plain = hw.train_step(*args, dtype="fp8", schedule="dualpipe")
    fp8 = hw.train_step(*args, dtype="fp8", schedule="dualpipe", fp8="blockwise")
    assert fp8.memory_parts["activations"] == pytest.approx(
        plain.memory_parts["activations"] * fp8_activation_share(blockwise, DEEPSEEK, "up-projections")
    )
    assert fp8.comm_time_s["ep all-to-all"] == pytest.approx(
        plain.comm_time_s["ep all-to-all"] * dispatch_share(blockwise), rel=1e-3
    )


def test_each_moe_layer_and_local_expert_adds_its_overhead_per_micro_batch():
    a, b = 2e-3, 0.25e-3
    efficiency = hw.Efficiency(moe_layer_overhead_s=a, expert_overhead_s=b)
    step = _step(efficiency=efficiency)
    passes = QWEN3.n_layers * step.micro_batches  # every layer of Qwen3 is MoE; no pipeline
    local = QWEN3.n_experts / EP16.ep
    assert step.forecast_parts_s["overhead"] == pytest.approx(passes * (a + b * local))
    full = hw.train_step(QWEN3, H100, EP16, BATCH, SEQ, SEQ, "full", dtype="fp8", efficiency=efficiency)
    assert full.forecast_parts_s["overhead"] == pytest.approx(passes * (a + b * local) * 4 / 3)  # a third forward
    staged = _step(hw.Mesh(dp=8, pp=2, ep=8), efficiency=efficiency)
    per_stage = QWEN3.n_layers / 2 * staged.micro_batches
    assert staged.forecast_parts_s["overhead"] == pytest.approx(per_stage * (a + b * QWEN3.n_experts / 8))
    assert _step(efficiency=hw.Efficiency.at_peak()).forecast_parts_s["overhead"] == 0.0


def test_dense_models_and_xla_steps_pay_no_moe_overhead():
    dense = hw.train_step(LLAMA8, H100, hw.Mesh(dp=16), BATCH, SEQ, SEQ, "none", dtype="fp8")
    assert dense.forecast_parts_s["overhead"] == 0.0
    tpu = hw.train_step(QWEN3, hw.cluster("tpu-v5p"), hw.Mesh(fsdp=32, ep=32), BATCH, SEQ, SEQ, "full")
    assert tpu.forecast_parts_s["overhead"] == 0.0  # XLA compiles the step: no host launches between kernels
    assert _step().forecast_parts_s["overhead"] > 0.0


@pytest.mark.parametrize("name", ["moe_layer_overhead_s", "expert_overhead_s"])
def test_negative_moe_overheads_are_refused(name):
    with pytest.raises(ValueError, match=name):
        hw.Efficiency(**{name: -1e-3})


def test_the_moe_band_is_printed_with_its_runs_and_sources():
    band = hw.forecast_band("training", QWEN3, H100.chip, micro_batches=64)
    (stored,) = (r for r in hw.data.calibrated.FORECAST_ERRORS if r.kind == ("training", "MoE", "GPU", "many"))
    assert band.runs == stored.runs >= 27 and band.sources == stored.sources >= 5 and band.mean == stored.mean.value
    assert f"{100 * band.mean:.0f} %" in band.text


def test_the_fp8_grouped_gemm_speedups_are_the_geometric_means_of_the_quoted_rows():
    for width, rows in ((2048, (1.188, 1.321, 1.595, 1.440)), (8192, (1.808, 1.690, 1.637, 1.700))):
        record = efficiencies.FP8_GROUPED_GEMM_SPEEDUP[width]
        assert record.value == pytest.approx(math.prod(rows) ** 0.25, rel=1e-12)
        assert all(f"{speedup:.3f}x" in record.quoted for speedup in rows)


def test_fp8_experts_reach_the_measured_speedup_over_bf16_by_their_width():
    b200 = hw.chip("b200")
    bf16, fp8 = (b200.peak(d) * matmul_fraction(b200, d) for d in ("bf16", "fp8"))
    measured = {w: q.value for w, q in efficiencies.FP8_GROUPED_GEMM_SPEEDUP.items()}
    for width, speedup in measured.items():
        assert fp8_expert_share(b200, width) == pytest.approx(speedup * bf16 / fp8, rel=1e-12)
    halfway = (measured[2048] + measured[8192]) / 2  # 4096 is halfway in log2 of the width
    assert fp8_expert_share(b200, 4096) == pytest.approx(halfway * bf16 / fp8, rel=1e-12)
    below = measured[2048] - (measured[8192] - measured[2048]) / 2  # one halving under the narrowest measured
    assert fp8_expert_share(b200, 1024) == pytest.approx(below * bf16 / fp8, rel=1e-12)
    assert fp8_expert_share(b200, 1) == pytest.approx(bf16 / fp8, rel=1e-12)  # never slower than bf16
    assert fp8_grouped_speedup(1024) == pytest.approx(below, rel=1e-12) and fp8_grouped_speedup(1) == 1.0
    assert fp8_expert_share(b200, 2**30) == 1.0  # never faster than a dense fp8 GEMM
    with pytest.raises(ValueError, match="expert_width"):
        fp8_expert_share(b200, 0)


def test_an_fp8_step_prices_its_routed_experts_at_their_measured_share_and_nothing_else_changes():
    step, at_rate = _step(), _step(efficiency=hw.Efficiency(fp8_experts=1.0))
    share = fp8_expert_share(H100.chip, QWEN3.d_ff_expert)
    dense, routed = expert_split(QWEN3, 1.0)
    assert 0 < share < 1 and at_rate.forecast_parts_s["fp8 experts"] == 0.0
    routed_s = at_rate.forecast_parts_s["matmuls"] * routed  # the same FLOPs at the fp8 matmul rate
    assert step.forecast_parts_s["fp8 experts"] == pytest.approx(routed_s * (1 / share - 1), rel=1e-9)
    assert step.forecast_parts_s["matmuls"] == pytest.approx(at_rate.forecast_parts_s["matmuls"], rel=1e-12)
    assert step.time_s == at_rate.time_s and step.forecast_time_s > at_rate.forecast_time_s
    bf16 = hw.train_step(QWEN3, H100, EP16, BATCH, SEQ, SEQ, "none")
    dense_fp8 = hw.train_step(LLAMA8, H100, hw.Mesh(dp=8), 2**20, 4096, dtype="fp8")
    assert bf16.forecast_parts_s["fp8 experts"] == 0.0 == dense_fp8.forecast_parts_s["fp8 experts"]
    assert dense > 0


def test_the_waterfall_of_an_fp8_moe_run_shows_what_its_experts_fp8_gemms_add():
    from hwlib.viz.forecast_figures import forecast_waterfall

    runs = {run.key: run for run in hw.training_runs()}
    fp8_run, bf16_run = runs["mbridge2602-b200-deepseek-v3"], runs["moe-zoo-h100-qwen3-235b-a22b-tp4"]
    assert forecast_waterfall(fp8_run).loc["fp8 grouped GEMMs of the experts", "seconds"] > 0
    assert forecast_waterfall(bf16_run).loc["fp8 grouped GEMMs of the experts", "seconds"] == 0


@pytest.mark.parametrize("bad", [0.0, 1.5, -0.2])
def test_an_fp8_expert_share_outside_a_fraction_is_refused(bad):
    with pytest.raises(ValueError, match="Efficiency.fp8_experts"):
        hw.Efficiency(fp8_experts=bad)
