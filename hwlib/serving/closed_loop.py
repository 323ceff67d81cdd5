"""Serving benchmarks under load against the simulation: each published run simulated as its client ran it (its
clients or Poisson arrivals, lengths, requests, engine profile and precision), its mean (else median) and printed
tail of the time to first token and per output token against the forecast's, and the bounds no run may beat; and
the two values the closed loops fit, a server's own time per request and the bandwidth of a lone decode walk, and
the simulation's error on the runs of the publishers it was not fitted to.
Chapter :ref:`ch-serving-measured`.
"""

from __future__ import annotations

import numpy as np

from hwlib.data import cluster, concurrency_runs, model
from hwlib.efficiency import Efficiency
from hwlib.serving.simulate import simulate_serving
from hwlib.serving.step import inference_step

CLOSED_LOOP_WAVES = 3
"""Requests each client of a closed-loop run sends in its simulation (``concurrency_check``) where the run does not
say how many its benchmark sent: enough for the first wave's all-at-once start to weigh a third."""
CLOSED_LOOP_LEAST = 60
"""The fewest requests a closed-loop run's simulation serves (few clients need more waves to settle)."""


def concurrency_check(runs: object = None) -> object:
    """Serving runs under load (default every run of ``hwlib.data.concurrency_runs``, or a table of some of them)
    simulated as run: their clients (``concurrency``) or Poisson arrivals (``request_rate``, where ``concurrency`` is
    0), lengths (drawn uniformly between ``length_low`` of the stated ones and the stated ones, with a fixed seed),
    tensor-parallel chips, expert and attention data parallelism and precision, under their engine's profile with the
    scheduler's intake interval and token budget their recipe sets (``recv_interval``, ``max_batch_tokens``), the
    requests the run sent (else
    ``CLOSED_LOOP_WAVES`` a client). Each run is compared at the statistic it prints (``statistic``: its mean, else
    its median; ``ttft_measured_s``, ``tpot_measured_s``). The table gains the forecast simulation's value of that
    statistic for the time to first token and per output token (``ttft_s``, ``tpot_s``), their errors (simulated
    over measured, minus 1), and the bounds: the shortest prompt's prefill alone at the bound (``ttft_bound_s``: no
    first token comes sooner) and the bound's simulation's time per output token at the same statistic
    (``tpot_bound_s``); and at the percentile the run prints (``tail_percentile``) the forecast's
    (``ttft_tail_forecast_s``, ``tpot_tail_forecast_s``) and their errors (``ttft_tail_error``, ``tpot_tail_error``; NaN
    where none is printed); all NaN for a run whose weights leave its engine's default share of memory no cache (its
    recipe set another). Chapter :ref:`ch-serving-measured`."""
    table = concurrency_runs.concurrency_runs() if runs is None else _closed_loop_table(runs)
    names = ("mean_ttft", "mean_tpot", "ttft_bound_s", "mean_tpot_bound", "ttft_tail_forecast_s")
    names += ("tpot_tail_forecast_s", "median_ttft", "median_tpot", "median_tpot_bound")
    columns = {name: [] for name in names}
    for run in table.itertuples():
        rate = 0.0 if run.concurrency else float(run.request_rate)
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
            run.recv_interval,
            run.max_batch_tokens,
            run.concurrency,
            rate,
            run.requests,
            run.tail_percentile,
        )
        if key not in _CLOSED_LOOPS:
            _CLOSED_LOOPS[key] = _closed_loop(*key)
        for name, value in zip(columns, _CLOSED_LOOPS[key]):
            columns[name].append(value)
    mean = table["ttft_mean_s"].notna().to_numpy()
    pick = lambda of: np.where(mean, columns[f"mean_{of}"], columns[f"median_{of}"])  # noqa: E731
    table["statistic"] = np.where(mean, "mean", "median")
    table["ttft_measured_s"] = np.where(mean, table["ttft_mean_s"], table["ttft_median_s"])
    table["tpot_measured_s"] = np.where(mean, table["tpot_mean_s"], table["tpot_median_s"])
    table["ttft_s"], table["tpot_s"] = pick("ttft"), pick("tpot")
    table["ttft_bound_s"], table["tpot_bound_s"] = columns["ttft_bound_s"], pick("tpot_bound")
    table["ttft_tail_forecast_s"] = columns["ttft_tail_forecast_s"]
    table["tpot_tail_forecast_s"] = columns["tpot_tail_forecast_s"]
    table["ttft_error"] = table["ttft_s"] / table["ttft_measured_s"] - 1
    table["tpot_error"] = table["tpot_s"] / table["tpot_measured_s"] - 1
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
    recv_interval,
    budget,
    clients,
    rate,
    sent,
    tail,
):
    where, served = cluster(cluster_key), model(model_key)
    count = int(sent) if sent else max(CLOSED_LOOP_WAVES * clients, CLOSED_LOOP_LEAST)
    load = dict(concurrency=clients) if clients else dict(arrival_rate_per_s=rate)
    if budget:
        load["max_batch_tokens"] = int(budget)
    rng = np.random.default_rng(0)
    shortest = max(int(np.ceil(low * prompt)), 1)
    prompts = rng.integers(shortest, prompt + 1, count)
    answers = rng.integers(max(int(np.ceil(low * answer)), 2), answer + 1, count)
    options = dict(
        prompt_len=prompts,
        output_len=answers,
        n_requests=count,
        precision=precision,
        engine=engine,
        expert_parallel=expert_parallel,
        attention_dp=attention_dp,
        recv_interval=int(recv_interval),
        **load,
    )
    try:
        forecast = simulate_serving(served, where, chips, **options)
    except ValueError as error:
        if "with room for a KV cache" not in str(error):
            raise
        return (np.nan,) * 9
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
        float(np.median(forecast.ttft_s)),
        float(np.median(forecast.tpot_s)),
        float(np.median(bound.tpot_s)),
    )


_CLOSED_LOOPS: dict[tuple, tuple[float, ...]] = {}
"""Each closed-loop run's simulated times, by its configuration, once simulated."""


def request_overhead_fit() -> float:
    """The seconds a server takes between a request's sending and its scheduling, as the closed-loop runs show it
    where nothing else can: one client and the shortest prompts (200 tokens), whose prefill is short and whose
    request waits for no other. The median of the measured time to first token less the simulated one without the
    overhead (the value stored in ``calibrated.REQUEST_OVERHEAD_S``). Chapter :ref:`ch-serving-measured`."""
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
    ``calibrated.DECODE_WALK_SHARE``). Chapter :ref:`ch-serving-measured`."""
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


def load_errors(check: object = None) -> dict[str, dict[str, float]]:
    """The simulation's error under load on published runs it was not fitted to: ``concurrency_check()``'s runs (or
    ``check``, a table it returned) of every publisher but NIM's, whose one-client runs set the two fitted values.
    Per quantity (``"ttft"``, ``"tpot"``: time to first token and per output token, each at the run's printed
    statistic): the runs compared, their publishers, the mean absolute relative error and the median relative error
    (negative: too soon). The values ``calibrated.LOAD_ERRORS`` stores and ``hwlib simulate`` prints beside its
    percentiles. Chapter :ref:`ch-serving-measured`."""
    import pandas as pd

    table = concurrency_check() if check is None else check
    if not isinstance(table, pd.DataFrame) or not {"source", "ttft_error", "tpot_error"} <= set(table.columns):
        raise TypeError(f"check must be None or a table concurrency_check() returned, got {table!r:.80}")
    held = table[table["source"] != concurrency_runs.SOURCES[0]]
    found = {}
    for name in ("ttft", "tpot"):
        errors = held[f"{name}_error"].dropna()
        if errors.empty:
            raise ValueError(f"check holds no {name} error of a publisher other than {concurrency_runs.SOURCES[0]}")
        found[name] = {
            "runs": len(errors),
            "publishers": int(held.loc[errors.index, "source"].nunique()),
            "mean": float(errors.abs().mean()),
            "median": float(errors.median()),
        }
    return found
