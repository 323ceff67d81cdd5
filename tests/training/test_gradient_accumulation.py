"""Each micro-batch's weight gradients accumulated in fp32 (hwlib/training/mesh.py, step.py), and the MoE overheads
of the busiest pipeline stage, paid per expert in fp8 steps only (step.py's ``moe_passes``)."""

from __future__ import annotations

import math

import pytest

import hwlib as hw
from hwlib.data.assumptions import GRADIENT_ACCUMULATOR_BYTES
from hwlib.pricing import Part, Work, price
from hwlib.training.mesh import accumulator_bytes, expert_split, split_params
from hwlib.training.step import moe_passes

H100 = hw.cluster("hgx-h100-ndr")
LLAMA8, QWEN3, DEEPSEEK = hw.model("llama-3-8b"), hw.model("qwen3-30b-a3b"), hw.model("deepseek-v3")
EXACT = hw.Efficiency(matmul=1.0, hbm=1.0, quantization=False, unmodelled_share=0.0, elementwise_passes=0.0)


def test_the_accumulator_moves_eight_bytes_per_local_weight_per_micro_batch():
    assert GRADIENT_ACCUMULATOR_BYTES == 8.0  # an fp32 gradient read and written back
    mesh = hw.Mesh(dp=8, tp=2, pp=4, ep=8)
    dense, experts = split_params(DEEPSEEK)
    assert accumulator_bytes(DEEPSEEK, mesh, 16) == pytest.approx(
        (8.0 * 16 * dense / (2 * 4), 8.0 * 16 * experts / (8 * 2 * 4))
    )
    assert accumulator_bytes(LLAMA8, hw.Mesh(dp=8), 3) == (8.0 * 3 * LLAMA8.params(), 0.0)


def test_a_small_micro_batch_waits_on_its_accumulator_and_a_large_one_does_not():
    """Llama 3 8B on 8 H100s at the peak rate and bandwidth: micro-batches of 256 tokens do 2 x 256 FLOPs per 8
    bytes of accumulator, under the H100's 295 FLOPs a byte, so each weight-gradient GEMM takes its bytes' time;
    micro-batches of 8,192 tokens are compute-bound and wait on nothing."""
    chip = H100.chip
    tokens, per_micro = 8 * 64 * 256, 256
    step = hw.train_step(LLAMA8, H100, hw.Mesh(dp=8), tokens, 256, per_micro, "none", efficiency=EXACT)
    micro_batches = tokens // 8 // per_micro
    weight_grad_flops = float(LLAMA8.table().weight_flops(tokens)) / 8
    waits = 8.0 * LLAMA8.params() * micro_batches / chip.hbm_bytes_per_s - weight_grad_flops / chip.peak("bf16")
    assert waits > 0 and step.forecast_parts_s["gradient accumulation"] == pytest.approx(waits, rel=1e-9)
    large = hw.train_step(LLAMA8, H100, hw.Mesh(dp=8), 8 * 8 * 8192, 8192, 8192, "none", efficiency=EXACT)
    assert large.forecast_parts_s["gradient accumulation"] == 0.0
    assert sum(step.forecast_parts_s.values()) == pytest.approx(step.forecast_time_s)


def test_a_frozen_base_accumulates_no_weight_gradients():
    lora = hw.train_step(
        LLAMA8, H100, hw.Mesh(dp=8), 8 * 64 * 256, 256, 256, "none", efficiency=EXACT, adapter=hw.LoRA(rank=16)
    )
    assert lora.forecast_parts_s["gradient accumulation"] == 0.0


def test_the_pricer_reports_what_a_parts_bytes_add_beyond_its_flops():
    chip = H100.chip
    flops, n_bytes = 1e12, 8e9  # 1.0 ms of FLOPs, 2.4 ms of bytes at the H100's peak and bandwidth
    work = Work(parts={"slow": Part(flops, n_bytes), "fast": Part(flops, 0.0)})
    excess = price(work, chip, "bf16", EXACT).forecast_memory_excess_s
    assert excess["slow"] == pytest.approx(n_bytes / chip.hbm_bytes_per_s - flops / chip.peak("bf16"))
    assert excess["fast"] == 0.0


def test_moe_overheads_are_the_busiest_stages_and_per_expert_only_in_fp8():
    mesh = hw.Mesh(pp=16, dp=16, ep=8)
    n_moe = DEEPSEEK.table().n_moe_layers
    assert n_moe == 58 and math.ceil(n_moe / 16) == 4  # 3.625 on average, but a stage holds whole layers
    fp8 = moe_passes(DEEPSEEK, mesh, 10, "none", "fp8")
    assert fp8 == {"moe_layer_passes": 4 * 10, "expert_passes": 4 * 10 * 256 / 8}
    assert moe_passes(DEEPSEEK, mesh, 10, "full", "nvfp4")["expert_passes"] == pytest.approx(4 * 10 * 32 * 4 / 3)
    bf16 = moe_passes(DEEPSEEK, mesh, 10, "none", "bf16")
    assert bf16 == {"moe_layer_passes": 40, "expert_passes": 0.0}
    assert moe_passes(QWEN3, hw.Mesh(dp=8, ep=8), 3, "none", "fp8")["moe_layer_passes"] == 48 * 3


def test_a_bf16_moe_step_pays_the_layer_overhead_only():
    a, b = 2e-3, 0.25e-3
    efficiency = hw.Efficiency(moe_layer_overhead_s=a, expert_overhead_s=b)
    args = (QWEN3, H100, hw.Mesh(dp=16, ep=16), 1024 * 4096, 4096, 4096, "none")
    bf16 = hw.train_step(*args, dtype="bf16", efficiency=efficiency)
    fp8 = hw.train_step(*args, dtype="fp8", efficiency=efficiency)
    passes = QWEN3.n_layers * bf16.micro_batches
    assert bf16.forecast_parts_s["overhead"] == pytest.approx(passes * a)
    assert fp8.forecast_parts_s["overhead"] == pytest.approx(passes * (a + b * QWEN3.n_experts / 16))


def test_local_experts_wait_on_their_own_accumulators():
    """Qwen3 30B-A3B on 8 H100s with ep 8: its 16 local experts' weights take 16 / 128 of the experts' and
    every micro-batch of 256 tokens accumulates into all of them: each part waits its own bytes less its FLOPs."""
    chip, mesh = H100.chip, hw.Mesh(dp=8, ep=8)
    tokens = 8 * 64 * 256
    step = hw.train_step(QWEN3, H100, mesh, tokens, 256, 256, "none", efficiency=EXACT)
    dense_share, expert_share = expert_split(QWEN3, 1.0)
    weight_grad_flops = float(QWEN3.table().weight_flops(tokens)) / 8
    dense, experts = split_params(QWEN3)
    bandwidth, peak = chip.hbm_bytes_per_s, chip.peak("bf16")
    waits = 8.0 * 64 * dense / bandwidth - weight_grad_flops * dense_share / peak
    waits += 8.0 * 64 * experts / 8 / bandwidth - weight_grad_flops * expert_share / peak
    assert step.forecast_parts_s["gradient accumulation"] == pytest.approx(waits, rel=1e-9)
