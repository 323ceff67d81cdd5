"""hw.inference_step, hw.max_batch, hw.serving_curve: one inference step of a ModelShape, as a range of times."""

import numpy as np
import pytest

import hwlib as hw

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
    one, eight = hw.inference_step(LLAMA70, H100, 16, 2048), hw.inference_step(LLAMA70, H100, 16, 2048, n_chips=8)
    assert eight.flops == one.flops and eight.bytes == one.bytes
    assert eight.comm_time_s > 0
    assert eight.time_s == pytest.approx(one.time_s / 8 + eight.comm_time_s)
    # 2 ring all-reduces per layer of 16 tokens x d bf16 over NVLink 4 (450 GB/s per direction)
    message = 16 * 8192 * 2
    assert eight.comm_time_s == pytest.approx(2 * 80 * 2 * message * 7 / 8 / 450e9)


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
    with pytest.raises(ValueError, match="has no interconnect"):
        hw.inference_step(LLAMA70, hw.chip("v4"), 1, 1, n_chips=4)
