"""The serving simulation against measured runs under load (``LoadRun``): each run simulated on its own system at
its own load and lengths, one replica receiving its share of the requests, at the forecast and at the bound; and
speculative decoding's forecast speed-up against measured ones (``SpeculationRun``).

A measured throughput above what the bound's simulation sustains, or a measured latency below the bound's, would
be a bug in the model. Chapter :ref:`ch-serving-many`.
"""

from __future__ import annotations

import numpy as np

from hwlib._checks import one_of, positive, whole_count
from hwlib.data import chip, cluster, concurrency_runs, model
from hwlib.data import load_measurements as measurements
from hwlib.data.records import LoadRun, SpeculationRun, require
from hwlib.data.request_traces import request_trace
from hwlib.efficiency import Efficiency
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
    """Every measured run under load (``data/load_measurements.py``). Chapter :ref:`ch-serving-many`."""
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
    :ref:`ch-serving-many`."""
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
    :ref:`ch-serving-many`."""
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
    rate (the first at the run's own). What an MLPerf Server result reports. Chapter :ref:`ch-serving-many`."""
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
    :ref:`ch-serving-many`."""
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


CLOSED_LOOP_WAVES = 3
"""Requests each client of a closed-loop run sends in its simulation (``concurrency_check``) where the run does not
say how many its benchmark sent: enough for the first wave's all-at-once start to weigh a third."""
CLOSED_LOOP_LEAST = 60
"""The fewest requests a closed-loop run's simulation serves (few clients need more waves to settle)."""


def concurrency_check(runs: object = None) -> object:
    """Closed-loop runs (default every run of ``hwlib.data.concurrency_runs``, or a table of some of them) simulated as
    run: their clients (``concurrency``), lengths (drawn uniformly between ``length_low`` of the stated ones and the
    stated ones, with a fixed seed), tensor-parallel chips, expert and attention data parallelism and precision, under
    their engine's profile, the requests the run sent (else ``CLOSED_LOOP_WAVES`` a client). The table gains the
    forecast simulation's mean time to first token and per output token (``ttft_s``, ``tpot_s``), their errors
    (simulated over measured, minus 1), and the bounds: the shortest prompt's prefill alone at the bound
    (``ttft_bound_s``: no first token comes sooner) and the bound's simulation's mean time per output token
    (``tpot_bound_s``); and at the percentile the run prints (``tail_percentile``) the forecast's
    (``ttft_tail_forecast_s``, ``tpot_tail_forecast_s``) and their errors (``ttft_tail_error``, ``tpot_tail_error``; NaN
    where none is printed); all NaN for a run whose weights leave its engine's default share of memory no cache (its
    recipe set another). Chapter :ref:`ch-serving-many`."""
    table = concurrency_runs.concurrency_runs() if runs is None else _closed_loop_table(runs)
    columns = {
        name: []
        for name in ("ttft_s", "tpot_s", "ttft_bound_s", "tpot_bound_s", "ttft_tail_forecast_s", "tpot_tail_forecast_s")
    }
    for run in table.itertuples():
        key = (
            run.engine,
            run.model,
            run.cluster,
            run.chips,
            bool(run.expert_parallel),
            bool(run.attention_dp),
            run.precision,
            run.prompt_tokens,
            run.output_tokens,
            run.length_low,
            run.concurrency,
            run.requests,
            run.tail_percentile,
        )
        if key not in _CLOSED_LOOPS:
            _CLOSED_LOOPS[key] = _closed_loop(*key)
        for name, value in zip(columns, _CLOSED_LOOPS[key]):
            columns[name].append(value)
    for name, values in columns.items():
        table[name] = values
    table["ttft_error"] = table["ttft_s"] / table["ttft_mean_s"] - 1
    table["tpot_error"] = table["tpot_s"] / table["tpot_mean_s"] - 1
    table["ttft_tail_error"] = table["ttft_tail_forecast_s"] / table["ttft_tail_s"] - 1
    table["tpot_tail_error"] = table["tpot_tail_forecast_s"] / table["tpot_tail_s"] - 1
    return table


def _closed_loop_table(runs: object) -> object:
    """A copy of ``runs``, a table of some of ``concurrency_runs()``'s rows, else a TypeError or ValueError."""
    import pandas as pd

    if not isinstance(runs, pd.DataFrame):
        raise TypeError(f"runs must be None or a pandas DataFrame of concurrency_runs() rows, got {runs!r:.80}")
    missing = sorted(set(concurrency_runs.concurrency_runs().columns) - set(runs.columns))
    if missing:
        raise ValueError(f"runs lacks the columns {missing} of concurrency_runs()")
    return runs.copy()


def _closed_loop(
    engine,
    model_key,
    cluster_key,
    chips,
    expert_parallel,
    attention_dp,
    precision,
    prompt,
    answer,
    low,
    clients,
    sent,
    tail,
):
    where, served = cluster(cluster_key), model(model_key)
    count = int(sent) if sent else max(CLOSED_LOOP_WAVES * clients, CLOSED_LOOP_LEAST)
    rng = np.random.default_rng(0)
    shortest = max(int(np.ceil(low * prompt)), 1)
    prompts = rng.integers(shortest, prompt + 1, count)
    answers = rng.integers(max(int(np.ceil(low * answer)), 2), answer + 1, count)
    options = dict(
        prompt_len=prompts,
        output_len=answers,
        n_requests=count,
        concurrency=clients,
        precision=precision,
        engine=engine,
        expert_parallel=expert_parallel,
        attention_dp=attention_dp,
    )
    try:
        forecast = simulate_serving(served, where, chips, **options)
    except ValueError as error:
        if "with room for a KV cache" not in str(error):
            raise
        return (np.nan,) * 6
    bound = simulate_serving(served, where, chips, estimate="bound", **options)
    split = dict(expert_parallel=expert_parallel, attention_dp=attention_dp)
    alone = inference_step(served, where, 1, 0, shortest, chips, precision=precision, **split)
    return (
        float(forecast.ttft_s.mean()),
        float(forecast.tpot_s.mean()),
        float(alone.time_s),
        float(bound.tpot_s.mean()),
        float(forecast.percentile("ttft", tail)) if tail else np.nan,
        float(forecast.percentile("tpot", tail)) if tail else np.nan,
    )


_CLOSED_LOOPS: dict[tuple, tuple[float, ...]] = {}
"""Each closed-loop run's simulated times, by its configuration, once simulated."""


def request_overhead_fit() -> float:
    """The seconds a server takes between a request's sending and its scheduling, as the closed-loop runs show it
    where nothing else can: one client and the shortest prompts (200 tokens), whose prefill is short and whose
    request waits for no other. The median of the measured time to first token less the simulated one without the
    overhead (the value stored in ``calibrated.REQUEST_OVERHEAD_S``). Chapter :ref:`ch-serving-many`."""
    runs = concurrency_runs.concurrency_runs()
    runs = runs[runs["source"] == concurrency_runs.SOURCES[0]]
    runs = runs[(runs["concurrency"] == 1) & (runs["prompt_tokens"] == runs["prompt_tokens"].min())]
    gaps = []
    for run in runs.itertuples():
        simulated = simulate_serving(
            model(run.model),
            cluster(run.cluster),
            run.chips,
            prompt_len=run.prompt_tokens,
            output_len=run.output_tokens,
            n_requests=CLOSED_LOOP_LEAST,
            concurrency=1,
            precision=run.precision,
            engine=run.engine,
            efficiency=Efficiency(request_overhead_s=0.0),
        )
        gaps.append(run.ttft_mean_s - float(simulated.ttft_s.mean()))
    return float(np.median(gaps))


def decode_walk_fit() -> float:
    """The bandwidth one SM reaches walking a sequence's cache alone, as a multiple of its even share of HBM, where the
    closed-loop runs show it: one client of an engine that does not split a decode's attention
    (``EngineProfile.splits_attention``), at the longest and the shortest prompts of each configuration. With one
    sequence a decode step's attention grows by the larger of the cache's bytes and the walk per token read, so the
    measured time per output token grows by the walk's time per token (s) times the mean context's growth; the
    share is one (sequence, KV head)'s bytes per token at 16 bits (``Priced``) over that time and the SM's even
    share (HBM bandwidth over SMs), the median over the configurations (the value stored in
    ``calibrated.DECODE_WALK_SHARE``). Chapter :ref:`ch-serving-many`."""
    from hwlib.data import assumptions
    from hwlib.data.serving_engines import ENGINE_PROFILES
    from hwlib.efficiency import kernel_record

    runs = concurrency_runs.concurrency_runs()
    walking = [key for key, profile in ENGINE_PROFILES.items() if not profile.splits_attention]
    runs = runs[runs["engine"].isin(walking) & (runs["concurrency"] == 1) & (runs["length_low"] == 1)]
    runs = runs.assign(context=runs["prompt_tokens"] + (runs["output_tokens"] - 1) / 2)
    shares = []
    for (model_key, cluster_key, _, _), group in runs.groupby(["model", "cluster", "chips", "precision"]):
        long, short = group.loc[group["context"].idxmax()], group.loc[group["context"].idxmin()]
        per_token_s = (long["tpot_mean_s"] - short["tpot_mean_s"]) / (long["context"] - short["context"])
        served, where = model(model_key), cluster(cluster_key).chip
        walked = served.kv_bytes_per_token(assumptions.ATTENTION_DTYPE) / served.table().cache_heads
        even = where.hbm_bytes_per_s / float(kernel_record(where).parallel_tiles.value)
        shares.append(walked / per_token_s / even)
    return float(np.median(shares))


def speculation_runs() -> tuple[SpeculationRun, ...]:
    """Every measured speed-up curve of speculative decoding. Chapter :ref:`ch-serving-many`."""
    return measurements.SPECULATION_RUNS


def speculation_check(run: SpeculationRun) -> dict:
    """``run``'s speed-ups against the forecast's (``hw.inference_step`` with and without speculation at the run's
    batches and context), the acceptance fitted so that the first batch matches: the acceptance, and per batch
    the measured and forecast speed-ups and the error (forecast over measured, minus 1). Chapter
    :ref:`ch-serving-many`."""
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
