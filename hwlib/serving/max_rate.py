"""The highest load a simulated engine serves within latency targets: the rate of Poisson arrivals, or the number of
closed-loop clients, at which the ``percentile``-th percentiles of the time to first token and per output token
still meet their targets, found by simulating (``hw.simulate_serving``) at loads bracketed by doubling or halving
and then bisected. Chapter :ref:`ch-serving-many`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hwlib._checks import as_real_array, describe, positive
from hwlib.data.records import Chip, Cluster, ModelShape
from hwlib.serving.simulate import simulate_serving

QUIETEST_SHARE = 1 / 1024
"""The lowest rate tried, as a share of the engine's throughput when every request arrives at once: there requests
rarely overlap, so a target missed there is missed by a request served alone."""


@dataclass(frozen=True)
class MaxArrivalRate:
    """The highest Poisson arrival rate (requests/s) that meets the targets, within ``rel_tol`` (inf: even all at
    once; 0: none, not even the quietest rate tried); the ``percentile``-th percentiles of the time to first token
    and per output token reached there (s; with rate 0, those of the quietest rate tried); the simulations run.
    Chapter :ref:`ch-serving-many`."""

    arrival_rate_per_s: float
    ttft_percentile_s: float
    tpot_percentile_s: float
    percentile: float
    n_simulations: int
    rel_tol: float


def _seed(seed: object) -> int:
    if np.ndim(seed):
        raise TypeError(f"seed must be one whole number >= 0, got {describe(seed)}")
    return int(as_real_array("seed", seed, minimum=0.0, integral=True))


def _targets(ttft_s: float, tpot_s: float, percentile: float) -> tuple[dict, float]:
    """The targets (s; inf: none, but not both) and the percentile (0-100], checked."""
    targets = {
        name: float(positive(name, value, allow_inf=True)) for name, value in (("ttft_s", ttft_s), ("tpot_s", tpot_s))
    }
    if not any(map(math.isfinite, targets.values())):
        raise ValueError("ttft_s and tpot_s are both inf: give at least one finite target (s)")
    level = float(positive("percentile", percentile))
    if level > 100:
        raise ValueError(f"percentile must be in (0, 100], got {describe(percentile)}")
    return targets, level


def max_arrival_rate(
    model: ModelShape,
    where: Chip | Cluster,
    n_chips: int = 1,
    *,
    ttft_s: float,
    tpot_s: float,
    percentile: float = 99.0,
    rel_tol: float = 0.02,
    n_requests: int = 1000,
    seed: int = 0,
    **options: object,
) -> MaxArrivalRate:
    """The highest rate of Poisson arrivals (requests/s) at which ``hw.simulate_serving`` of ``n_requests``
    requests keeps the ``percentile``-th percentile (0-100] of the time to first token within ``ttft_s`` and of the
    time per output token within ``tpot_s`` (s; inf: no target, but one must be finite). ``options`` go to
    ``simulate_serving`` (lengths, dtypes, the engine's settings, pools), all but the arrivals.

    Every simulation uses ``seed``, so each rate sees the same arrivals compressed in time. The search starts at
    the throughput of all requests arriving at once (inf if that meets the targets), doubles or halves the rate
    until one meets the targets and the next does not (0 if even ``QUIETEST_SHARE`` of that throughput misses),
    then bisects until the two are within ``rel_tol`` of each other: the answer meets the targets and a rate at
    most ``1 + rel_tol`` times it does not. Percentiles need not rise at every step of the rate (at low load the
    few requests that happen to collide set a tail), so a higher rate may meet them again. Past the engine's
    capacity they grow with the run's length, so a longer run lowers the answer towards the capacity.
    Chapter :ref:`ch-serving-many`."""
    targets, level = _targets(ttft_s, tpot_s, percentile)
    tolerance = float(positive("rel_tol", rel_tol))
    if tolerance >= 1:
        raise ValueError(f"rel_tol must be in (0, 1), got {describe(rel_tol)}")
    for name in ("arrival_rate_per_s", "arrivals_s"):
        if name in options:
            raise TypeError(f"max_arrival_rate searches the arrival rate itself: drop {name}={describe(options[name])}")
    fixed = dict(options, n_requests=n_requests, seed=_seed(seed))
    reached: dict[float, tuple[float, float]] = {}

    def simulated_per_s(rate: float) -> float:
        """Simulate at ``rate`` (requests/s), keep its percentiles and give its throughput (requests/s)."""
        run = simulate_serving(model, where, n_chips, arrival_rate_per_s=rate, **fixed)
        reached[rate] = (run.percentile("ttft", level), run.percentile("tpot", level))
        return run.requests_per_s

    def meets(rate: float) -> bool:
        if rate not in reached:
            simulated_per_s(rate)
        return reached[rate][0] <= targets["ttft_s"] and reached[rate][1] <= targets["tpot_s"]

    def answer(rate: float, percentiles_at: float) -> MaxArrivalRate:
        return MaxArrivalRate(rate, *reached[percentiles_at], level, len(reached), tolerance)

    flooded = simulated_per_s(np.inf)
    if meets(np.inf):
        return answer(np.inf, np.inf)
    if meets(flooded):
        low, high = flooded, 2 * flooded
        while meets(high):
            low, high = high, 2 * high
    else:
        low, high = flooded / 2, flooded
        while not meets(low):
            if low <= QUIETEST_SHARE * flooded:
                return answer(0.0, low)
            low, high = low / 2, low
    while high - low > tolerance * low:
        middle = math.sqrt(low * high)
        low, high = (middle, high) if meets(middle) else (low, middle)
    return answer(low, low)


MOST_CLIENTS = 4096
"""The most closed-loop clients ``max_concurrency`` tries: more than any engine profile runs at once."""
CLIENT_WAVES = 3
"""Requests each client sends in ``max_concurrency``'s simulations."""


@dataclass(frozen=True)
class MaxConcurrency:
    """The most closed-loop clients whose requests meet the targets (0: not even one; ``most`` where even that many
    do); the ``percentile``-th percentiles of the time to first token and per output token reached there (s; with
    0, those of one client) and the output tokens/s; the simulations run. Chapter :ref:`ch-serving-many`."""

    concurrency: int
    ttft_percentile_s: float
    tpot_percentile_s: float
    output_tokens_per_s: float
    percentile: float
    n_simulations: int


def max_concurrency(
    model: ModelShape,
    where: Chip | Cluster,
    n_chips: int = 1,
    *,
    ttft_s: float,
    tpot_s: float,
    percentile: float = 99.0,
    waves: int = CLIENT_WAVES,
    most: int = MOST_CLIENTS,
    seed: int = 0,
    **options: object,
) -> MaxConcurrency:
    """The most clients of a benchmark's closed loop (``simulate_serving(concurrency=C)``, each client sending
    ``waves`` requests) whose ``percentile``-th percentiles of the time to first token and per output token meet
    ``ttft_s`` and ``tpot_s`` (s; inf: no target, but one must be finite): the twin of ``max_arrival_rate`` for
    the load benchmarks report, ``--max-concurrency`` in vLLM's and SGLang's scripts. ``options`` go to
    ``simulate_serving``, all but the load. Doubles from one client until the targets are missed (or ``most``
    clients meet them), then bisects the whole numbers between. Chapter :ref:`ch-serving-many`."""
    targets, level = _targets(ttft_s, tpot_s, percentile)
    for name in ("arrival_rate_per_s", "arrivals_s", "concurrency", "n_requests"):
        if name in options:
            raise TypeError(f"max_concurrency sets the load itself: drop {name}={describe(options[name])}")
    rounds = int(positive("waves", waves, integral=True))
    ceiling = int(positive("most", most, integral=True))
    reached: dict[int, tuple[float, float, float]] = {}

    def meets(clients: int) -> bool:
        if clients not in reached:
            run = simulate_serving(
                model, where, n_chips, concurrency=clients, n_requests=rounds * clients, seed=_seed(seed), **options
            )
            reached[clients] = (run.percentile("ttft", level), run.percentile("tpot", level), run.output_tokens_per_s)
        ttft, tpot, _ = reached[clients]
        return ttft <= targets["ttft_s"] and tpot <= targets["tpot_s"]

    def answer(clients: int, at: int) -> MaxConcurrency:
        return MaxConcurrency(clients, *reached[at], level, len(reached))

    if not meets(1):
        return answer(0, 1)
    low = 1
    while low < ceiling and meets(min(2 * low, ceiling)):
        low = min(2 * low, ceiling)
    if low == ceiling:
        return answer(ceiling, ceiling)
    high = min(2 * low, ceiling)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if meets(middle) else (low, middle)
    return answer(low, low)
