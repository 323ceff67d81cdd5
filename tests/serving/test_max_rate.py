"""The highest arrival rate within latency targets (``hwlib.serving.max_rate``): the rate it finds meets the
targets and a tenth more does not, its edges (every rate, none), and bad input named."""

import math

import pytest

import hwlib as hw
from hwlib.serving.max_rate import QUIETEST_SHARE, MaxArrivalRate, max_arrival_rate

LLAMA8, H100 = hw.model("llama-3-8b"), hw.chip("h100-sxm")
SMALL = dict(n_requests=200, prompt_len=512, output_len=64)
"""A workload small enough that a search takes a fraction of a second."""


def _percentiles(rate: float, q: float, seed: int = 0) -> tuple[float, float]:
    run = hw.simulate_serving(LLAMA8, H100, arrival_rate_per_s=rate, seed=seed, **SMALL)
    return run.percentile("ttft", q), run.percentile("tpot", q)


@pytest.mark.parametrize(
    ("targets", "seed"),
    [(dict(ttft_s=0.1, tpot_s=0.02), 0), (dict(ttft_s=0.05, tpot_s=0.015), 1), (dict(ttft_s=0.2, tpot_s=0.03), 2)],
)
def test_the_rate_found_meets_the_targets_and_a_tenth_more_does_not(targets, seed):
    found = max_arrival_rate(LLAMA8, H100, **targets, percentile=90, seed=seed, **SMALL)
    assert isinstance(found, MaxArrivalRate) and 0 < found.arrival_rate_per_s < math.inf
    assert hw.max_arrival_rate is max_arrival_rate
    assert (found.percentile, found.rel_tol) == (90, 0.02) and 3 <= found.n_simulations <= 20
    at = _percentiles(found.arrival_rate_per_s, 90, seed)
    assert at == (found.ttft_percentile_s, found.tpot_percentile_s)
    assert at[0] <= targets["ttft_s"] and at[1] <= targets["tpot_s"]
    above = _percentiles(1.1 * found.arrival_rate_per_s, 90, seed)
    assert above[0] > targets["ttft_s"] or above[1] > targets["tpot_s"]


def test_a_tighter_tolerance_brackets_the_rate_more_closely_with_more_simulations():
    loose = max_arrival_rate(LLAMA8, H100, ttft_s=0.1, tpot_s=0.02, rel_tol=0.2, **SMALL)
    tight = max_arrival_rate(LLAMA8, H100, ttft_s=0.1, tpot_s=0.02, rel_tol=0.01, **SMALL)
    assert tight.n_simulations > loose.n_simulations
    assert loose.arrival_rate_per_s <= tight.arrival_rate_per_s <= 1.2 * loose.arrival_rate_per_s


def test_targets_every_rate_meets_give_inf_and_targets_none_meets_give_zero():
    every = max_arrival_rate(LLAMA8, H100, ttft_s=1e3, tpot_s=1.0, **SMALL)
    assert every.arrival_rate_per_s == math.inf and every.n_simulations == 1
    burst = hw.simulate_serving(LLAMA8, H100, **SMALL)
    assert every.ttft_percentile_s == burst.percentile("ttft", 99)
    prefill = hw.inference_step(LLAMA8, H100, 1, 0, 512).forecast_time_s
    none = max_arrival_rate(LLAMA8, H100, ttft_s=prefill / 2, tpot_s=math.inf, **SMALL)
    assert none.arrival_rate_per_s == 0 and none.ttft_percentile_s >= prefill
    assert none.n_simulations >= math.log2(1 / QUIETEST_SHARE)


@pytest.mark.parametrize(
    ("options", "error", "words"),
    [
        (dict(ttft_s=-0.1, tpot_s=0.02), ValueError, "ttft_s must be > 0, got -0.1"),
        (dict(ttft_s=0.1, tpot_s="fast"), TypeError, "tpot_s must be a real number"),
        (dict(ttft_s=math.inf, tpot_s=math.inf), ValueError, "ttft_s and tpot_s are both inf"),
        (dict(ttft_s=0.1, tpot_s=0.02, percentile=0), ValueError, "percentile must be > 0, got 0"),
        (dict(ttft_s=0.1, tpot_s=0.02, percentile=101), ValueError, "percentile must be in \\(0, 100\\], got 101"),
        (dict(ttft_s=0.1, tpot_s=0.02, rel_tol=1.0), ValueError, "rel_tol must be in \\(0, 1\\), got 1.0"),
        (dict(ttft_s=0.1, tpot_s=0.02, rel_tol=math.nan), ValueError, "rel_tol must not be NaN"),
        (dict(ttft_s=0.1, tpot_s=0.02, seed=-1), ValueError, "seed must be >= 0, got -1"),
        (dict(ttft_s=0.1, tpot_s=0.02, seed=[1, 2]), TypeError, "seed must be one whole number"),
        (dict(ttft_s=0.1, tpot_s=0.02, arrival_rate_per_s=5.0), TypeError, "drop arrival_rate_per_s=5.0"),
        (dict(ttft_s=0.1, tpot_s=0.02, arrivals_s=[0.0]), TypeError, "drop arrivals_s=\\[0.0\\]"),
        (dict(ttft_s=0.1, tpot_s=0.02, n_requests=0), ValueError, "n_requests must be > 0"),
    ],
)
def test_bad_input_is_named(options, error, words):
    with pytest.raises(error, match=words):
        max_arrival_rate(LLAMA8, H100, **{**SMALL, **options})


def test_max_concurrency_is_the_most_clients_that_meet_the_targets():
    from hwlib.serving.max_rate import max_concurrency

    model, chip = hw.model("llama-3-8b"), hw.chip("H100-SXM")
    lengths = dict(prompt_len=1024, output_len=128, engine="vllm")
    most = max_concurrency(model, chip, ttft_s=0.3, tpot_s=0.05, **lengths)
    assert most.concurrency > 1 and most.ttft_percentile_s <= 0.3 and most.tpot_percentile_s <= 0.05

    def p99(clients):
        run = hw.simulate_serving(model, chip, concurrency=clients, n_requests=3 * clients, **lengths)
        return run.percentile("ttft", 99), run.percentile("tpot", 99)

    assert p99(most.concurrency) == pytest.approx((most.ttft_percentile_s, most.tpot_percentile_s))
    ttft, tpot = p99(most.concurrency + 1)
    assert ttft > 0.3 or tpot > 0.05  # one client more misses a target
    assert max_concurrency(model, chip, ttft_s=1e-4, tpot_s=0.05, **lengths).concurrency == 0
    assert max_concurrency(model, chip, ttft_s=60.0, tpot_s=1.0, most=16, **lengths).concurrency == 16
    with pytest.raises(TypeError, match="max_concurrency sets the load itself: drop concurrency"):
        max_concurrency(model, chip, ttft_s=0.3, tpot_s=0.05, concurrency=4)
    with pytest.raises(ValueError, match="both inf"):
        max_concurrency(model, chip, ttft_s=float("inf"), tpot_s=float("inf"))
