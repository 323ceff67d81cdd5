"""Serving many users: the simulation against one step at a time, its limits (low load, saturation), its
options (chunked prefill, prefix caching, speculative decoding, disaggregated pools), the public trace, and bad
input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hwlib as hw
from hwlib.data.request_traces import TRACE_FILE

LLAMA8, H100 = hw.model("llama-3-8b"), hw.chip("h100-sxm")
LLAMA70, NODE = hw.model("llama-3-70b"), hw.cluster("hgx-h100-ndr")


def test_one_request_alone_sees_one_prefill_then_its_decodes():
    for estimate, field in (("forecast", "forecast_time_s"), ("bound", "time_s")):
        alone = hw.simulate_serving(LLAMA8, H100, n_requests=1, prompt_len=1000, output_len=5, estimate=estimate)
        prefill = getattr(hw.inference_step(LLAMA8, H100, 1, 0, 1000), field)
        decodes = [getattr(hw.inference_step(LLAMA8, H100, 1, 1000 + i, 1), field) for i in range(4)]
        assert alone.ttft_s[0] == pytest.approx(prefill, rel=1e-12)
        assert alone.latency_s[0] == pytest.approx(prefill + sum(decodes), rel=1e-12)
        assert alone.tpot_s[0] == pytest.approx(sum(decodes) / 4, rel=1e-12)
        assert len(alone.step_end_s) == 5 and list(alone.step_tokens) == [1000, 1, 1, 1, 1]


def test_a_uniform_batch_decodes_at_inference_steps_price():
    burst = hw.simulate_serving(LLAMA70, NODE, 8, n_requests=32, prompt_len=512, output_len=3, max_batch_tokens=16384)
    prefill = hw.inference_step(LLAMA70, NODE, 32, 0, 512, 8).forecast_time_s
    decode = hw.inference_step(LLAMA70, NODE, 32, 512, 1, 8).forecast_time_s
    np.testing.assert_allclose(burst.ttft_s, prefill, rtol=1e-12)
    assert burst.step_end_s[1] - burst.step_end_s[0] == pytest.approx(decode, rel=1e-12)


def test_at_low_load_the_first_token_takes_one_prefill():
    quiet = hw.simulate_serving(LLAMA8, H100, n_requests=200, arrival_rate_per_s=0.05, prompt_len=2048, output_len=64)
    prefill = hw.inference_step(LLAMA8, H100, 1, 0, 2048).forecast_time_s
    assert np.median(quiet.ttft_s) == pytest.approx(prefill, rel=0.01)
    assert quiet.percentile("ttft", 99) < 1.2 * prefill


def test_at_saturation_throughput_stays_under_its_bound():
    burst = hw.simulate_serving(LLAMA8, H100, n_requests=2000, prompt_len=512, output_len=256, estimate="bound")
    bound = hw.throughput_bound(LLAMA8, H100, 512, 256)
    assert burst.output_tokens_per_s <= bound.tokens_per_s
    forecast = hw.simulate_serving(LLAMA8, H100, n_requests=2000, prompt_len=512, output_len=256)
    assert forecast.output_tokens_per_s < burst.output_tokens_per_s
    assert burst.step_sequences.max() == 256  # max_sequences holds the batch


@settings(max_examples=8, deadline=None)
@given(low=st.floats(1.0, 30.0), factor=st.floats(1.05, 3.0), chunked=st.booleans())
def test_more_load_never_lowers_the_p99_time_to_first_token(low, factor, chunked):
    runs = [
        hw.simulate_serving(
            LLAMA8,
            H100,
            n_requests=300,
            arrival_rate_per_s=rate,
            prompt_len=1024,
            output_len=64,
            chunked_prefill=chunked,
            seed=7,
        )
        for rate in (low, low * factor)
    ]
    p99 = [run.percentile("ttft", 99) for run in runs]
    # compressing the same arrivals moves them against the step boundaries: a first token may come up to one step
    # sooner, never more; the longest a step runs is a decode of the largest batch either run held with a prompt's
    # prefill beside it
    batch = max(int(run.step_sequences.max()) for run in runs)
    step = hw.inference_step(LLAMA8, H100, batch, 1024 + 64, 1).forecast_time_s
    step += hw.inference_step(LLAMA8, H100, 1, 1024, 1024).forecast_time_s
    assert p99[1] >= p99[0] - step


@settings(max_examples=6, deadline=None)
@given(
    ttft_s=st.floats(0.01, 1.0), tpot_s=st.floats(0.008, 0.03), seed=st.integers(0, 2**16), disaggregated=st.booleans()
)
def test_goodput_is_throughput_times_the_share_within_the_targets(ttft_s, tpot_s, seed, disaggregated):
    """Over a rate sweep from idle to past capacity, the goodput is the throughput over the same span times the
    share of requests within the targets, so never above it."""
    model, where, options = (
        (LLAMA70, NODE, dict(n_chips=8, prefill_chips=4, weight_dtype="fp8"))
        if disaggregated
        else (LLAMA8, H100, dict(n_chips=1))
    )
    for rate in (1.0, 4.0, 16.0, 64.0):
        run = hw.simulate_serving(
            model, where, arrival_rate_per_s=rate, n_requests=60, prompt_len=512, output_len=32, seed=seed, **options
        )
        share = run.within(ttft_s, tpot_s).mean()
        assert run.goodput_per_s(ttft_s, tpot_s) == pytest.approx(run.requests_per_s * share, rel=1e-12, abs=0)
        assert run.goodput_per_s(ttft_s, tpot_s) <= run.requests_per_s
        assert (run.goodput_per_s(ttft_s, tpot_s) == 0) == (share == 0)
    with pytest.raises(ValueError, match="ttft_s must be > 0, got -1"):
        run.goodput_per_s(-1, tpot_s)


def test_chunked_prefill_trades_first_tokens_for_steadier_decoding():
    options = dict(n_requests=600, arrival_rate_per_s=25, prompt_len=2048, output_len=128, seed=1)
    whole = hw.simulate_serving(LLAMA8, H100, **options)
    chunked = hw.simulate_serving(LLAMA8, H100, chunked_prefill=True, max_batch_tokens=512, **options)
    assert chunked.percentile("tpot", 99) < whole.percentile("tpot", 99)
    assert chunked.percentile("ttft", 50) > whole.percentile("ttft", 50)
    assert chunked.step_tokens.max() <= 512


def test_a_cached_prefix_shortens_the_prefill():
    options = dict(n_requests=50, arrival_rate_per_s=0.1, prompt_len=4096, output_len=8)
    cold = hw.simulate_serving(LLAMA8, H100, **options)
    warm = hw.simulate_serving(LLAMA8, H100, prefix_tokens=3584, prefix_hit_rate=1.0, **options)
    rest = hw.inference_step(LLAMA8, H100, 1, 3584, 512).forecast_time_s
    assert np.median(warm.ttft_s) == pytest.approx(rest, rel=1e-9)
    assert np.median(warm.ttft_s) < np.median(cold.ttft_s)


def test_speculative_tokens_per_step_is_leviathans_expectation():
    np.testing.assert_allclose(hw.speculative_tokens_per_step(np.array([0.0, 0.5, 1.0]), 4), [1.0, 1.9375, 5.0])
    assert hw.speculative_tokens_per_step(0.7, 3) == pytest.approx((1 - 0.7**4) / 0.3)
    assert hw.Speculation(3, 0.7).tokens_per_step == pytest.approx((1 - 0.7**4) / 0.3)


def test_speculation_wins_when_memory_bound_and_loses_when_compute_bound():
    draft = hw.model("qwen2.5-1.5b")
    spec = hw.Speculation(draft_tokens=4, acceptance=0.8, draft=draft)
    for batch, wins in ((1, True), (512, False)):
        plain = hw.inference_step(LLAMA8, H100, batch, 1024)
        guessed = hw.inference_step(LLAMA8, H100, batch, 1024, speculation=spec)
        assert guessed.tokens == pytest.approx(batch * spec.tokens_per_step)
        per_token = guessed.forecast_time_s / spec.tokens_per_step
        assert (per_token < plain.forecast_time_s) is wins, batch
    verify = hw.inference_step(LLAMA8, H100, 1, 1024, 5)
    drafts = sum(hw.inference_step(draft, H100, 1, 1024 + i).forecast_time_s for i in range(4))
    guessed = hw.inference_step(LLAMA8, H100, 1, 1024, speculation=spec)
    assert guessed.forecast_time_s == pytest.approx(verify.forecast_time_s + drafts, rel=1e-9)
    ds = hw.model("deepseek-v3")
    mtp = hw.Speculation(1, 0.85).drafter(ds)
    assert mtp.n_layers == 1 and mtp.moe_layers == (True,) and mtp.mtp_layers == 0


def test_speculation_in_the_simulation_shortens_decoding_at_low_load():
    spec = hw.Speculation(draft_tokens=4, acceptance=0.8, draft=hw.model("qwen2.5-1.5b"))
    options = dict(n_requests=100, arrival_rate_per_s=0.5, prompt_len=512, output_len=256, seed=2)
    plain = hw.simulate_serving(LLAMA8, H100, **options)
    fast = hw.simulate_serving(LLAMA8, H100, speculation=spec, **options)
    assert fast.percentile("tpot", 50) < plain.percentile("tpot", 50)
    assert fast.step_tokens.mean() > plain.step_tokens.mean()


def test_a_sure_draft_verifies_k_plus_one_tokens_a_step_priced_as_one_step_each():
    spec = hw.Speculation(draft_tokens=3, acceptance=1.0, draft="one layer")
    drafter = spec.drafter(LLAMA8)
    assert drafter.n_layers == 1 and drafter.params() == pytest.approx(
        LLAMA8.params() - 31 * LLAMA8.table().layer_params(), rel=1e-3
    )
    alone = hw.simulate_serving(LLAMA8, H100, n_requests=1, prompt_len=512, output_len=257, speculation=spec)
    assert list(alone.step_tokens[1:]) == [4] * 64  # 256 tokens after the prefill's first, 4 a step
    first_step = alone.step_end_s[1] - alone.step_end_s[0]
    verify = hw.inference_step(LLAMA8, H100, 1, 512, 4).forecast_time_s
    drafts = sum(hw.inference_step(drafter, H100, 1, 512 + i, 1).forecast_time_s for i in range(3))
    assert first_step == pytest.approx(verify + drafts, rel=1e-9)


def test_disaggregated_pools_move_the_cache_between_them():
    options = dict(n_requests=200, arrival_rate_per_s=5, prompt_len=2048, output_len=64, weight_dtype="fp8")
    split = hw.simulate_serving(LLAMA70, NODE, 8, prefill_chips=4, **options)
    moved = LLAMA70.kv_bytes(2048)
    link = NODE.node_fabric
    np.testing.assert_allclose(split.kv_transfer_s, link.latency_s + moved / (4 * link.bytes_per_s))
    prefill = hw.inference_step(LLAMA70, NODE, 1, 0, 2048, 4, "fp8").forecast_time_s
    assert split.percentile("ttft", 1) == pytest.approx(prefill, rel=1e-9)
    assert (split.finish_s >= split.first_token_s + split.kv_transfer_s).all()
    assert split.goodput_per_s(2.0, 0.1) <= split.goodput_per_s() == split.requests_per_s
    with pytest.raises(ValueError, match="prefill_chips=8 must leave decode chips"):
        hw.simulate_serving(LLAMA70, NODE, 8, prefill_chips=8, **options)


def test_the_public_trace_and_its_lengths():
    conv, code = hw.request_trace("azure-conv-2023"), hw.request_trace("azure-code-2023")
    assert len(conv.arrival_s) == 1718 and len(code.arrival_s) == 879
    assert (np.diff(conv.arrival_s) >= 0).all() and conv.arrival_s[0] == 0
    assert np.median(conv.prompt_tokens) == 1000 and np.median(code.output_tokens) == 13
    assert len(hw.request_trace("azure-conv-2023", segment=2).arrival_s) == 433
    prompts, outputs = conv.sample(10, seed=1)
    assert prompts.shape == outputs.shape == (10,) and set(prompts) <= set(conv.prompt_tokens)
    assert TRACE_FILE.exists()
    replay = hw.simulate_serving(
        LLAMA8,
        H100,
        n_requests=200,
        arrivals_s=conv.arrival_s[:200],
        prompt_len=conv.prompt_tokens[:200],
        output_len=conv.output_tokens[:200],
    )
    assert (replay.output_tokens == conv.output_tokens[:200]).all() and np.isfinite(replay.finish_s).all()


def test_a_full_cache_preempts_and_every_request_still_finishes():
    burst = hw.simulate_serving(LLAMA8, H100, n_requests=300, prompt_len=2048, output_len=2048, max_sequences=512)
    assert burst.preemptions > 0 and np.isfinite(burst.finish_s).all()
    assert (burst.finish_s > burst.first_token_s).all()


@pytest.mark.parametrize(
    ("options", "error", "words"),
    [
        (dict(n_requests=0), ValueError, "n_requests"),
        (dict(estimate="median"), ValueError, "estimate must be one of"),
        (dict(n_requests=3, arrivals_s=[0.0, 2.0, 1.0]), ValueError, "arrivals_s must be n_requests=3 times"),
        (dict(prefix_hit_rate=2.0), ValueError, "prefix_hit_rate must be in \\[0, 1\\]"),
        (dict(prompt_len=10000), ValueError, "exceeds max_batch_tokens=8,192 without chunking"),
        (dict(speculation=(4, 0.8)), TypeError, "speculation must be an hw.Speculation"),
        (dict(chunked_prefill="yes"), TypeError, "chunked_prefill must be True or False"),
        (dict(arrival_rate_per_s=-1.0), ValueError, "arrival_rate_per_s"),
        (dict(seed=-1), ValueError, "seed must be >= 0"),
        (dict(seed=[1, 2]), TypeError, "seed must be one whole number"),
        (dict(recv_interval=0), ValueError, "recv_interval"),
        (dict(recv_interval=2.5), ValueError, "recv_interval"),
    ],
)
def test_bad_input_is_named(options, error, words):
    with pytest.raises(error, match=words):
        hw.simulate_serving(LLAMA8, H100, **{"n_requests": 10, **options})


def test_bad_speculation_and_traces_are_named():
    with pytest.raises(ValueError, match="acceptance must be a probability"):
        hw.Speculation(4, 1.5)
    with pytest.raises(ValueError, match="draft_tokens"):
        hw.Speculation(0, 0.5)
    with pytest.raises(ValueError, match="draft='mtp' needs a model with multi-token-prediction layers"):
        hw.inference_step(LLAMA8, H100, 1, 128, speculation=hw.Speculation(2, 0.5))
    with pytest.raises(ValueError, match="name must be one of"):
        hw.request_trace("sharegpt")
    with pytest.raises(ValueError, match="segment must be one of"):
        hw.request_trace("azure-code-2023", segment=3)
    with pytest.raises(ValueError, match="seed must be a whole number"):
        hw.request_trace("azure-code-2023").sample(10, seed=0.5)


def test_a_closed_loop_of_c_clients_keeps_c_requests_in_flight():
    """Benchmark clients (``--max-concurrency`` C): C requests at once, each finish sends the next at that moment;
    until the last request is sent, C are in the system at every instant (Little: throughput = C / latency)."""
    for clients in (1, 4, 24):
        run = hw.simulate_serving(
            LLAMA8, H100, concurrency=clients, n_requests=120, prompt_len=512, output_len=64, chunked_prefill=True
        )
        assert (run.arrival_s[:clients] == 0).all() and np.isfinite(run.finish_s).all()
        np.testing.assert_array_equal(np.sort(run.arrival_s[clients:]), np.sort(run.finish_s)[: 120 - clients])
        last_sent = run.arrival_s.max()
        probes = np.linspace(0, last_sent, 200, endpoint=False)[1:]
        in_flight = ((run.arrival_s[:, None] <= probes) & (run.finish_s[:, None] > probes)).sum(axis=0)
        assert (in_flight == clients).all()
        inside = run.finish_s <= last_sent  # Little's law over the steady span
        assert inside.sum() / last_sent == pytest.approx(clients / run.latency_s[inside].mean(), rel=0.15)
    one = hw.simulate_serving(LLAMA8, H100, concurrency=1, n_requests=3, prompt_len=1000, output_len=5)
    alone = hw.simulate_serving(LLAMA8, H100, n_requests=1, prompt_len=1000, output_len=5)
    np.testing.assert_allclose(one.ttft_s, alone.ttft_s[0], rtol=1e-12)  # one client: one request at a time
    np.testing.assert_array_equal(one.arrival_s[1:], one.finish_s[:-1])


def test_more_clients_wait_longer_for_their_first_token():
    ttft = [
        np.median(
            hw.simulate_serving(
                LLAMA8, H100, concurrency=c, n_requests=200, prompt_len=1024, output_len=128, chunked_prefill=True
            ).ttft_s
        )
        for c in (1, 8, 64)
    ]
    assert ttft == sorted(ttft) and ttft[-1] > 2 * ttft[0]


@pytest.mark.parametrize(
    "options, words",
    [
        ({"concurrency": 0}, "concurrency"),
        ({"concurrency": 4, "arrival_rate_per_s": 2.0}, "concurrency sets the arrivals itself"),
        ({"concurrency": 4, "arrivals_s": np.zeros(10)}, "concurrency sets the arrivals itself"),
    ],
)
def test_a_closed_loop_refuses_other_arrivals(options, words):
    with pytest.raises(ValueError, match=words):
        hw.simulate_serving(LLAMA8, H100, n_requests=10, **options)


def test_reserving_the_whole_answer_never_preempts():
    """TensorRT-LLM's default capacity scheduler (GUARANTEED_NO_EVICT) admits a request only while the cache holds
    its prompt and its whole answer: no preemption, fewer sequences at once than admitting on the prompt."""
    args = dict(n_requests=300, prompt_len=4096, output_len=2048, chunked_prefill=True)
    eager = hw.simulate_serving(LLAMA70, NODE, 2, **args)
    careful = hw.simulate_serving(LLAMA70, NODE, 2, reserve_output=True, **args)
    assert eager.preemptions > 0 == careful.preemptions
    assert careful.step_sequences.max() < eager.step_sequences.max()
    room = hw.simulate_serving(LLAMA70, NODE, 2, reserve_output=True, n_requests=50, prompt_len=64, output_len=8)
    plain = hw.simulate_serving(LLAMA70, NODE, 2, n_requests=50, prompt_len=64, output_len=8)
    np.testing.assert_allclose(room.finish_s, plain.finish_s)  # with room to spare, the same run
    with pytest.raises(TypeError, match="reserve_output must be True or False"):
        hw.simulate_serving(LLAMA8, H100, n_requests=2, reserve_output="yes")


def test_a_request_the_cache_cannot_hold_alone_is_refused_not_run():
    room = hw.simulate_serving(LLAMA8, H100, n_requests=1, prompt_len=1000, output_len=2)  # fits
    assert room.finish_s[0] > 0
    tokens = int(0.9 * 80 * hw.GB / LLAMA8.kv_bytes_per_token())  # more than the whole HBM's cache
    with pytest.raises(ValueError, match="needs .* of KV cache; Llama 3 8B's cache on 1 x"):
        hw.simulate_serving(LLAMA8, H100, n_requests=2, prompt_len=1000, output_len=[2, tokens])
    # a prefill pool holds a prompt and its first token only; the decode pool the whole request
    with pytest.raises(ValueError, match="on 4 x"):
        hw.simulate_serving(LLAMA70, NODE, 8, n_requests=2, prompt_len=1000, output_len=3 * tokens, prefill_chips=4)


def test_a_disaggregated_prefill_pool_chunks_its_prompts_as_the_engine_does():
    options = dict(n_requests=20, arrival_rate_per_s=2, prompt_len=6000, output_len=8, max_batch_tokens=2048)
    chunked = hw.simulate_serving(LLAMA70, NODE, 8, prefill_chips=4, chunked_prefill=True, **options)
    assert chunked.step_tokens.max() <= 2048  # both pools keep to the step's token budget
    with pytest.raises(ValueError, match="exceeds max_batch_tokens=2,048 without chunking"):
        hw.simulate_serving(LLAMA70, NODE, 8, prefill_chips=4, chunked_prefill=False, **options)


def test_speculative_decodes_keep_to_the_token_budget():
    spec = hw.Speculation(draft_tokens=3, acceptance=0.7, draft="one layer")
    for chunked in (True, False):
        busy = hw.simulate_serving(
            LLAMA8,
            H100,
            n_requests=64,
            prompt_len=64,
            output_len=32,
            max_batch_tokens=128,
            speculation=spec,
            chunked_prefill=chunked,
        )
        assert busy.step_tokens.max() <= 128 and busy.step_sequences.max() <= 128 // 4, chunked
        assert np.isfinite(busy.finish_s).all()
