"""The serving simulation against measured runs under load (``LoadRun``): each run simulated on its own system at
its own load and lengths, one replica receiving its share of the requests, at the forecast and at the bound; and
speculative decoding's forecast speed-up against measured ones (``SpeculationRun``).

A measured throughput above what the bound's simulation sustains, or a measured latency below the bound's, would
be a bug in the model. Chapter :ref:`ch-serving-measured`.
"""

from __future__ import annotations

import numpy as np

from hwlib._checks import one_of, positive, whole_count
from hwlib.data import chip, cluster, model
from hwlib.data import load_measurements as measurements
from hwlib.data.records import LoadRun, SpeculationRun, require
from hwlib.data.request_traces import request_trace
from hwlib.serving.served import SimulatedServing
from hwlib.serving.simulate import ESTIMATES, simulate_serving
from hwlib.serving.speculative import Speculation
from hwlib.serving.step import inference_step

BOUND_REQUESTS = 1000
"""Requests the bound's simulation of a run serves: at the measured rate the bound's engine is far from
saturation, and its percentiles settle within fewer requests."""
KEEPS_UP = 0.95
"""Share of the offered requests/s an engine must complete while requests arrive to count as keeping up (the
half-window's Poisson count varies by a few per cent)."""
CAPACITY_REQUESTS = 8192
"""Requests each replica serves, all at once, to measure its capacity: about what an MLPerf Offline run (600 s
at the system's rate) gives each chip."""
_SYSTEM_WIDE = ("requests_per_s", "output_tokens_per_s")


def load_runs() -> tuple[LoadRun, ...]:
    """Every measured run under load (``data/load_measurements.py``). Chapter :ref:`ch-serving-measured`."""
    return measurements.RUNS


def load_run_lengths(run: LoadRun, n_requests: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Prompt and answer tokens of ``n_requests`` requests as ``run`` states them: fixed, or drawn from its
    dataset with the answers scaled to the run's measured mean (at least one token)."""
    run = require(LoadRun, "run", run, "hw.serving.load_check.load_runs()[0]")
    count = whole_count("n_requests", n_requests)
    if not run.lengths:
        return np.full(count, int(run.prompt_len)), np.full(count, int(round(run.output_len)))
    trace = request_trace(run.lengths)
    prompts, answers = trace.sample(count, seed)
    scale = run.output_len / trace.output_tokens.mean()
    return prompts, np.maximum(np.rint(answers * scale), 1).astype(np.int64)


def simulate_load_run(
    run: LoadRun, *, rate_scale: float = 1.0, estimate: str = "forecast", n_requests: int | None = None, seed: int = 0
) -> SimulatedServing:
    """One replica of ``run`` serving ``n_requests`` (default the run's) at its share of the run's arrival rate
    times ``rate_scale`` (Poisson), with the run's lengths, dtypes, batch limit and prefix sharing. Chapter
    :ref:`ch-serving-measured`."""
    run = require(LoadRun, "run", run, "hw.serving.load_check.load_runs()[0]")
    one_of("estimate", estimate, ESTIMATES)
    scale = float(positive("rate_scale", rate_scale, allow_inf=True))
    count = run.n_requests if n_requests is None else whole_count("n_requests", n_requests)
    key = (run, scale, estimate, count, int(seed))
    if key not in _SIMULATED:
        _SIMULATED[key] = _simulated(*key)
    return _SIMULATED[key]


_SIMULATED: dict[tuple, SimulatedServing] = {}
"""Simulations already run (a run's checks share them)."""


def _simulated(run: LoadRun, scale: float, estimate: str, n_requests: int, seed: int) -> SimulatedServing:
    prompts, answers = load_run_lengths(run, n_requests, seed)
    where = chip(run.where_key) if run.tensor_parallel == 1 else cluster(run.where_key)
    return simulate_serving(
        model(run.model_key),
        where,
        run.tensor_parallel,
        arrival_rate_per_s=float(run.rate_per_s.value) * scale / run.replicas,
        prompt_len=prompts,
        output_len=answers,
        n_requests=n_requests,
        max_sequences=run.max_sequences,
        chunked_prefill=run.chunked_prefill,
        max_batch_tokens=max(8192, int(prompts.max())),
        prefix_tokens=run.prefix_tokens,
        prefix_hit_rate=run.prefix_hit_rate,
        estimate=estimate,
        seed=seed,
        **run.dtypes,
    )


def simulated_metric(run: LoadRun, simulated: SimulatedServing, metric: str) -> float:
    """``metric`` (a ``LOAD_METRICS`` name) of one replica's simulation, for the whole system (s, requests/s or
    tokens/s: while requests arrive, ``SimulatedServing.steady_per_s``)."""
    if metric in _SYSTEM_WIDE:
        return simulated.steady_per_s()[_SYSTEM_WIDE.index(metric)] * run.replicas
    name, statistic = metric.removesuffix("_s").rsplit("_", 1)
    values = getattr(simulated, f"{name}_s")
    return float(values.mean()) if statistic == "mean" else float(np.percentile(values, float(statistic[1:])))


def simulated_capacity_per_s(run: LoadRun, estimate: str = "forecast") -> float:
    """Requests/s the whole system completes given ``CAPACITY_REQUESTS`` requests per replica at once, as an
    MLPerf Offline run gives each of its chips (at the bound a quarter as many: their drain weighs more, so the
    bound's capacity comes out lower, which only makes the check that no run exceeds it stricter). Chapter
    :ref:`ch-serving-measured`."""
    count = CAPACITY_REQUESTS if estimate == "forecast" else CAPACITY_REQUESTS // 4
    simulated = simulate_load_run(run, rate_scale=np.inf, estimate=estimate, n_requests=count)
    return simulated.requests_per_s * run.replicas


def same_share_scale(run: LoadRun) -> float:
    """The rate scale at which the forecast's simulation runs at the share of its capacity the measured run ran at
    of its own (1 where the run states no capacity)."""
    if run.capacity_per_s is None:
        return 1.0
    return simulated_capacity_per_s(run) / float(run.capacity_per_s.value)


def largest_rate_within_limits(run: LoadRun, estimate: str = "forecast", steps: int = 6) -> float:
    """The largest arrival rate (requests/s, whole system) at which the simulation keeps up (``KEEPS_UP``: a run
    hours long, as MLPerf's, would see any backlog grow past the limits) and its p99 TTFT and TPOT meet the
    run's ``limits``: the middle of the last bracket of ``steps`` halvings between half and 1.5 times the run's
    rate (the first at the run's own). What an MLPerf Server result reports. Chapter :ref:`ch-serving-measured`."""
    run = require(LoadRun, "run", run, "hw.serving.load_check.load_runs()[0]")
    if run.limits is None:
        raise ValueError(f"run {run.key!r} states no latency limits")
    ttft_limit, tpot_limit = run.limits

    def meets(scale: float) -> bool:
        simulated = simulate_load_run(run, rate_scale=scale, estimate=estimate)
        offered = float(run.rate_per_s.value) * scale / run.replicas
        keeps_up = simulated.steady_per_s()[0] >= KEEPS_UP * offered
        latencies = simulated.percentile("ttft", 99) <= ttft_limit and simulated.percentile("tpot", 99) <= tpot_limit
        return keeps_up and latencies

    low, high = 0.5, 1.5
    for _ in range(whole_count("steps", steps)):
        middle = (low + high) / 2
        low, high = (middle, high) if meets(middle) else (low, middle)
    return (low + high) / 2 * float(run.rate_per_s.value)


def load_check(runs: tuple[LoadRun, ...] | None = None, n_requests: int | None = None) -> list[dict]:
    """One row per measured number of every run (default ``load_runs()``, each serving ``n_requests``, default
    its own) and one for its capacity where stated:
    the run, the metric, the measured value, the simulation's at the forecast (at the measured rate, and at the
    measured share of capacity) and at the bound, and the forecast's errors (over measured, minus 1). Chapter
    :ref:`ch-serving-measured`."""
    rows = []
    for run in load_runs() if runs is None else runs:
        forecast = simulate_load_run(run, n_requests=n_requests)
        share = simulate_load_run(run, rate_scale=same_share_scale(run), n_requests=n_requests)
        count = min(run.n_requests if n_requests is None else n_requests, BOUND_REQUESTS)
        bound = simulate_load_run(run, estimate="bound", n_requests=count)
        measured = {metric: float(value.value) for metric, value in run.measured.items()}
        if run.capacity_per_s is not None:
            capacity = simulated_capacity_per_s(run)
            rows.append(
                _row(
                    run,
                    "capacity_per_s",
                    float(run.capacity_per_s.value),
                    capacity,
                    capacity,
                    simulated_capacity_per_s(run, "bound"),
                )
            )
        for metric, value in measured.items():
            at_share = simulated_metric(run, share, metric)
            if metric in _SYSTEM_WIDE:  # what the engine completes at the same share is not the measured load
                at_share = simulated_metric(run, forecast, metric)
            rows.append(
                _row(
                    run,
                    metric,
                    value,
                    simulated_metric(run, forecast, metric),
                    at_share,
                    simulated_metric(run, bound, metric),
                )
            )
    return rows


def _row(run: LoadRun, metric: str, measured: float, forecast: float, at_share: float, bound: float) -> dict:
    return {
        "run": run.key,
        "metric": metric,
        "measured": measured,
        "forecast": forecast,
        "at_share": at_share,
        "bound": bound,
        "error": forecast / measured - 1,
        "error_at_share": at_share / measured - 1,
    }


def speculation_runs() -> tuple[SpeculationRun, ...]:
    """Every measured speed-up curve of speculative decoding. Chapter :ref:`ch-serving-measured`."""
    return measurements.SPECULATION_RUNS


def speculation_check(run: SpeculationRun) -> dict:
    """``run``'s speed-ups against the forecast's (``hw.inference_step`` with and without speculation at the run's
    batches and context), the acceptance fitted so that the first batch matches: the acceptance, and per batch
    the measured and forecast speed-ups and the error (forecast over measured, minus 1). Chapter
    :ref:`ch-serving-measured`."""
    run = require(SpeculationRun, "run", run, "hw.serving.load_check.speculation_runs()[0]")
    target, where = model(run.model_key), chip(run.chip_key)
    draft = run.draft if run.draft == "one layer" else model(run.draft)
    batches = np.array(run.batches)
    plain = np.asarray(inference_step(target, where, batches, run.context_len).forecast_time_s)

    def speedups(acceptance: float) -> np.ndarray:
        setup = Speculation(run.draft_tokens, acceptance, draft)
        step = inference_step(target, where, batches, run.context_len, speculation=setup)
        return setup.tokens_per_step * plain / np.asarray(step.forecast_time_s)

    measured = np.array([float(value) for value in run.speedups])
    low, high = 0.0, 1.0
    for _ in range(40):  # the speed-up grows with the acceptance: bisect for the first batch's
        middle = (low + high) / 2
        low, high = (middle, high) if speedups(middle)[0] < measured[0] else (low, middle)
    forecast = speedups((low + high) / 2)
    return {
        "acceptance": (low + high) / 2,
        "batches": batches,
        "measured": measured,
        "forecast": forecast,
        "error": forecast / measured - 1,
    }
