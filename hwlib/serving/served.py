"""What a simulated serving engine did, request by request and step by step, and the statistics users see:
percentiles of the time to first token, per output token and per request, throughput and goodput. Chapter
:ref:`ch-serving-many`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwlib._checks import Number, as_real_array, one_of, positive

METRICS = ("ttft", "tpot", "latency")
"""Per-request metrics: time to first token, time per output token after it, and the whole request's time."""


@dataclass(frozen=True)
class SimulatedServing:
    """What a simulated engine did: per request its arrival, first token and finish (s), prompt and answer tokens;
    per step its end (s), new tokens and sequences; preemptions; with disaggregated pools each request's KV-cache
    transfer (s); the engine profile whose defaults it ran (``EngineProfile.label``). Chapters :ref:`ch-serving-many`
    and :ref:`ch-serving-techniques` (goodput, disaggregation)."""

    arrival_s: np.ndarray
    first_token_s: np.ndarray
    finish_s: np.ndarray
    prompt_tokens: np.ndarray
    output_tokens: np.ndarray
    step_end_s: np.ndarray
    step_tokens: np.ndarray
    step_sequences: np.ndarray
    preemptions: int
    n_chips: int
    kv_transfer_s: np.ndarray | None = None
    engine: str = ""

    @property
    def ttft_s(self) -> np.ndarray:
        return self.first_token_s - self.arrival_s

    @property
    def tpot_s(self) -> np.ndarray:
        """Time per output token after the first (0 for one-token answers)."""
        after = np.maximum(self.output_tokens - 1, 1)
        return np.where(self.output_tokens > 1, (self.finish_s - self.first_token_s) / after, 0.0)

    @property
    def latency_s(self) -> np.ndarray:
        return self.finish_s - self.arrival_s

    @property
    def duration_s(self) -> float:
        """From the first arrival to the last finish."""
        return float(self.finish_s.max() - self.arrival_s.min())

    @property
    def output_tokens_per_s(self) -> float:
        """Output tokens per second over ``duration_s``."""
        return float(self.output_tokens.sum() / self.duration_s)

    @property
    def requests_per_s(self) -> float:
        """Completed requests per second over ``duration_s``: the throughput that ``goodput_per_s`` shares."""
        return float(len(self.arrival_s) / self.duration_s)

    def steady_per_s(self) -> tuple[float, float]:
        """Completed requests and their output tokens per second while requests keep arriving: those finishing in
        the second half of the arrival span, over its length (a burst: all of them over the whole duration). Apart
        from the first requests' warm-up and the last ones' drain, it is the offered load where the engine keeps
        up and its capacity where it does not."""
        start, end = float(np.median(self.arrival_s)), float(self.arrival_s.max())
        if end <= start:
            return self.requests_per_s, self.output_tokens_per_s
        done = (self.finish_s > start) & (self.finish_s <= end)
        return float(done.sum() / (end - start)), float(self.output_tokens[done].sum() / (end - start))

    def percentile(self, metric: str, q: Number) -> Number:
        """The ``q``-th percentile (0-100) of ``metric`` (``METRICS``) over the requests, in seconds."""
        one_of("metric", metric, METRICS)
        q = as_real_array("q", q, minimum=0.0)
        if (q > 100).any():
            raise ValueError(f"q must be a percentile in [0, 100], got {q!r}")
        values = {"ttft": self.ttft_s, "tpot": self.tpot_s, "latency": self.latency_s}[metric]
        result = np.percentile(values, q)
        return float(result) if np.ndim(result) == 0 else result

    def within(self, ttft_s: float = np.inf, tpot_s: float = np.inf) -> np.ndarray:
        """Which requests met both targets: a first token within ``ttft_s`` and every further one within ``tpot_s``
        on average (s; inf: no target)."""
        ttft = float(positive("ttft_s", ttft_s, allow_inf=True))
        tpot = float(positive("tpot_s", tpot_s, allow_inf=True))
        return (self.ttft_s <= ttft) & (self.tpot_s <= tpot)

    def goodput_per_s(self, ttft_s: float = np.inf, tpot_s: float = np.inf) -> float:
        """Requests per second that met both targets (Zhong et al., "DistServe", OSDI 2024; s, inf: no target),
        over the span that ``requests_per_s`` counts, the first arrival to the last finish: ``requests_per_s``
        times the share of requests ``within`` the targets, so never more than the throughput."""
        return float(self.within(ttft_s, tpot_s).sum() / self.duration_s)


def steps_to_reach(first_s: float, growth_s: float, gap_s: float) -> int:
    """The fewest steps of first + growth x i seconds that last at least ``gap_s`` (at least one)."""
    if gap_s <= first_s:
        return 1
    if growth_s <= 0:
        return int(np.ceil(gap_s / first_s))
    half = first_s - growth_s / 2
    return max(1, int(np.ceil((-half + np.sqrt(half * half + 2 * growth_s * gap_s)) / growth_s)))


def line_ends(lines: list[tuple[float, int, float, float]]) -> np.ndarray:
    """The end of every step of the decode stretches ``lines``."""
    if not lines:
        return np.zeros(0)
    start, steps, first, growth = (np.array(column) for column in zip(*lines))
    offsets = np.repeat(np.cumsum(steps) - steps, steps)
    i = np.arange(int(steps.sum())) - offsets + 1.0  # steps done, 1 to the stretch's count
    return np.repeat(start, steps) + i * np.repeat(first, steps) + np.repeat(growth, steps) * i * (i - 1) / 2
