"""Optimizer and activation offload over the host link (hwlib/training/savers.py): the state leaves HBM, the copies
cost bytes / rate and hide only behind what they overlap."""

import pytest

import hwlib as hw
from hwlib.data import assumptions, vendor_host_links
from hwlib.training.savers import HOST_PART, NO_SAVERS, host_link_bytes_per_s, offload_memory, savers_of
from hwlib.training.step import STEP_PARTS

LLAMA_8B = hw.model("llama-3-8b")
NODE = hw.cluster("hgx-h100-ndr")
ARGS = (LLAMA_8B, NODE, hw.Mesh(fsdp=8), 4 * 8 * 4096, 4096, 4096)  # 4 micro-batches of one sequence per GPU
H100_PCIE = 64e9


def test_host_links_are_the_vendors_figures_per_direction():
    assert vendor_host_links.H100_PCIE.value == H100_PCIE  # 'PCIe Gen5: 128GB/s', both ways
    assert vendor_host_links.A100_PCIE.value == 32e9  # 'PCIe Gen4: 64GB/s'
    assert vendor_host_links.GH200_C2C.value == vendor_host_links.GB200_C2C.value == 450e9  # NVLink-C2C 900GB/s
    assert all(
        q.read_on == "2026-12-06" and q.quoted and q.unit == "B/s" for q in vendor_host_links.HOST_LINKS.values()
    )
    assert host_link_bytes_per_s(NODE, hw.Offload()) == H100_PCIE
    assert host_link_bytes_per_s(hw.cluster("gb200-nvl72-ndr"), hw.Offload()) == 450e9  # the system's, not the chip's
    assert host_link_bytes_per_s(NODE, hw.Offload(host_bytes_per_s=1e9)) == 1e9
    with pytest.raises(ValueError, match="offload: no host link is known for"):
        host_link_bytes_per_s(hw.cluster("tpu-v5p"), hw.Offload())


def test_optimizer_offload_moves_the_state_to_the_host_and_prices_the_copies():
    """ZeRO-Offload: gradients, fp32 master and Adam moments in host memory; each micro-batch's bf16 gradients out
    behind the backward pass, the updated bf16 weights back once, exposed (2 B a parameter each way)."""
    plain = hw.train_step(*ARGS)
    offloaded = hw.train_step(*ARGS, offload=hw.Offload())
    moved = sum(plain.memory_parts[name] for name in ("gradients", "master", "optimizer"))
    assert offloaded.host_memory_bytes == pytest.approx(moved) and plain.host_memory_bytes == 0.0
    assert all(offloaded.memory_parts[name] == 0.0 for name in ("gradients", "master", "optimizer"))
    assert offloaded.memory_parts["weights"] == plain.memory_parts["weights"]
    updated = LLAMA_8B.params() / 8  # each GPU updates its FSDP shard
    one_way = updated * 2 / H100_PCIE
    assert offloaded.comm_time_s[HOST_PART] == pytest.approx((4 + 1) * one_way, rel=1e-12)
    assert offloaded.exposed_comm_time_s[HOST_PART] == pytest.approx(one_way, rel=1e-12)  # the copy back
    assert offloaded.time_s == pytest.approx(plain.time_s + one_way, rel=1e-9)
    assert offloaded.parts_s[HOST_PART] == pytest.approx(one_way) and STEP_PARTS[-1] == HOST_PART
    assert sum(offloaded.parts_s.values()) == pytest.approx(offloaded.time_s, rel=1e-12)
    delayed = hw.train_step(*ARGS, offload=hw.Offload(delayed_update=True))  # ZeRO-Offload's DPU hides it too
    assert delayed.exposed_comm_time_s[HOST_PART] == 0.0 and delayed.time_s == pytest.approx(plain.time_s)
    zero1 = hw.train_step(LLAMA_8B, NODE, hw.Mesh(dp=8), 8 * 4096, 4096, zero=1, offload=hw.Offload())
    assert zero1.comm_time_s[HOST_PART] == pytest.approx(2 * LLAMA_8B.params() / 8 * 2 / H100_PCIE)


def test_activation_offload_keeps_two_layers_and_moves_each_micro_batch_out_and_back():
    plain = hw.train_step(*ARGS, recompute="none")
    offloaded = hw.train_step(*ARGS, recompute="none", offload=hw.Offload(optimizer=False, activations=True))
    kept = assumptions.ACTIVATION_OFFLOAD_LAYERS_ON_CHIP / LLAMA_8B.n_layers
    assert offloaded.memory_parts["activations"] == pytest.approx(plain.memory_parts["activations"] * kept)
    assert offloaded.host_memory_bytes == pytest.approx(plain.memory_parts["activations"] * (1 - kept))
    one_micro_batch = plain.memory_parts["activations"]  # one micro-batch in flight without a pipeline
    assert offloaded.comm_time_s[HOST_PART] == pytest.approx(2 * 4 * one_micro_batch / H100_PCIE, rel=1e-12)
    hidden = offloaded.comm_time_s[HOST_PART] - offloaded.exposed_comm_time_s[HOST_PART]
    assert hidden <= offloaded.compute_time_s + 1e-12  # never hides behind more than the compute


def test_offload_memory_passes_through_without_offload():
    parts = {"weights": 1.0, "gradients": 2.0, "master": 3.0, "optimizer": 4.0, "activations": 10.0, "logits": 1.0}
    assert offload_memory(parts, None, 32) == (parts, 0.0)
    left, host = offload_memory(parts, hw.Offload(activations=True), 4)
    assert host == 2 + 3 + 4 + 10 * (1 - 2 / 4) and left["activations"] == 5.0 and left["weights"] == 1.0
    assert savers_of(LLAMA_8B, None, None, None, "bf16") == NO_SAVERS


def test_bad_offloads_are_refused_by_name():
    with pytest.raises(ValueError, match="Offload offloads nothing"):
        hw.Offload(optimizer=False)
    with pytest.raises(TypeError, match="Offload.activations"):
        hw.Offload(activations=1)
    with pytest.raises(ValueError, match="Offload.host_bytes_per_s"):
        hw.Offload(host_bytes_per_s=0.0)
    with pytest.raises(ValueError, match="Offload.host_bytes_per_s"):
        hw.Offload(host_bytes_per_s=float("inf"))
    with pytest.raises(TypeError, match="offload must be an hw.Offload"):
        hw.train_step(*ARGS, offload=True)
    with pytest.raises(ValueError, match="offload: no host link"):
        hw.train_step(LLAMA_8B, hw.cluster("tpu-v5p"), hw.Mesh(fsdp=8), 8 * 4096, 4096, offload=hw.Offload())
