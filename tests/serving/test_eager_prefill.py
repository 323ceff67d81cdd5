"""A prompt's step launched from the host (``EngineProfile.eager_prefill``): each MoE layer adds
``Efficiency.moe_layer_overhead_s`` to a forecast step that takes prompt tokens, and nothing else changes."""

from __future__ import annotations

import numpy as np
import pytest

import hwlib as hw
from hwlib.data.serving_engines import ENGINE_PROFILES
from hwlib.efficiency import Efficiency
from hwlib.precision import as_precision
from hwlib.serving.engine import Engine, Priced

TINY = {
    "model_type": "llama",
    "hidden_size": 64,
    "num_hidden_layers": 3,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 128,
    "vocab_size": 256,
}
DENSE = hw.ModelShape.from_hf_config(TINY, key="tiny-llama-3")
MOE = hw.ModelShape.from_hf_config(
    {**TINY, "model_type": "mixtral", "num_local_experts": 4, "num_experts_per_tok": 2}, key="tiny-mixtral-3"
)
CHIP = hw.custom_chip("toy", peak_flops_per_s=4e9, hbm_bytes_per_s=1e9, hbm_bytes=1e7)
BF16 = as_precision("bf16")
HOST_S = 1e-3


def priced(model, eager, estimate="forecast", overhead=HOST_S):
    options = dict(
        expert_parallel=False,
        efficiency=Efficiency(moe_layer_overhead_s=overhead),
        estimate=estimate,
        eager_prefill=eager,
    )
    return Priced(model, CHIP, None, 1, BF16, options, 64)


def step(target, new, context):
    new, context = np.array(new), np.array(context)
    return float(target.step_s(int(new.sum()), new.size, new, context))


def test_the_moe_model_has_a_moe_layer_each_layer():
    assert MOE.table().n_moe_layers == 3 and DENSE.table().n_moe_layers == 0


@pytest.mark.parametrize("new", [[5, 1], [9], [2, 1, 1]])
def test_a_forecast_step_that_takes_prompt_tokens_adds_each_moe_layers_host_time(new):
    """3 MoE layers x 1 ms, whether the prompt is alone or beside decodes (a chunked step)."""
    context = [0] + [7] * (len(new) - 1)
    added = step(priced(MOE, True), new, context) - step(priced(MOE, False), new, context)
    assert added == pytest.approx(3 * HOST_S, rel=1e-9)


def test_the_host_time_is_the_efficiencys_moe_layer_overhead():
    twice = step(priced(MOE, True, overhead=2 * HOST_S), [5], [0]) - step(priced(MOE, False), [5], [0])
    assert twice == pytest.approx(6 * HOST_S, rel=1e-9)


def test_a_decode_step_replays_a_graph_and_adds_nothing():
    new, context = [1, 1, 1], [4, 9, 20]
    assert step(priced(MOE, True), new, context) == step(priced(MOE, False), new, context)
    np.testing.assert_array_equal(
        priced(MOE, True).decode_s(np.array(context), 3), priced(MOE, False).decode_s(np.array(context), 3)
    )


def test_a_dense_model_and_the_bound_add_nothing():
    assert step(priced(DENSE, True), [5], [0]) == step(priced(DENSE, False), [5], [0])
    assert step(priced(MOE, True, "bound"), [5], [0]) == step(priced(MOE, False, "bound"), [5], [0])


def test_a_speculative_engine_verifies_its_drafts_in_a_graph():
    """With k = 2 drafts a decode takes 3 tokens in a captured graph; a prompt's step is still launched eagerly."""
    drafter = hw.ModelShape.from_hf_config({**TINY, "num_hidden_layers": 1}, key="tiny-drafter-1")
    spec = hw.Speculation(2, 0.5, drafter)
    options = dict(expert_parallel=False, efficiency=Efficiency(moe_layer_overhead_s=HOST_S), estimate="forecast")
    engines = [
        Engine(MOE, CHIP, 1, BF16, {**options, "eager_prefill": eager}, 64, 8, 16, False, spec, False)
        for eager in (True, False)
    ]
    context = np.array([10, 20])
    verify = [engine.step_s(6, 2, np.array([3, 3]), context) for engine in engines]
    prompt = [engine.step_s(5, 1, np.array([5]), np.array([0])) for engine in engines]
    assert verify[0] == verify[1]
    assert prompt[0] - prompt[1] == pytest.approx(3 * HOST_S, rel=1e-9)


def test_which_engines_launch_a_prompts_step_from_the_host():
    """SGLang and TensorRT-LLM's PyTorch backend replay graphs for decodes only; TensorRT-LLM 0.11 runs a built
    engine; vLLM compiles and captures its mixed steps; hwlib's generic engine has no host."""
    eager = {key for key, profile in ENGINE_PROFILES.items() if profile.eager_prefill}
    assert eager == {"sglang", "trtllm"}


def test_a_simulated_moe_prompt_waits_for_the_host_under_sglang():
    """One request, one chip: the first token comes 58 MoE layers x the overhead later with the eager prompt."""
    model, node = hw.model("deepseek-v3"), hw.cluster("hgx-h200-ndr")
    ask = dict(prompt_len=1000, output_len=4, n_requests=1, precision="fp8", engine="sglang")
    slow = hw.simulate_serving(model, node, 8, efficiency=Efficiency(moe_layer_overhead_s=HOST_S), **ask)
    fast = hw.simulate_serving(model, node, 8, efficiency=Efficiency(moe_layer_overhead_s=0.0), **ask)
    assert model.table().n_moe_layers == 58
    assert float(slow.ttft_s[0] - fast.ttft_s[0]) == pytest.approx(58 * HOST_S, rel=1e-6)
