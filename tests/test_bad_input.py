"""Bad input to public functions: NaN, negative numbers, strings and the wrong record each raise a
ValueError or TypeError whose message names the parameter (DESIGN.md: "validated, naming the parameter").

Each case changes one argument of a call that works, so the error can only come from that argument.
"""

import inspect
import math

import numpy as np
import pytest

import hwlib as hw
from hwlib.training.squeeze import optimal_batch_tokens

V5E = hw.chip("v5e")
A100 = hw.chip("A100-80GB", source="doc002")
LLAMA = hw.model("llama-3-8b")
HGX = hw.cluster("hgx-a100-hdr")

# (function, keyword arguments of a call that works, numeric parameters, record parameters)
SPECS = [
    (hw.ridge_point, dict(chip=V5E), [], ["chip"]),
    (hw.attainable_flops_per_s, dict(intensity=10.0, chip=V5E), ["intensity"], ["chip"]),
    (hw.is_compute_bound, dict(intensity=10.0, chip=V5E), ["intensity"], ["chip"]),
    (hw.roofline_time_s, dict(flops=1e12, n_bytes=1e9, chip=V5E), ["flops", "n_bytes"], ["chip"]),
    (hw.matmul_flops, dict(m=8, k=8, n=8), ["m", "k", "n"], []),
    (hw.matmul_bytes, dict(m=8, k=8, n=8, bytes_per_element=2), ["m", "k", "n", "bytes_per_element"], []),
    (hw.matmul_intensity, dict(m=8, k=8, n=8), ["m", "k", "n"], []),
    (hw.elementwise_intensity, dict(), ["flops_per_element", "arrays_touched", "bytes_per_element"], []),
    (hw.convert_bytes, dict(n_bytes=1e9, unit="GB"), ["n_bytes"], []),
    (hw.training_state_bytes, dict(n_params=7e9, recipe="zero_mixed_adam"), ["n_params"], []),
    (hw.training_state_breakdown, dict(n_params=7e9, recipe="zero_mixed_adam"), ["n_params"], []),
    (
        hw.activation_bytes,
        dict(seq_len=2048, batch=1, d=4096, n_heads=32, tensor_parallel=1),
        ["seq_len", "batch", "d", "n_heads", "tensor_parallel"],
        [],
    ),
    (
        hw.kv_cache_bytes,
        dict(seq_len=1024, n_layers=32, n_kv_heads=8, head_dim=128, batch=1),
        ["seq_len", "n_layers", "n_kv_heads", "head_dim", "batch"],
        [],
    ),
    (hw.kv_cache_bytes, dict(seq_len=1024, n_layers=LLAMA, batch=1), ["seq_len", "batch"], []),
    (hw.usable_bytes, dict(chip=V5E, usable_fraction=0.8, n_chips=4), ["usable_fraction", "n_chips"], ["chip"]),
    (
        hw.chips_needed,
        dict(total_bytes=1e11, chip=V5E, usable_fraction=0.8),
        ["total_bytes", "usable_fraction"],
        ["chip"],
    ),
    (hw.deployment_chips, dict(total_bytes=1e11, chip=V5E), ["total_bytes"], ["chip"]),
    (
        hw.max_params,
        dict(capacity_bytes=1e11, recipe="fp32_adam", reserved_bytes=1e9),
        ["capacity_bytes", "reserved_bytes"],
        [],
    ),
    (
        hw.tokens_that_fit,
        dict(chip=V5E, weight_bytes=1e9, kv_bytes_per_token=1e5, n_chips=1),
        ["weight_bytes", "kv_bytes_per_token", "n_chips"],
        ["chip"],
    ),
    (
        hw.inference_step,
        dict(model=hw.model("llama-3-8b"), chip=V5E, batch=4, context_len=128, new_tokens=1),
        ["batch", "context_len", "new_tokens"],
        ["model", "chip"],
    ),
    (
        hw.time_to_first_token_s,
        dict(model=hw.model("llama-3-8b"), chip=V5E, prompt_len=128, batch=2),
        ["prompt_len", "batch"],
        ["model", "chip"],
    ),
    (
        hw.compute_bound_batch,
        dict(model=hw.model("llama-3-8b"), chip=V5E, context_len=128),
        ["context_len"],
        ["model", "chip"],
    ),
    (
        hw.max_batch,
        dict(model=hw.model("llama-3-8b"), chip=V5E, context_len=128, n_chips=4),
        ["context_len"],
        ["model", "chip"],
    ),
    (
        hw.serving_chips,
        dict(model=hw.model("llama-3-8b"), chip=V5E, context_len=128, batch=4, tpot_target_s=0.1),
        ["context_len", "batch", "tpot_target_s"],
        ["model", "chip"],
    ),
    (
        hw.throughput_bound,
        dict(model=hw.model("llama-3-8b"), chip=V5E, input_len=128, output_len=64),
        ["input_len", "output_len"],
        ["model", "chip"],
    ),
    (hw.machine_balance, dict(chip=A100), [], ["chip"]),
    (hw.energy_per_flop_j, dict(intensity=100.0, chip=A100), ["intensity"], ["chip"]),
    (hw.wire_energy_j, dict(n_bytes=1.0, distance_mm=1.0), ["n_bytes", "distance_mm"], []),
    (hw.add_equivalents, dict(joules=1e-12), ["joules"], []),
    (hw.layer_flops, dict(d=4096, T=2048, seq_len=2048), ["d", "T", "seq_len"], []),
    (
        hw.layer_step,
        dict(d=4096, T=2048, chip=V5E, b_w=12.0, a=200.0, seq_len=2048),
        ["d", "T", "b_w", "a", "seq_len"],
        ["chip"],
    ),
    (hw.blocking_elements, dict(chip=V5E, on_chip_fraction=0.5), ["on_chip_fraction"], ["chip"]),
    (hw.t_min, dict(d=4096, chip=V5E, b_w=12.0, a=200.0), ["d", "b_w", "a"], ["chip"]),
    (hw.d_min, dict(chip=V5E, a=200.0), ["a"], ["chip"]),
    (hw.t_min_large_d, dict(chip=V5E, b_w=12.0), ["b_w"], ["chip"]),
    (hw.elementwise_time_ratio, dict(d=4096, chip=V5E, a=200.0), ["d", "a"], ["chip"]),
    (hw.elementwise_time_share, dict(d=4096, chip=V5E, a=200.0), ["d", "a"], ["chip"]),
    (hw.activation_energy_ratio, dict(d=4096, chip=A100, a=200.0), ["d", "a"], ["chip"]),
    (
        hw.allreduce_time_s,
        dict(n_params=7e9, n_chips=8, fabric_bytes_per_s=25e9, b_ar=4.0),
        ["n_params", "n_chips", "fabric_bytes_per_s", "b_ar"],
        [],
    ),
    (
        hw.hierarchical_allreduce_time_s,
        dict(n_params=7e9, n_chips=64, node_bytes_per_s=3e11, network_bytes_per_s=25e9, node_size=8),
        ["n_params", "n_chips", "node_bytes_per_s", "network_bytes_per_s", "node_size"],
        [],
    ),
    (hw.transformer_params, dict(d=4096, n_layers=32, vocab=50000), ["d", "n_layers", "vocab"], []),
    (hw.optimizer_bytes, dict(n_params=7e9, n_chips=8, b_opt=30.0), ["n_params", "n_chips", "b_opt"], []),
    (
        hw.training_step,
        dict(d=4096, T=2048, chip=A100, n_layers=32, micro_batches=2, n_chips=8, fabric_bytes_per_s=25e9),
        ["d", "T", "n_layers", "micro_batches", "n_chips", "fabric_bytes_per_s"],
        ["chip"],
    ),
    (
        hw.batch_squeeze,
        dict(chip=A100, n_params=7e9, n_chips=64, fabric_bytes_per_s=25e9, critical_batch_tokens=1e6),
        ["n_params", "n_chips", "fabric_bytes_per_s", "critical_batch_tokens"],
        ["chip"],
    ),
    (hw.cluster_squeeze, dict(cluster=HGX, n_params=7e9, n_chips=64), ["n_params", "n_chips"], ["cluster"]),
    (
        optimal_batch_tokens,
        dict(critical_batch_tokens=1e6, n_chips=64, fixed_cost_tokens=700.0),
        ["critical_batch_tokens", "n_chips", "fixed_cost_tokens"],
        [],
    ),
    (hw.critical_batch_from_loss, dict(loss_nats=3.0), ["loss_nats"], []),
    (hw.steps_to_target, dict(batch_tokens=1e6, min_steps=1e4), ["batch_tokens", "min_steps"], []),
    (hw.tokens_to_target, dict(batch_tokens=1e6, min_tokens=1e11), ["batch_tokens", "min_tokens"], []),
]

WRONG_RECORD = {"chip": LLAMA, "model": V5E, "cluster": V5E}
KIND = {"chip": "Chip", "model": "ModelShape", "cluster": "Cluster"}


def _takes_none(function, name):
    """Parameters that may be None (seq_len, network_bytes_per_s, ...): a None default or annotation."""
    parameter = inspect.signature(function).parameters[name]
    return parameter.default is None or "None" in str(parameter.annotation)


def _numeric_cases():
    for function, good, numeric, _ in SPECS:
        for name in numeric:
            for label, value, error, words in (
                ("NaN", float("nan"), ValueError, f"{name} must not be NaN"),
                ("negative", -1.0, ValueError, f"{name} must be (>|>=) "),
                ("string", "1", TypeError, f"{name} must be a real number"),
                ("None", None, TypeError, f"{name} must be a real number"),
                ("NaN in an array", np.array([1.0, math.nan]), ValueError, f"{name} must not be NaN"),
            ):
                if value is None and _takes_none(function, name):
                    continue
                yield pytest.param(
                    function, {**good, name: value}, error, words, id=f"{function.__name__}-{name}-{label}"
                )


def _record_cases():
    for function, good, _, records in SPECS:
        for name in records:
            for label, value in (("name string", "v5e"), ("wrong record", WRONG_RECORD[name]), ("None", None)):
                yield pytest.param(
                    function,
                    {**good, name: value},
                    TypeError,
                    f"{name} must be a {KIND[name]} record",
                    id=f"{function.__name__}-{name}-{label}",
                )


@pytest.mark.parametrize(("function", "good"), [pytest.param(f, g, id=f.__name__) for f, g, _, _ in SPECS])
def test_each_sample_call_works(function, good):
    function(**good)


@pytest.mark.parametrize(("function", "arguments", "error", "words"), [*_numeric_cases(), *_record_cases()])
def test_one_bad_argument_is_named(function, arguments, error, words):
    with pytest.raises(error, match=words):
        function(**arguments)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: hw.kv_cache_bytes(1, 32, 8, 128, dtype=None), TypeError, "dtype must be a string"),
        (lambda: hw.kv_cache_bytes(1, 32, 8, 128, dtype="fp64"), ValueError, "dtype must be one of"),
        (lambda: hw.activation_bytes(2048, 1, 4096, 32, recompute=None), TypeError, "recompute must be a string"),
        (lambda: hw.convert_bytes(1.0, "gigabytes"), ValueError, "unit must be one of"),
        (lambda: hw.layer_step(4096, 2048, V5E, dtype="fp64"), KeyError, "dtype 'fp64'"),
        (lambda: hw.ridge_point(V5E, "fp8"), KeyError, "dtype 'fp8'"),
        (lambda: hw.time_to_target(1, 1, 1), TypeError, "squeeze must be a BatchSqueeze"),
        (lambda: hw.chip("v5e", source=None), TypeError, "source must be a string"),
        (lambda: hw.fabrics(kind=3), TypeError, "kind must be a string"),
        (lambda: hw.deployment_name(10, V5E), ValueError, "n_chips must be a deployment size"),
        (lambda: hw.usable_bytes(V5E, usable_fraction=1.5), ValueError, r"usable_fraction must be in \(0, 1\]"),
        (lambda: hw.layer_step(4096, 2048, V5E, power_cap=1), TypeError, "power_cap must be True or False"),
        (
            lambda: hw.activation_bytes(2048, 1, 4096, 32, flash_attention="no"),
            TypeError,
            "flash_attention must be True or False",
        ),
        (lambda: hw.t_min([1, 2], V5E, b_w=[1, 2, 3]), ValueError, r"d \(2,\), b_w \(3,\)"),
    ],
)
def test_other_bad_options_are_named(call, error, words):
    with pytest.raises(error, match=words):
        call()


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: hw.training_state_bytes(7e9, 16), "recipe must be"),
        (lambda: hw.max_params(1e9, hw.chip("v5e")), "recipe must be"),
        (lambda: hw.recipe(16), "key must be"),
        (lambda: hw.cluster(16), "key must be"),
    ],
)
def test_lookups_name_the_callers_parameter(call, words):
    with pytest.raises(TypeError, match=words):
        call()


# --- the rules for what a simulation and the calculator take (each kind of bad input, not each case) ---

H100 = hw.chip("H100-SXM")


@pytest.mark.parametrize(
    ("options", "match"),
    [
        # sizes are checked before anything is allocated
        (dict(n_requests=10**12), "n_requests=1,000,000,000,000 is more than"),
        (dict(arrival_rate_per_s=1e-300), "arrival_rate_per_s=1e-300 spreads"),
        # errors name the argument given
        (dict(prompt_len=np.array([10, 20, 30])), "prompt_len must be one length or n_requests=10"),
        (dict(where=hw.cluster("hgx-h100-ndr"), n_chips=8, prefill_chips=3), "prefill_chips=3 must divide"),
        (dict(where=hw.cluster("hgx-h100-ndr"), n_chips=8, prefill_chips=2), r"n_chips - prefill_chips=6 must"),
        # nonsense is refused, not cut or ignored
        (dict(prompt_len=1000, prefix_tokens=2000, prefix_hit_rate=0.5), "prefix_tokens=2,000 must be shorter"),
        (dict(prefix_hit_rate=0.5), "prefix_hit_rate=0.5 finds nothing to reuse"),
    ],
)
def test_a_simulation_refuses_what_it_cannot_take_and_names_it(options, match):
    call = dict(model=LLAMA, where=H100, n_chips=1, n_requests=10) | options
    with pytest.raises(ValueError, match=match):
        hw.simulate_serving(call.pop("model"), call.pop("where"), call.pop("n_chips"), **call)


def test_limits_above_what_the_requests_fill_never_bind_and_allocate_nothing():
    loose = hw.simulate_serving(LLAMA, H100, 1, n_requests=10, max_batch_tokens=10**12, max_sequences=10**12)
    tight = hw.simulate_serving(LLAMA, H100, 1, n_requests=10, max_batch_tokens=10 * 1024 + 10, max_sequences=10)
    np.testing.assert_allclose(loose.ttft_s, tight.ttft_s)
    np.testing.assert_allclose(loose.finish_s, tight.finish_s)


def test_a_drafter_and_expert_parallelism_within_what_exists():
    with pytest.raises(ValueError, match="draft_tokens=1,000,000 is more than the 64"):
        hw.Speculation(10**6, 0.7, "one layer")
    with pytest.raises(ValueError, match="8 routed experts per layer"):
        hw.inference_step(hw.model("mixtral-8x7b"), H100, 1, 100, 1, 16, expert_parallel=True)
