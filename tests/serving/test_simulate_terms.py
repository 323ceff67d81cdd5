"""Every term of ``hwlib.serving.simulate`` pinned by hand: ``hw.simulate_serving``'s lengths and arrivals (given,
a burst, Poisson, closed-loop clients), its limits and their engine-profile defaults, the budget, prefix hits, the
front end's delay, the KV cache's share of memory, speculation, expert parallelism, disaggregated prefill and
decode pools with the cache's transfer between them, the results (TTFT, TPOT, latency, per-step counts) and its
errors; and ``queue_wait_s`` (Pollaczek-Khinchine).

The model is a tiny Llama-shaped one (2 layers, 4 heads, 2 KV heads of 16, 256 KV bytes a token in bf16) on a toy
chip of 4 GFLOP/s and 1 GB/s, or on one or two H100s of an HGX node. Each step's seconds are read from
``StepPricer.price`` (``hwlib.serving.pricing``, the pricer the engine's tables come from) for the step's tokens,
its sequences, the attention FLOPs of each sequence's new tokens after its context and the KV bytes it then holds;
what the simulation does with them (which steps run, their order, the clock, the per-request results) is written
out here from the module's docstrings.
"""

import numpy as np
import pytest

import hwlib as hw
from hwlib.data import assumptions, calibrated, efficiencies
from hwlib.efficiency import Efficiency
from hwlib.placement import serving_place
from hwlib.precision import as_precision
from hwlib.serving import simulate as simulate_module
from hwlib.serving.engine import Engine
from hwlib.serving.pricing import StepPricer
from hwlib.serving.simulate import _transfer_s, queue_wait_s

TINY = {
    "model_type": "llama",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 128,
    "vocab_size": 256,
}
MODEL = hw.ModelShape.from_hf_config(TINY, key="tiny-llama")
WINDOWED = hw.ModelShape.from_hf_config({**TINY, "model_type": "mistral", "sliding_window": 8}, key="tiny-mistral")
DRAFTER = hw.ModelShape.from_hf_config({**TINY, "num_hidden_layers": 1}, key="tiny-drafter")
MOE = hw.ModelShape.from_hf_config(
    {**TINY, "model_type": "mixtral", "num_local_experts": 4, "num_experts_per_tok": 2}, key="tiny-mixtral"
)
KV = 2 * 2 * 2 * 16 * 2  # bytes a token: K and V, 2 layers, 2 KV heads of 16, bf16
WEIGHTS = 2 * MODEL.params()  # bf16
NODE = hw.cluster("hgx-h100-ndr")
BF16 = as_precision("bf16")


def toy(hbm=1e8):
    return hw.custom_chip("toy", peak_flops_per_s=4e9, hbm_bytes_per_s=1e9, hbm_bytes=hbm)


TOY = toy()


def priced(new, context, estimate="bound", where=TOY, n_chips=1, model=MODEL, precision=BF16, **flags):
    """Seconds of one step from ``StepPricer.price`` (see the module docstring)."""
    chip, topology = serving_place(where, model, n_chips)
    pricer = StepPricer(model, chip, topology, n_chips, precision, **flags)
    flops = sum(model.table().attention_flops(n, c) for n, c in zip(new, context))
    moved = sum(model.kv_bytes(n + c, precision.kv_dtype) for n, c in zip(new, context))
    price, _, _ = pricer.price(sum(new), len(new), flops, moved)
    return float(price.bound_s if estimate == "bound" else price.forecast_s)


def decodes(context, steps, estimate="bound", **where):
    """Seconds of ``steps`` decode steps of one sequence after ``context``, context + 1, ... tokens."""
    return [priced([1], [context + i], estimate, **where) for i in range(steps)]


def simulate(model=MODEL, where=TOY, n_chips=1, **options):
    return hw.simulate_serving(model, where, n_chips, **{"estimate": "bound", **options})


# --- one request, and the results ------------------------------------------------------------------------------


@pytest.mark.parametrize("estimate", ["bound", "forecast"])
def test_a_lone_request_sees_its_prefill_then_a_decode_per_further_token(estimate):
    """TTFT = the prefill of the prompt; each further token a decode after one more cached token; TPOT = their mean;
    latency = TTFT + their sum. The generic engine has no front end."""
    out = simulate(n_requests=1, prompt_len=10, output_len=4, estimate=estimate)
    prefill, steps = priced([10], [0], estimate), decodes(10, 3, estimate)
    assert out.ttft_s[0] == pytest.approx(prefill, rel=1e-12)
    assert out.latency_s[0] == pytest.approx(prefill + sum(steps), rel=1e-12)
    assert out.tpot_s[0] == pytest.approx(sum(steps) / 3, rel=1e-12)
    np.testing.assert_allclose(out.step_end_s, np.cumsum([prefill, *steps]), rtol=1e-12)
    assert list(out.step_tokens) == [10, 1, 1, 1] and list(out.step_sequences) == [1, 1, 1, 1]
    assert out.engine == "hwlib's generic engine" and out.n_chips == 1 and out.preemptions == 0
    assert out.kv_transfer_s is None and list(out.prompt_tokens) == [10] and list(out.output_tokens) == [4]


def test_lengths_are_one_for_all_or_one_per_request():
    """Far apart, each request is alone: its own prompt's prefill and its own answer's decodes."""
    out = simulate(n_requests=3, arrivals_s=[0.0, 1.0, 2.0], prompt_len=[5, 7, 9], output_len=[1, 2, 3])
    np.testing.assert_allclose(out.ttft_s, [priced([p], [0]) for p in (5, 7, 9)], rtol=1e-10)
    latency = [priced([5], [0]), priced([7], [0]) + sum(decodes(7, 1)), priced([9], [0]) + sum(decodes(9, 2))]
    np.testing.assert_allclose(out.latency_s, latency, rtol=1e-10)
    assert list(out.step_tokens) == [5, 7, 1, 9, 1, 1]
    np.testing.assert_array_equal(out.arrival_s, [0.0, 1.0, 2.0])
    same = simulate(n_requests=3, arrivals_s=[0.0, 1.0, 2.0], prompt_len=7, output_len=2)
    assert list(same.prompt_tokens) == [7, 7, 7] and list(same.output_tokens) == [2, 2, 2]
    with pytest.raises(ValueError, match=r"prompt_len must be one length or n_requests=3 of them, got shape \(2,\)"):
        simulate(n_requests=3, prompt_len=[5, 7])
    with pytest.raises(ValueError, match="output_len"):
        simulate(n_requests=2, output_len=[3, 0])


def test_by_default_every_request_arrives_at_once():
    """An infinite rate (the default) is a burst at time 0: the first step prefills every prompt."""
    out = simulate(n_requests=5, prompt_len=4, output_len=2)
    np.testing.assert_array_equal(out.arrival_s, np.zeros(5))
    assert list(out.step_tokens) == [20, 5] and list(out.step_sequences) == [5, 5]
    np.testing.assert_allclose(out.ttft_s, priced([4] * 5, [0] * 5), rtol=1e-12)


def test_given_arrivals_must_be_one_per_request_in_order():
    """``arrivals_s``: one non-negative time per request, never decreasing (ties allowed), returned as given."""
    for bad in ([0.0, 2.0, 1.0], [0.0, 1.0], [-1.0, 0.0, 1.0]):
        with pytest.raises(ValueError, match="arrivals_s"):
            simulate(n_requests=3, arrivals_s=bad)
    out = simulate(n_requests=3, arrivals_s=[1.0, 1.0, 2.5], prompt_len=4, output_len=1)
    np.testing.assert_array_equal(out.arrival_s, [1.0, 1.0, 2.5])


def test_poisson_arrivals_come_at_the_rate_from_a_seed():
    """Poisson at rate r: exponential gaps of mean 1 / r from time 0 (the first arrival after one gap), fixed by the
    seed. 2,000 gaps of mean 0.25 s: their mean is within 0.03 s (over 5 standard errors)."""
    out = simulate(n_requests=2000, arrival_rate_per_s=4.0, prompt_len=2, output_len=1, seed=3)
    gaps = np.diff(out.arrival_s, prepend=0.0)
    assert (gaps > 0).all() and abs(gaps.mean() - 0.25) < 0.03
    assert abs(gaps.std() - 0.25) < 0.03  # exponential: the spread equals the mean
    again = simulate(n_requests=2000, arrival_rate_per_s=4.0, prompt_len=2, output_len=1, seed=3)
    other = simulate(n_requests=2000, arrival_rate_per_s=4.0, prompt_len=2, output_len=1, seed=4)
    np.testing.assert_array_equal(again.arrival_s, out.arrival_s)
    assert (other.arrival_s != out.arrival_s).any()


def test_the_longest_span_and_the_most_requests_are_limits_not_beyond():
    """count / rate up to ``LONGEST_SIMULATED_SPAN_S``, and up to ``MOST_SIMULATED_REQUESTS`` requests: at the
    limit the next check speaks (a bad max_batch_tokens, a bad estimate), past it the limit does."""
    span, most = assumptions.LONGEST_SIMULATED_SPAN_S, assumptions.MOST_SIMULATED_REQUESTS
    rate = 10 / span
    assert 10 / rate == span
    with pytest.raises(ValueError, match="max_batch_tokens"):
        simulate(n_requests=10, arrival_rate_per_s=rate, max_batch_tokens=0)
    with pytest.raises(ValueError, match="spreads 10 requests over"):
        simulate(n_requests=10, arrival_rate_per_s=rate * 0.999)
    with pytest.raises(ValueError, match="estimate must be one of"):
        simulate(n_requests=most, estimate="median")
    with pytest.raises(ValueError, match="is more than the"):
        simulate(n_requests=most + 1)


# --- limits and the engine profiles' defaults ----------------------------------------------------------------


def test_the_generic_engine_runs_256_sequences_and_whole_prompts_of_8192_tokens():
    """The generic profile: 256 sequences and 8,192 tokens a step, prompts prefilled whole."""
    burst = simulate(n_requests=300, prompt_len=1, output_len=2)
    assert burst.step_sequences[0] == 256 and burst.step_tokens[0] == 256
    capped = simulate(n_requests=10, prompt_len=1, output_len=2, max_sequences=3)
    assert capped.step_sequences.max() == 3
    assert simulate(n_requests=1, prompt_len=8192, output_len=1).step_tokens[0] == 8192
    with pytest.raises(ValueError, match="a prompt of 8,193 tokens exceeds max_batch_tokens=8,192 without chunking"):
        simulate(n_requests=1, prompt_len=8193)
    with pytest.raises(ValueError, match="exceeds max_batch_tokens=100 without"):
        simulate(n_requests=1, prompt_len=101, max_batch_tokens=100)
    chunked = simulate(n_requests=1, prompt_len=101, output_len=1, max_batch_tokens=100, chunked_prefill=True)
    assert list(chunked.step_tokens) == [100, 1]


def test_each_engine_profile_sets_its_defaults_on_the_chip_and_options_beat_them():
    """On a chip under 35 GiB: vLLM chunks prompts at 2,048 tokens a step; SGLang prefills them whole, up to 2,048;
    TensorRT-LLM chunks at 8,192. Without a front end's time (``request_overhead_s=0``) the schedule is the engine's
    alone."""
    quiet = Efficiency(request_overhead_s=0.0)
    vllm = simulate(n_requests=1, prompt_len=3000, output_len=1, engine="vllm", efficiency=quiet)
    assert list(vllm.step_tokens) == [2048, 952] and vllm.engine == "vLLM 0.11.0 defaults"
    with pytest.raises(ValueError, match="exceeds max_batch_tokens=2,048"):
        simulate(n_requests=1, prompt_len=3000, engine="vllm", chunked_prefill=False)
    roomy = toy(5 * 2**30)  # SGLang keeps 3.53 GiB out of its cache on a chip under 35 GiB
    with pytest.raises(ValueError, match="exceeds max_batch_tokens=2,048"):
        simulate(where=roomy, n_requests=1, prompt_len=2049, engine="sglang")
    assert list(simulate(where=roomy, n_requests=1, prompt_len=3000, output_len=1, engine="sglang",
                         chunked_prefill=True, efficiency=quiet).step_tokens) == [2048, 952]  # fmt: skip
    trt = simulate(n_requests=1, prompt_len=9000, output_len=1, engine="trtllm", efficiency=quiet)
    assert list(trt.step_tokens) == [8192, 808] and trt.engine == "TensorRT-LLM 1.0 defaults"
    assert list(simulate(n_requests=1, prompt_len=300, output_len=1, engine="vllm", max_batch_tokens=256,
                         efficiency=quiet).step_tokens) == [256, 44]  # fmt: skip
    many = simulate(n_requests=300, prompt_len=1, output_len=2, engine="vllm", efficiency=quiet)
    assert many.step_sequences[0] == 256  # vLLM's small tier: 256 sequences


def block_room(blocks, fraction=0.5):
    """A toy chip whose cache (``fraction`` of the memory the weights leave) holds ``blocks`` blocks of 16 tokens."""
    return toy(WEIGHTS + blocks * 16 * KV / fraction)


@pytest.mark.parametrize("blocks", [3.0, 2.999])
def test_the_cache_is_the_given_share_of_the_memory_the_weights_leave(blocks):
    """kv_fraction 0.5 of (memory - weights) holding 3 blocks (or a byte less): prompts of 15 tokens need one block
    each with their first token, so 3 (or 2) join the first step."""
    out = simulate(
        where=block_room(blocks), n_requests=5, prompt_len=15, output_len=1, efficiency=Efficiency(kv_fraction=0.5)
    )
    assert out.step_sequences[0] == int(blocks) and out.preemptions == 0


def test_an_engines_share_of_memory_applies_where_none_is_given():
    """Requests of one block each. The generic engine's cache is ``KV_CACHE_FRACTION`` of the memory the weights
    leave (6.5 blocks' worth here); vLLM's is 0.9 of the memory less the weights (4.5 blocks here); a given
    ``kv_fraction`` beats the profile's."""
    fraction = efficiencies.KV_CACHE_FRACTION.value
    block = 16 * KV
    chip = toy(WEIGHTS + 6.5 * block)
    generic = simulate(where=chip, n_requests=8, prompt_len=15, output_len=1)
    assert generic.step_sequences[0] == int(fraction * 6.5) == 5
    vllm_chip = toy((WEIGHTS + 4.5 * block) / 0.9)  # 0.9 x memory - weights = 4.5 blocks
    vllm = simulate(where=vllm_chip, n_requests=8, prompt_len=15, output_len=1, engine="vllm")
    assert vllm.step_sequences[0] == 4
    given = simulate(where=vllm_chip, n_requests=12, prompt_len=15, output_len=1, engine="vllm",
                     efficiency=Efficiency(kv_fraction=1.0))  # fmt: skip
    free = (WEIGHTS + 4.5 * block) / 0.9 - WEIGHTS
    assert given.step_sequences[0] == int(free // block)
    with pytest.raises(ValueError, match=r"do not fit on 1 x toy with room for a KV cache \(vLLM 0.11.0 defaults\)"):
        simulate(where=toy(WEIGHTS / 0.9 * 0.999), n_requests=2, engine="vllm")


def test_reserving_the_answer_admits_on_the_prompt_and_the_whole_answer():
    """Room for 2 blocks; prompts of 15 tokens and answers of 17: with the reserve each needs 2 blocks, so one runs
    at a time; without it each needs 1 (prompt and first token), and two join the first step. TensorRT-LLM
    reserves by default."""
    chip = block_room(2)
    common = dict(where=chip, n_requests=2, prompt_len=15, output_len=17, efficiency=Efficiency(kv_fraction=0.5))
    assert simulate(reserve_output=True, **common).step_sequences[0] == 1
    assert simulate(**common).step_sequences[0] == 2
    assert simulate(engine="trtllm", **common).step_sequences.max() == 1
    assert simulate(engine="trtllm", reserve_output=False, **common).step_sequences.max() == 2


@pytest.mark.parametrize(
    ("name", "value"),
    [("chunked_prefill", 1), ("expert_parallel", "yes"), ("attention_dp", 0), ("reserve_output", "no")],
)
def test_flags_must_be_true_or_false(name, value):
    """Each switch is a bool, not a truthy value."""
    with pytest.raises(TypeError, match=f"{name} must be True or False"):
        simulate(n_requests=2, **{name: value})


# --- prefix caching --------------------------------------------------------------------------------------------


def test_a_prefix_hit_prefills_the_rest_after_the_cached_prefix():
    """prefix 8 of 12 tokens: a hit prefills 4 after 8 cached; a miss all 12. Hit rate 1 hits every time, 0 never."""
    far = dict(n_requests=3, arrivals_s=[0.0, 1.0, 2.0], prompt_len=12, output_len=2)
    hits = simulate(prefix_tokens=8, prefix_hit_rate=1.0, **far)
    np.testing.assert_allclose(hits.ttft_s, priced([4], [8]), rtol=1e-10)
    np.testing.assert_allclose(hits.latency_s, priced([4], [8]) + priced([1], [12]), rtol=1e-10)
    assert list(hits.step_tokens) == [4, 1] * 3
    misses = simulate(prefix_tokens=8, prefix_hit_rate=0.0, **far)
    np.testing.assert_allclose(misses.ttft_s, priced([12], [0]), rtol=1e-10)


def test_prefix_hits_come_at_their_rate():
    """Hit rate 0.25 over 400 requests far apart: the share of hits is within 0.1 (over 4 standard errors)."""
    out = simulate(
        n_requests=400, arrivals_s=10.0 * np.arange(400), prompt_len=12, output_len=1, prefix_tokens=8,
        prefix_hit_rate=0.25, seed=5,
    )  # fmt: skip
    hit = np.isclose(out.ttft_s, priced([4], [8]), rtol=1e-9)
    assert (hit | np.isclose(out.ttft_s, priced([12], [0]), rtol=1e-9)).all()
    assert abs(hit.mean() - 0.25) < 0.1


def test_a_prefix_must_be_shorter_than_every_prompt_and_a_hit_rate_a_probability():
    """prefix_tokens < the shortest prompt; 0 <= prefix_hit_rate <= 1, and a hit rate needs a prefix."""
    with pytest.raises(ValueError, match=r"prefix_tokens=9 must be shorter than every prompt \(the shortest: 9\)"):
        simulate(n_requests=2, prompt_len=[12, 9], prefix_tokens=9, prefix_hit_rate=0.5)
    assert simulate(n_requests=2, prompt_len=[12, 9], output_len=1, prefix_tokens=8, prefix_hit_rate=1.0).ttft_s[0] > 0
    with pytest.raises(ValueError, match=r"prefix_hit_rate must be in \[0, 1\]"):
        simulate(n_requests=2, prefix_tokens=8, prefix_hit_rate=1.01)
    with pytest.raises(ValueError, match="finds nothing to reuse"):
        simulate(n_requests=2, prefix_hit_rate=0.5)
    with pytest.raises(ValueError, match="prefix_tokens"):
        simulate(n_requests=2, prefix_tokens=-1)


# --- the front end, the closed loop, and what passes through to the engine ------------------------------------


def test_the_front_end_delays_each_request_in_the_forecast_of_a_named_engine_or_a_given_overhead(fixed_front_end):
    """A named engine's forecast adds ``REQUEST_OVERHEAD_S`` before the engine sees a request; the generic engine
    adds none unless an overhead is given; the bound adds none."""
    common = dict(n_requests=1, prompt_len=10, output_len=2, estimate="forecast")
    prefill = priced([10], [0], "forecast")
    overhead = calibrated.REQUEST_OVERHEAD_S.value
    assert simulate(**common).ttft_s[0] == pytest.approx(prefill, rel=1e-12)
    assert simulate(engine="vllm", **common).ttft_s[0] == pytest.approx(overhead + prefill, rel=1e-12)
    given = simulate(efficiency=Efficiency(request_overhead_s=0.125), **common)
    assert given.ttft_s[0] == pytest.approx(0.125 + prefill, rel=1e-12)
    assert given.arrival_s[0] == 0.0
    bound = simulate(engine="vllm", **{**common, "estimate": "bound"})
    assert bound.ttft_s[0] == pytest.approx(priced([10], [0]), rel=1e-12)


def test_closed_loop_clients_send_each_next_request_when_one_ends(fixed_front_end):
    """concurrency 2: two requests at once; each finish sends the next, then, with the front end's delay."""
    out = simulate(
        n_requests=3, prompt_len=4, output_len=2, concurrency=2, efficiency=Efficiency(request_overhead_s=0.0)
    )
    first = priced([4, 4], [0, 0]) + priced([1, 1], [4, 4])
    np.testing.assert_allclose(out.arrival_s, [0.0, 0.0, first], rtol=1e-12)
    np.testing.assert_allclose(out.finish_s[2], first + priced([4], [0]) + priced([1], [4]), rtol=1e-12)
    delayed = simulate(
        n_requests=2, prompt_len=4, output_len=2, concurrency=1, estimate="forecast",
        efficiency=Efficiency(request_overhead_s=0.25),
    )  # fmt: skip
    one = priced([4], [0], "forecast") + priced([1], [4], "forecast")
    np.testing.assert_allclose(delayed.arrival_s, [0.0, 0.25 + one], rtol=1e-12)
    np.testing.assert_allclose(delayed.latency_s, [0.25 + one] * 2, rtol=1e-12)


@pytest.mark.parametrize(
    "options",
    [
        dict(concurrency=0),
        dict(concurrency=2, arrival_rate_per_s=3.0),
        dict(concurrency=2, arrivals_s=[0.0, 1.0, 2.0]),
        dict(concurrency=2, prefill_chips=1),
    ],
)
def test_a_closed_loop_sets_the_arrivals_itself(options):
    """``concurrency`` replaces the arrivals: no rate, times or disaggregation beside it, and at least one client."""
    with pytest.raises(ValueError, match="concurrency"):
        simulate(MODEL, NODE, 2, n_requests=3, **options)


def test_a_sure_draft_runs_k_plus_one_tokens_a_decode_and_the_budget_never_binds():
    """k = 7 at acceptance 1: a decode verifies 8 tokens and gains 8. Two requests of 1 + 2 tokens prefill; a third
    of 12 tokens, arriving during that prefill, joins their decodes whole in a chunked step of 8 + 8 + 12 = 28
    tokens, more than the requests' 14 + 5 prompt and answer tokens and one request's 8 drafted tokens: the budget
    is clamped to what the requests could ever fill (their prompts, answers and k + 1 tokens each), which never
    binds. Every request finishes in that step."""
    spec = hw.Speculation(7, 1.0, DRAFTER)
    out = simulate(
        n_requests=3, prompt_len=[1, 1, 12], output_len=[2, 2, 1], arrivals_s=[0.0, 0.0, 1e-9], speculation=spec,
        chunked_prefill=True,
    )  # fmt: skip
    assert list(out.step_tokens) == [2, 28] and list(out.step_sequences) == [2, 3]
    assert out.finish_s[0] == out.finish_s[1] == out.finish_s[2] == out.step_end_s[-1]


def test_expert_parallelism_and_attention_data_parallelism_reach_the_pricer():
    """A tiny Mixtral on 2 chips of a node: a request's prefill priced with the routed experts split over the chips
    and, with attention data parallelism, the attention's weights on each."""
    for flags in (dict(expert_parallel=True), dict(expert_parallel=True, attention_dp=True), {}):
        out = simulate(MOE, NODE, 2, n_requests=1, prompt_len=16, output_len=1, **flags)
        expected = priced([16], [0], where=NODE, n_chips=2, model=MOE, **flags)
        assert out.ttft_s[0] == pytest.approx(expected, rel=1e-12), flags


def test_with_attention_data_parallelism_a_profiles_cache_share_counts_the_weights_every_chip_holds(monkeypatch):
    """vLLM's share of the memory the weights leave, on 2 chips under attention data parallelism: the weights held
    are the model's once and, on each chip after the first, all but its routed experts once more."""
    shares = []

    def recording(model, where, size, precision, options, *args):
        shares.append(options["efficiency"].kv_fraction)
        return Engine(model, where, size, precision, options, *args)

    monkeypatch.setattr(simulate_module, "Engine", recording)
    simulate(MOE, NODE, 2, n_requests=1, prompt_len=4, output_len=1, expert_parallel=True, attention_dp=True,
             engine="vllm")  # fmt: skip
    whole = MOE.params() - MOE.table().expert_params() * MOE.n_experts  # every weight but the routed experts
    held = 2 * MOE.params() + (2 - 1) * whole * 2  # bf16
    memory = 2 * NODE.chip.capacity_bytes
    assert shares == [pytest.approx((0.9 * memory - held) / (memory - held), rel=1e-12)]


# --- disaggregated prefill and decode pools ------------------------------------------------------------------


def test_a_disaggregated_request_prefills_on_one_pool_and_decodes_on_the_other():
    """prefill_chips 1 of 2 H100s: the prefill pool gives the first token; the cache (10 tokens' KV bytes) crosses
    the node's links from 1 sender, latency + bytes / bandwidth; the decode pool then decodes after 10, 11 tokens."""
    on_one = dict(where=NODE, n_chips=1)
    out = simulate(MODEL, NODE, 2, prefill_chips=1, n_requests=1, prompt_len=10, output_len=3)
    prefill = priced([10], [0], **on_one)
    transfer = NODE.node_fabric.latency_s + 10 * KV / NODE.node_fabric.bytes_per_s
    assert out.ttft_s[0] == pytest.approx(prefill, rel=1e-12)
    np.testing.assert_allclose(out.kv_transfer_s, [transfer], rtol=1e-12)
    assert out.finish_s[0] == pytest.approx(prefill + transfer + sum(decodes(10, 2, **on_one)), rel=1e-12)
    assert list(out.step_tokens) == [10, 1, 1] and list(out.step_sequences) == [1, 1, 1]
    np.testing.assert_allclose(
        out.step_end_s, [prefill, prefill + transfer + decodes(10, 1, **on_one)[0], out.finish_s[0]], rtol=1e-12
    )
    assert out.n_chips == 2 and out.preemptions == 0 and out.engine == "hwlib's generic engine"


def test_the_decode_pool_takes_requests_as_their_caches_arrive_and_answers_them_in_request_order():
    """Three prompts prefilled together (30, 10 and 20 tokens) reach the decode pool in the order their caches
    arrive (10, 20, 30 tokens' worth); each result is its own request's. Decodes on one chip take microseconds and
    a cache's crossing a fraction of one, so each joins after the step in flight."""
    out = simulate(MODEL, NODE, 2, prefill_chips=1, n_requests=3, prompt_len=[30, 10, 20], output_len=[2, 3, 4])
    prefill = priced([30, 10, 20], [0, 0, 0], where=NODE)
    transfer = NODE.node_fabric.latency_s + np.array([30, 10, 20]) * KV / NODE.node_fabric.bytes_per_s
    np.testing.assert_allclose(out.first_token_s, [prefill] * 3, rtol=1e-12)
    np.testing.assert_allclose(out.kv_transfer_s, transfer, rtol=1e-12)
    ready = prefill + transfer
    on_one = dict(where=NODE, n_chips=1)
    t = ready[1] + priced([1], [10], **on_one)  # request 1 alone: its second token
    t += priced([1, 1, 1], [11, 20, 30], **on_one)  # requests 2 and 0 joined: 1's third, 2's second, 0's second
    assert out.finish_s[1] == pytest.approx(t, rel=1e-12) and out.finish_s[0] == pytest.approx(t, rel=1e-12)
    t += sum(priced([1], [21 + i], **on_one) for i in range(2))
    assert out.finish_s[2] == pytest.approx(t, rel=1e-12)
    assert list(out.step_tokens) == [60, 1, 3, 1, 1] and out.preemptions == 0


def test_the_smaller_pool_sends_the_cache():
    """1 prefill chip and 4 decode chips: each request's cache crosses from min(1, 4) = 1 sender; 4 + 1: from 1."""
    for prefill in (1, 4):
        out = simulate(MODEL, NODE, 5, prefill_chips=prefill, n_requests=1, prompt_len=10, output_len=2)
        transfer = NODE.node_fabric.latency_s + 10 * KV / NODE.node_fabric.bytes_per_s
        np.testing.assert_allclose(out.kv_transfer_s, [transfer], rtol=1e-12)
        assert out.ttft_s[0] == pytest.approx(priced([10], [0], where=NODE, n_chips=prefill), rel=1e-12)


def test_a_one_token_answer_finishes_at_its_first_token():
    """Disaggregated: a one-token answer ends with the prefill pool's first token, not in the decode pool."""
    out = simulate(MODEL, NODE, 2, prefill_chips=1, n_requests=2, prompt_len=10, output_len=[1, 2])
    prefill = priced([10, 10], [0, 0], where=NODE)
    assert out.finish_s[0] == out.first_token_s[0] == pytest.approx(prefill, rel=1e-12)
    assert out.finish_s[1] > out.first_token_s[1] + out.kv_transfer_s[1]


@pytest.mark.parametrize(("model", "n_chips"), [(WINDOWED, 2), (MODEL, 4)], ids=["windowed", "bound-on-2"])
def test_a_one_token_answer_in_a_decode_pool_priced_step_by_step(model, n_chips):
    """As above where the decode pool prices its steps one by one (a windowed model; 2 chips at the bound)."""
    out = simulate(model, NODE, n_chips, prefill_chips=n_chips // 2, n_requests=1, prompt_len=10, output_len=1)
    assert out.finish_s[0] == out.first_token_s[0]


def test_a_transfer_crosses_the_node_within_it_and_the_nics_beyond():
    """Within a node (both pools' chips <= its size, or a cluster with no network) over the node's links, else over
    the NICs; ``senders`` chips each send their share; a chip's first cluster where a chip is given."""
    moved = np.array([1e6, 3e6])
    for where, chips, link in (
        (NODE, 8, NODE.node_fabric),
        (NODE, 9, NODE.network),
        (NODE, 16, NODE.network),
        (hw.cluster("mi300x-node"), 16, hw.cluster("mi300x-node").node_fabric),
        (hw.cluster("doc002-ib"), 64, hw.cluster("doc002-ib").node_fabric),
        (NODE.chip, 4, NODE.node_fabric),
    ):
        expected = link.latency_s + moved / (2 * link.bytes_per_s)
        np.testing.assert_allclose(_transfer_s(where, chips, 2, moved), expected, rtol=1e-15)
    with pytest.raises(ValueError, match="prefill_chips needs a cluster"):
        _transfer_s(TOY, 2, 1, moved)


def test_the_pools_must_split_the_chips_and_the_heads():
    """The prefill pool leaves decode chips, and each pool's size divides the attention heads."""
    with pytest.raises(ValueError, match="prefill_chips=2 must leave decode chips out of n_chips=2"):
        simulate(MODEL, NODE, 2, prefill_chips=2, n_requests=2)
    with pytest.raises(ValueError, match="n_chips - prefill_chips=3 must divide the 4 attention heads"):
        simulate(MODEL, NODE, 4, prefill_chips=1, n_requests=2)
    with pytest.raises(ValueError, match="prefill_chips=3 must divide the 4 attention heads"):
        simulate(MODEL, NODE, 4, prefill_chips=3, n_requests=2)


def test_bad_speculation_and_choices_are_named():
    """A speculation that is not an ``hw.Speculation``, an unknown engine or estimate is refused by name."""
    with pytest.raises(TypeError, match="speculation must be an hw.Speculation"):
        simulate(n_requests=2, speculation=(3, 0.5))
    with pytest.raises(ValueError, match="engine must be one of"):
        simulate(n_requests=2, engine="tgi")
    with pytest.raises(ValueError, match="estimate must be one of"):
        simulate(n_requests=2, estimate="mean")


# --- queue_wait_s ----------------------------------------------------------------------------------------------


def test_queue_wait_is_pollaczek_khinchine():
    """W = S rho (1 + c^2) / (2 (1 - rho)), rho = lambda S; infinite at or past rho = 1."""
    # rate 2, service 0.25: rho = 0.5, so W = 0.25 x 0.5 x (1 + c^2) / (2 x 0.5) = 0.125 (1 + c^2)
    assert queue_wait_s(2.0, 0.25) == 0.125 and isinstance(queue_wait_s(2.0, 0.25), float)
    assert queue_wait_s(2.0, 0.25, 1.0) == 0.25
    assert queue_wait_s(2.0, 0.25, 0.5) == pytest.approx(0.125 * 1.25, rel=1e-15)
    # rho = 0.75 at rate 3: W = 0.25 x 0.75 / (2 x 0.25) = 0.375
    assert queue_wait_s(3.0, 0.25) == pytest.approx(0.375, rel=1e-15)
    np.testing.assert_allclose(queue_wait_s(np.array([2.0, 3.0, 4.0, 5.0]), 0.25), [0.125, 0.375, np.inf, np.inf])
    with pytest.raises(ValueError, match="service_cv"):
        queue_wait_s(2.0, 0.25, -1.0)
    with pytest.raises(ValueError, match="arrival_rate_per_s"):
        queue_wait_s(0.0, 0.25)
