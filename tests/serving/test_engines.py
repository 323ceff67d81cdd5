"""Engine profiles (hwlib/data/serving_engines.py): each engine's documented defaults by chip, its KV cache's share
of memory, and simulate_serving(engine=...) running them and naming them."""

from __future__ import annotations

import dataclasses

import pytest

import hwlib as hw
from hwlib.data import efficiencies
from hwlib.data.records.engine_profile import EngineProfile, EngineTier
from hwlib.data.serving_engines import ENGINE_PROFILES, GENERIC, SGLANG, TENSORRT_LLM, VLLM
from hwlib.units import GiB

H100, H200, B200, A100 = (hw.chip(key) for key in ("H100-SXM", "H200", "B200", "A100-SXM-80GB"))
LLAMA70, LLAMA8 = hw.model("llama-3-70b"), hw.model("llama-3-8b")


@pytest.mark.parametrize(
    ("profile", "chip", "limits"),
    [
        (VLLM, H100, (1024, 8192)),
        (VLLM, H200, (1024, 8192)),
        (VLLM, A100, (256, 2048)),  # at least 70 GiB, but an A100: the small tier
        (SGLANG, H100, (2048, 8192)),
        (SGLANG, H200, (2048, 8192)),
        (SGLANG, B200, (2048, 16384)),
        (TENSORRT_LLM, B200, (2048, 8192)),
        (GENERIC, H100, (256, 8192)),
    ],
)
def test_each_engine_sets_its_limits_by_the_chips_memory_and_name(profile, chip, limits):
    tier = profile.tier(chip)
    assert (tier.max_sequences, tier.max_batch_tokens) == limits


def test_each_engine_gives_its_cache_its_own_share_of_memory():
    weights = float(LLAMA70.weight_bytes("fp8"))
    memory = 8 * H100.capacity_bytes
    free = memory - weights
    assert VLLM.kv_fraction(H100, 8, weights) == pytest.approx((0.9 * memory - weights) / free)
    assert SGLANG.kv_fraction(H100, 8, weights) == pytest.approx((memory - 8 * 13.0 * GiB - weights) / free)
    assert TENSORRT_LLM.kv_fraction(H100, 8, weights) == 0.9
    assert GENERIC.kv_fraction(H100, 8, weights) == efficiencies.KV_CACHE_FRACTION.value
    assert VLLM.kv_fraction(H100, 1, float(LLAMA70.weight_bytes("bf16"))) == 0.0  # the weights do not fit


def test_simulate_serving_runs_an_engines_defaults_and_names_them():
    no_front_end = hw.Efficiency(request_overhead_s=0.0)  # the generic engine has none
    common = dict(prompt_len=1024, output_len=64, n_requests=64, concurrency=32, precision="fp8")
    named = dict(common, efficiency=no_front_end)
    vllm = hw.simulate_serving(LLAMA70, hw.cluster("hgx-h100-ndr"), 8, engine="vllm", **named)
    assert vllm.engine == "vLLM 0.11.0 defaults"
    chunked = hw.simulate_serving(
        LLAMA70, hw.cluster("hgx-h100-ndr"), 8, max_sequences=1024, chunked_prefill=True, **common
    )
    assert chunked.engine == "hwlib's generic engine, max_sequences=1,024, chunked_prefill=True"
    assert (vllm.step_tokens == chunked.step_tokens).all()  # the same schedule: vLLM's limits and chunking
    sglang = hw.simulate_serving(LLAMA70, hw.cluster("hgx-h100-ndr"), 8, engine="sglang", **named)
    whole = hw.simulate_serving(LLAMA70, hw.cluster("hgx-h100-ndr"), 8, max_sequences=2048, **common)
    assert sglang.engine == "SGLang 0.5.3 defaults" and (sglang.step_tokens == whole.step_tokens).all()
    assert sglang.percentile("ttft", 50) > vllm.percentile("ttft", 50)  # prompts wait for steps of their own
    trt = hw.simulate_serving(LLAMA70, hw.cluster("hgx-h100-ndr"), 8, engine="trtllm", **named)
    mixed = hw.simulate_serving(
        LLAMA70, hw.cluster("hgx-h100-ndr"), 8, max_sequences=2048, chunked_prefill=True, reserve_output=True, **common
    )
    assert trt.engine == "TensorRT-LLM 1.0 defaults" and (trt.step_tokens == mixed.step_tokens).all()
    unchunked = hw.simulate_serving(
        LLAMA70, hw.cluster("hgx-h100-ndr"), 8, engine="vllm", chunked_prefill=False, max_sequences=2048, **named
    )
    assert (unchunked.step_tokens == whole.step_tokens).all()  # explicit options beat the profile
    assert unchunked.engine == "vLLM 0.11.0 defaults, max_sequences=2,048, chunked_prefill=False"  # and are named


def test_an_engines_name_lists_only_the_settings_given_that_differ_from_its_defaults():
    run = dict(prompt_len=1000, output_len=8, n_requests=4, efficiency=hw.Efficiency(request_overhead_s=0.0))
    h100 = hw.chip("H100-SXM")
    same = hw.simulate_serving(LLAMA70, h100, 4, engine="trtllm-0.11", max_batch_tokens=8192, **run)
    assert same.engine == "TensorRT-LLM 0.11 defaults"  # 0.11's own budget, given again
    every = hw.simulate_serving(LLAMA70, h100, 4, engine="sglang", recv_interval=1, **run)
    assert every.engine == "SGLang 0.5.3 defaults"
    rarely = hw.simulate_serving(LLAMA70, h100, 4, engine="sglang", recv_interval=10, **run)
    assert rarely.engine == "SGLang 0.5.3 defaults, recv_interval=10"
    wider = hw.simulate_serving(LLAMA70, h100, 4, engine="trtllm-0.11", max_batch_tokens=35_000, **run)
    assert wider.engine == "TensorRT-LLM 0.11 defaults, max_batch_tokens=35,000"
    kept = hw.simulate_serving(LLAMA70, h100, 4, engine="trtllm", reserve_output=False, **run)
    assert kept.engine == "TensorRT-LLM 1.0 defaults, reserve_output=False"


def test_an_engines_cache_share_sets_when_requests_must_wait():
    # Llama 3 8B in bf16 on one H100, 2,000 requests of 4,096 + 4,096 tokens at once: the cache binds
    common = dict(prompt_len=4096, output_len=4096, n_requests=300, reserve_output=True, max_sequences=1024)
    small = hw.simulate_serving(LLAMA8, H100, engine="sglang", **common)
    large = hw.simulate_serving(LLAMA8, H100, engine="vllm", chunked_prefill=False, **common)
    assert small.step_sequences.max() < large.step_sequences.max()
    share = hw.Efficiency(kv_fraction=0.5)
    given = hw.simulate_serving(LLAMA8, H100, engine="vllm", chunked_prefill=False, efficiency=share, **common)
    assert given.step_sequences.max() < small.step_sequences.max()  # an explicit share beats the profile


def test_bad_engines_are_refused_with_the_choices():
    with pytest.raises(ValueError, match="engine must be one of .*'vllm'.*got 'tgi'"):
        hw.simulate_serving(LLAMA8, H100, engine="tgi")
    with pytest.raises(ValueError, match="do not fit on 1 x H100-SXM with room for a KV cache"):
        hw.simulate_serving(LLAMA70, H100, engine="vllm")
    with pytest.raises(ValueError, match="memory_rule"):
        dataclasses.replace(VLLM, memory_rule="all")
    with pytest.raises(ValueError, match="min_memory_gib=0"):
        dataclasses.replace(VLLM, tiers=(EngineTier(70, 1024, 8192),))


def test_every_profile_cites_its_source_and_version():
    for key, profile in ENGINE_PROFILES.items():
        assert isinstance(profile, EngineProfile) and profile.key == key and profile.source
        assert profile.version or key == "hwlib"


def test_a_named_engine_adds_its_front_ends_time_to_each_request(fixed_front_end):
    overhead = hw.data.calibrated.REQUEST_OVERHEAD_S.value
    alone = dict(prompt_len=512, output_len=16, n_requests=8, concurrency=1)
    engine = hw.simulate_serving(LLAMA8, H100, **alone)
    server = hw.simulate_serving(LLAMA8, H100, engine="vllm", **alone)
    assert server.ttft_s == pytest.approx(engine.ttft_s + overhead)  # one client: the engine waits for nothing else
    assert server.latency_s == pytest.approx(engine.latency_s + overhead)
    given = hw.simulate_serving(LLAMA8, H100, efficiency=hw.Efficiency(request_overhead_s=0.02), **alone)
    assert given.ttft_s == pytest.approx(engine.ttft_s + 0.02)  # an explicit overhead applies to any engine
    bound = hw.simulate_serving(LLAMA8, H100, engine="vllm", estimate="bound", **alone)
    unbounded = hw.simulate_serving(LLAMA8, H100, estimate="bound", **alone)
    assert bound.ttft_s == pytest.approx(unbounded.ttft_s)  # the bound has no front end
    with pytest.raises(ValueError, match="request_overhead_s"):
        hw.Efficiency(request_overhead_s=-1e-3)


def test_a_profile_refuses_what_is_not_a_chip():
    with pytest.raises(TypeError):
        VLLM.tier("H100")
    with pytest.raises(ValueError, match="n_chips"):
        VLLM.kv_fraction(H100, 0, 1e9)
