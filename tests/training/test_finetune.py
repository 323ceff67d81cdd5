"""LoRA and QLoRA as options of hw.train_step (hwlib/training/finetune.py): a frozen base at its dtype, adapters
and their state, no weight gradients for the base; QLoRA of a 65B model on one 48 GB GPU, LoRA of Llama 3 70B on
one 8 x H100 node."""

import dataclasses

import pytest

import hwlib as hw
from hwlib.data import assumptions, finetuning, vendor_host_links
from hwlib.data.records import TRAINING_PARTS, Cluster
from hwlib.efficiency import resolve
from hwlib.pricing import Collective
from hwlib.training.finetune import (
    LORA_TARGETS,
    adapter_params,
    base_linear_bytes,
    dequantize_bytes,
    gathered_bytes_per_param,
    lora_state,
    rescale_collectives,
    step_flops,
    trained_share,
)
from hwlib.training.fp8 import linear_params

LLAMA_70B, LLAMA_65B, LLAMA_8B = hw.model("llama-3-70b"), hw.model("llama-65b"), hw.model("llama-3-8b")
NODE = hw.cluster("hgx-h100-ndr")
QLORA = hw.LoRA(rank=int(finetuning.QLORA_RANK.value), targets="all-linear", base_dtype="nf4")
QLORA_RECIPE = "bf16_grads_fp32_moments"  # qlora.py: LoRA layers cast to bf16, paged_adamw_32bit's fp32 moments
QLORA_SEQ = int(finetuning.QLORA_SEQUENCE_TOKENS.value)  # 16 + 512 tokens, Guanaco 65B's longest example


def _one_48gb_gpu() -> Cluster:
    """One GPU of 48 GB ('a single 48GB GPU', QLoRA's abstract), an A100's compute and bandwidth: only the capacity
    enters the memory check."""
    a100 = hw.chip("a100-80gb")
    gpu = hw.custom_chip(
        "48 GB GPU", peak_flops_per_s=a100.peak("bf16"), hbm_bytes_per_s=a100.hbm_bytes_per_s, hbm_bytes=48e9
    )
    return dataclasses.replace(hw.cluster("hgx-a100-hdr"), chip=gpu)


def test_adapters_count_r_times_d_in_plus_d_out_per_targeted_matrix():
    # Llama 3 70B, r = 16: q and o 16 (8192 + 8192), k and v 16 (8192 + 1024), gate, up, down 16 (8192 + 28672)
    per_layer = 2 * 16 * 16384 + 2 * 16 * 9216 + 3 * 16 * 36864
    assert adapter_params(LLAMA_70B, hw.LoRA(rank=16)) == 80 * per_layer == 207_093_760
    assert adapter_params(LLAMA_70B, hw.LoRA(rank=16, targets="qv")) == 80 * 16 * (16384 + 9216)
    assert adapter_params(LLAMA_70B, hw.LoRA(rank=16, targets="attention")) == 80 * 16 * 2 * (16384 + 9216)
    # QLoRA's Guanaco 65B: r = 64 on every linear layer of LLaMA 65B (d 8192, d_ff 22016): 0.80 billion
    assert adapter_params(LLAMA_65B, QLORA) == 80 * (4 * 64 * 16384 + 3 * 64 * 30208) == 799_539_200
    assert set(LORA_TARGETS) == {"all-linear", "attention", "qv"}


def test_the_base_is_stored_at_its_dtype():
    linear = linear_params(LLAMA_65B)
    assert linear == 80 * (4 * 8192**2 + 3 * 8192 * 22016)  # the blocks' linear layers, no embedding or head
    assert base_linear_bytes(LLAMA_65B, hw.LoRA(base_dtype="bf16")) == 2 * linear
    # NF4 with double quantization: 4 + 8/64 + 32/(64 * 256) = 4.127 bits (QLoRA, Sec. 3)
    assert finetuning.NF4_BITS_PER_PARAM.value == pytest.approx(4.127, abs=5e-4)
    assert base_linear_bytes(LLAMA_65B, QLORA) == pytest.approx(linear * 4.126953125 / 8, rel=1e-12)
    # int8: a byte a weight and one fp32 constant per row (sum of d_out over a layer's 7 matrices: 84,992)
    rows = 80 * (4 * 8192 + 2 * 22016 + 8192)
    assert base_linear_bytes(LLAMA_65B, hw.LoRA(base_dtype="int8")) == linear + 4 * rows


def test_only_the_adapters_carry_gradients_master_and_optimizer_state():
    adapters = adapter_params(LLAMA_65B, QLORA)
    state = lora_state(LLAMA_65B, QLORA, QLORA_RECIPE)
    rest = LLAMA_65B.params() - linear_params(LLAMA_65B)  # embedding, head, norms in bf16
    assert state["weights"] == pytest.approx(base_linear_bytes(LLAMA_65B, QLORA) + 2 * rest + 2 * adapters)
    assert state["gradients"] == 2 * adapters and state["master"] == 0 and state["optimizer"] == 8 * adapters
    mixed = lora_state(LLAMA_70B, hw.LoRA(), "zero_mixed_adam")
    adapters_70b = adapter_params(LLAMA_70B, hw.LoRA())
    assert (mixed["gradients"], mixed["master"], mixed["optimizer"]) == (
        2 * adapters_70b,
        4 * adapters_70b,
        8 * adapters_70b,
    )
    assert trained_share(LLAMA_70B, None) == 1.0
    assert trained_share(LLAMA_70B, hw.LoRA()) == adapters_70b / LLAMA_70B.params() < 0.003


def test_the_backward_pass_drops_the_bases_weight_gradients():
    """4 P a token through a frozen base (forward and input gradients) instead of full training's 6 P; the adapters
    take their own 6 P_a; attention's three passes are unchanged."""
    tokens, attention = 8192.0, 3.0e15
    p_matmul = LLAMA_70B.matmul_params(active=True)
    p_adapter = adapter_params(LLAMA_70B, hw.LoRA())
    full, _ = step_flops(LLAMA_70B, tokens, attention, "none", None)
    lora, recomputed = step_flops(LLAMA_70B, tokens, attention, "none", hw.LoRA())
    assert full == pytest.approx(6 * p_matmul * tokens + 3 * attention, rel=1e-12)
    assert lora == pytest.approx(4 * p_matmul * tokens + 6 * p_adapter * tokens + 3 * attention, rel=1e-12)
    assert recomputed == 0.0
    assert step_flops(LLAMA_70B, tokens, attention, "selective", hw.LoRA())[1] == attention
    full_again = step_flops(LLAMA_70B, tokens, attention, "full", hw.LoRA())[1]
    assert full_again == pytest.approx(2 * p_matmul * tokens + 2 * p_adapter * tokens + attention, rel=1e-12)
    # through the step: MFU counts LoRA's FLOPs, the hardware utilization the recomputed ones too
    step = hw.train_step(LLAMA_70B, NODE, hw.Mesh(fsdp=8), 8 * 8192, 8192, 8192, "full", adapter=hw.LoRA())
    peak = NODE.chip.peak("bf16")
    needed = step.mfu * 8 * peak * step.time_s
    seq_attention = 8 * float(LLAMA_70B.table().attention_flops(8192, 0))
    assert needed == pytest.approx(step_flops(LLAMA_70B, 8 * 8192, seq_attention, "full", hw.LoRA())[0], rel=1e-9)
    dense = hw.train_step(LLAMA_70B, NODE, hw.Mesh(fsdp=8), 8 * 8192, 8192, 8192, "full")
    assert step.compute_time_s < dense.compute_time_s


def test_a_quantized_base_is_dequantized_for_each_pass():
    """Each micro-batch's forward and backward (and a full recomputation's forward) read the base at its dtype and
    write it in bf16: a part of HBM bytes, in the forecast's elementwise time."""
    linear = linear_params(LLAMA_65B)
    per_pass = base_linear_bytes(LLAMA_65B, QLORA) + 2 * linear
    assert dequantize_bytes(LLAMA_65B, QLORA, 1.0, 4, "full") == pytest.approx(4 * 3 * per_pass)
    assert dequantize_bytes(LLAMA_65B, QLORA, 0.5, 1, "selective") == pytest.approx(2 * per_pass / 2)
    assert dequantize_bytes(LLAMA_65B, hw.LoRA(rank=64), 1.0, 4, "full") == 0.0  # a bf16 base is used as it is
    cluster, args = _one_48gb_gpu(), (LLAMA_65B, _one_48gb_gpu(), hw.Mesh(), QLORA_SEQ, QLORA_SEQ)
    nf4 = hw.train_step(*args, recompute="full", recipe=QLORA_RECIPE, adapter=QLORA)
    bf16 = hw.train_step(
        *args, recompute="full", recipe=QLORA_RECIPE, adapter=dataclasses.replace(QLORA, base_dtype="bf16")
    )
    eff = resolve(cluster.chip, "bf16", hw.Efficiency())
    extra = nf4.forecast_parts_s["elementwise"] - bf16.forecast_parts_s["elementwise"]
    assert extra == pytest.approx(3 * per_pass / (cluster.chip.hbm_bytes_per_s * eff.hbm), rel=1e-9)
    assert nf4.mfu == pytest.approx(bf16.mfu * bf16.time_s / nf4.time_s)  # the same FLOPs


def test_qlora_of_a_65b_model_fits_one_48_gb_gpu():
    """Dettmers et al. 2023: 'finetune a 65B parameter model on a single 48GB GPU'. With its memory settings (NF4 and
    double quantization, r = 64 on every linear layer, bf16 adapters with 32-bit Adam, gradient checkpointing, one
    sequence of 528 tokens) the step needs 45.0 GB: the whole card holds it (a run that did fit, as a bound's
    BOUND_HBM_FRACTION), hwlib's default 80 % does not. QLoRA's paged optimizer moves the optimizer state to the
    host under pressure; with ZeRO-Offload's split (gradients and optimizer state on the host) the step needs
    37.0 GB, within 80 % too. An int8 base needs 76 GB, a bf16 base (plain LoRA) 141 GB."""
    cluster = _one_48gb_gpu()
    args = (LLAMA_65B, cluster, hw.Mesh(), QLORA_SEQ, QLORA_SEQ)
    options = dict(recompute="full", recipe=QLORA_RECIPE, adapter=QLORA)
    step = hw.train_step(*args, usable_fraction=assumptions.BOUND_HBM_FRACTION, **options)
    parts = step.memory_parts
    assert step.fits and step.memory_per_chip_bytes < 48e9
    assert step.memory_per_chip_bytes == pytest.approx(45.01e9, rel=1e-3)
    assert parts["weights"] == pytest.approx(36.06e9, rel=1e-3)  # 33.41 GB of NF4, 1.05 GB bf16 ends, 1.60 adapters
    assert parts["optimizer"] == 8 * 799_539_200 and parts["master"] == 0
    one_layer = hw.activation_bytes(QLORA_SEQ, 1, LLAMA_65B, flash_attention=True)  # recomputed in its backward
    kept = hw.activation_bytes(QLORA_SEQ, 1, LLAMA_65B, recompute="full", flash_attention=True)
    assert kept == 2 * QLORA_SEQ * 8192  # gradient checkpointing keeps each layer's input
    assert parts["activations"] == 80 * kept + one_layer - kept
    default = hw.train_step(*args, **options)
    assert not default.fits and default.usable_bytes == 0.8 * 48e9
    paged = hw.train_step(*args, offload=hw.Offload(host_bytes_per_s=vendor_host_links.A100_PCIE.value), **options)
    assert paged.fits and paged.memory_per_chip_bytes == pytest.approx(37.02e9, rel=1e-3)
    assert paged.host_memory_bytes == pytest.approx(10 * 799_539_200)  # bf16 gradients, fp32 moments
    unquantized = hw.train_step(*args, **{**options, "adapter": dataclasses.replace(QLORA, base_dtype="bf16")})
    assert not unquantized.fits and unquantized.memory_per_chip_bytes == pytest.approx(141.12e9, rel=1e-3)
    int8 = hw.train_step(
        *args, usable_fraction=1.0, **{**options, "adapter": dataclasses.replace(QLORA, base_dtype="int8")}
    )
    assert not int8.fits and int8.memory_per_chip_bytes == pytest.approx(76.39e9, rel=1e-3)


def test_lora_of_llama_3_70b_fits_one_8_x_h100_node():
    """Llama 3 70B, LoRA r = 16 on every linear layer, a bf16 base, one 8K sequence per GPU: FSDP over the node's 8
    GPUs with full recomputation needs 39 GB per GPU (17.7 GB of the base's shard), tensor parallelism with
    selective recomputation 42 GB; full fine-tuning needs 143 GB or more per GPU on either and fits neither."""
    for mesh, recompute, gb in ((hw.Mesh(fsdp=8), "full", 39.31), (hw.Mesh(tp=8), "selective", 41.58)):
        lora = hw.train_step(LLAMA_70B, NODE, mesh, 8 * 8192, 8192, 8192, recompute, adapter=hw.LoRA(rank=16))
        full = hw.train_step(LLAMA_70B, NODE, mesh, 8 * 8192, 8192, 8192, recompute)
        assert lora.fits and lora.memory_per_chip_bytes == pytest.approx(gb * 1e9, rel=2e-3), mesh
        assert not full.fits and full.memory_per_chip_bytes > 143e9
        assert lora.memory_parts["weights"] == pytest.approx((2 * LLAMA_70B.params() + 2 * 207_093_760) / 8)
        trained = sum(lora.memory_parts[name] for name in ("gradients", "master", "optimizer"))
        full_trained = sum(full.memory_parts[name] for name in ("gradients", "master", "optimizer"))
        assert trained == pytest.approx(14 * 207_093_760 / 8) and trained < full_trained / 300  # LoRA's is tiny


def test_lora_reduces_the_adapters_gradients_and_gathers_the_base_at_its_dtype():
    p = LLAMA_65B.params()
    rest = p - linear_params(LLAMA_65B)
    adapters = adapter_params(LLAMA_65B, QLORA)
    expected = (base_linear_bytes(LLAMA_65B, QLORA) + 2 * rest + 2 * adapters) / p
    assert gathered_bytes_per_param(LLAMA_65B, QLORA, None) == pytest.approx(expected)
    assert expected < 0.6
    assert gathered_bytes_per_param(LLAMA_65B, None, None) == 2.0
    found = [
        Collective("fsdp", "all-gather", 100.0, None),
        Collective("fsdp", "reduce-scatter", 100.0, None),
        Collective("dp", "all-reduce", 100.0, None),
        Collective("tp", "all-reduce", 100.0, None),
    ]
    scaled = rescale_collectives(found, ("fsdp", "dp"), "fsdp", 0.01, 0.25)
    assert [c.n_bytes for c in scaled] == [25.0, 1.0, 1.0, 100.0]
    lora = hw.train_step(LLAMA_8B, NODE, hw.Mesh(dp=8), 8 * 4096, 4096, adapter=hw.LoRA())
    full = hw.train_step(LLAMA_8B, NODE, hw.Mesh(dp=8), 8 * 4096, 4096)
    assert lora.comm_time_s["dp all-reduce"] < full.comm_time_s["dp all-reduce"] / 50


def test_parts_still_sum_to_the_step():
    step = hw.train_step(LLAMA_65B, _one_48gb_gpu(), hw.Mesh(), QLORA_SEQ, QLORA_SEQ, recompute="full", adapter=QLORA)
    assert sum(step.parts_s.values()) == pytest.approx(step.time_s, rel=1e-12)
    assert sum(step.forecast_parts_s.values()) == pytest.approx(step.forecast_time_s, rel=1e-12)
    at_peak = hw.train_step(
        LLAMA_65B,
        _one_48gb_gpu(),
        hw.Mesh(),
        QLORA_SEQ,
        QLORA_SEQ,
        recompute="full",
        adapter=QLORA,
        efficiency=hw.Efficiency.at_peak(),
    )
    assert at_peak.forecast_time_s == pytest.approx(at_peak.time_s, rel=1e-9)


def test_bad_adapters_are_refused_by_name():
    with pytest.raises(ValueError, match="LoRA.rank"):
        hw.LoRA(rank=0)
    with pytest.raises(ValueError, match="LoRA.rank"):
        hw.LoRA(rank=True)
    with pytest.raises(ValueError, match="LoRA.targets"):
        hw.LoRA(targets="mlp")
    with pytest.raises(ValueError, match="LoRA.base_dtype"):
        hw.LoRA(base_dtype="fp4")
    with pytest.raises(TypeError, match="adapter"):
        hw.train_step(LLAMA_8B, NODE, hw.Mesh(fsdp=8), 8 * 4096, 4096, adapter="lora")
    with pytest.raises(ValueError, match="adapter: LoRA is modelled for dense"):
        hw.train_step(hw.model("mixtral-8x7b"), NODE, hw.Mesh(fsdp=8), 8 * 4096, 4096, adapter=hw.LoRA())
    with pytest.raises(ValueError, match="adapter: a nf4 base"):
        hw.train_step(LLAMA_8B, NODE, hw.Mesh(fsdp=8), 8 * 4096, 4096, dtype="fp8", adapter=QLORA)
    assert set(TRAINING_PARTS) == set(lora_state(LLAMA_8B, hw.LoRA(), "zero_mixed_adam"))
