"""Measured runs beside their bounds, and the training plan: the tables of the chapters :ref:`ch-serving`,
:ref:`ch-serving-measured` and :ref:`ch-sharding` that put hwlib's models next to published measurements.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from hwlib._checks import as_real_array
from hwlib.collectives import collective_time_s
from hwlib.data import cluster as find_cluster
from hwlib.data import model as find_model
from hwlib.data import serving_runs as all_serving_runs
from hwlib.data import step_measurements
from hwlib.data import training_runs as all_training_runs
from hwlib.data.records import CollectiveRun, LoadRun, ServingRun, SpeculationRun, TrainingRun
from hwlib.placement import group_topology
from hwlib.serving.load_check import load_check, load_runs, speculation_check, speculation_runs
from hwlib.serving.throughput import max_mean_prompt, serving_run_bound
from hwlib.training.plan import training_run_bound, training_run_forecast
from hwlib.units import GiB
from hwlib.viz.style import PALETTE, new_axes


def serving_check_table(runs: Sequence[ServingRun] | None = None) -> pd.DataFrame:
    """Measured serving runs beside the model's throughput bound and forecast: tokens/s, the share of the bound
    reached, the forecast's error, and for runs of unstated prompt length ("?") the longest mean prompt the bound
    allows.
    Chapters :ref:`ch-serving` and :ref:`ch-forecast`.
    """
    runs = all_serving_runs() if runs is None else tuple(runs) if isinstance(runs, (list, tuple)) else ()
    if not runs or not all(isinstance(run, ServingRun) for run in runs):
        raise TypeError(f"runs must be a non-empty sequence of ServingRun records, got {runs!r}")
    results = [serving_run_bound(run) for run in runs]
    bounds = [result.tokens_per_s for result in results]
    forecasts = [float(result.forecast_tokens_per_s) for result in results]
    measured = [run.tokens_per_s.value for run in runs]
    lengths = [
        f"{run.input_len:,} / {run.output_len:,.0f}"
        if run.input_len is not None
        else f"? / {run.output_len:,.0f} (mean)"
        if run.output_len is not None
        else "? / ?"
        for run in runs
    ]
    return pd.DataFrame(
        {
            "model, precision, tensor parallel": [
                f"{find_model(run.model_key).name}, {run.precision}, TP {run.tensor_parallel}" for run in runs
            ],
            "prompt / answer tokens": lengths,
            "measured (tokens/s)": measured,
            "bound (tokens/s)": bounds,
            "% of bound": [100 * m / b for m, b in zip(measured, bounds)],
            "forecast (tokens/s)": forecasts,
            "forecast error (%)": [100 * (f - m) / m for f, m in zip(forecasts, measured)],
            "longest mean prompt allowed": [
                max_mean_prompt(run) if run.input_len is None and run.output_len is not None else None for run in runs
            ],
            "key": [run.key for run in runs],
        },
        index=pd.Index([f"{run.source}: {run.system}" for run in runs], name="run"),
    )


def serving_sources_table(runs: Sequence[ServingRun] | None = None) -> pd.DataFrame:
    """Where each measured serving run comes from: the file or page, the line quoted, the configuration notes.

    Chapter :ref:`ch-serving`.
    """
    runs = all_serving_runs() if runs is None else tuple(runs) if isinstance(runs, (list, tuple)) else ()
    if not runs or not all(isinstance(run, ServingRun) for run in runs):
        raise TypeError(f"runs must be a non-empty sequence of ServingRun records, got {runs!r}")
    return pd.DataFrame(
        {
            "source": [run.tokens_per_s.source for run in runs],
            "quoted": [run.tokens_per_s.quoted for run in runs],
            "read on": [run.tokens_per_s.read_on for run in runs],
            "configuration": [run.note for run in runs],
        },
        index=pd.Index([f"{run.source}: {run.system}" for run in runs], name="run"),
    )


def training_check_table(runs: Sequence[TrainingRun] | None = None) -> pd.DataFrame:
    """Measured training runs beside ``hw.train_step``'s bound and forecast for each one's own mesh, in its own
    metric, each labelled by its chips and dtype and by whether it is in the forecast's fit (``outside_model``).
    Chapters :ref:`ch-sharding` and :ref:`ch-forecast`.
    """
    runs = all_training_runs() if runs is None else tuple(runs) if isinstance(runs, (list, tuple)) else ()
    if not runs or not all(isinstance(run, TrainingRun) for run in runs):
        raise TypeError(f"runs must be a non-empty sequence of TrainingRun records, got {runs!r}")
    units = {
        "megatron_tflops": ("TFLOP/s per GPU (Eq. 3)", 1e-12),
        "mfu": ("MFU (%)", 100.0),
        "tokens_per_s_per_chip": ("tokens/s per chip", 1.0),
    }
    rows = []
    for run in runs:
        bound, step = training_run_bound(run)
        forecast = float(training_run_forecast(run))
        label, scale = units[run.metric]
        rows.append(
            {
                "run": f"{run.model.name}, {step.n_chips:,} × {find_cluster(run.cluster_key).chip.label}, {run.dtype}",
                "source": run.source.split(",")[0],
                "mesh": str(step.mesh),
                "batch × sequence": f"{run.global_batch_sequences:,} × {run.seq_len:,}",
                "metric": label,
                "measured": run.measured.value * scale,
                "bound": bound * scale,
                "% of bound": 100 * run.measured.value / bound,
                "forecast": forecast * scale,
                "forecast error (%)": 100 * (forecast - run.measured.value) / run.measured.value,
                "in the fit": "yes" if run.outside_model == "" else "no",
                "key": run.key,
            }
        )
    return pd.DataFrame(rows).set_index("run")


def collective_check_table(runs: Sequence[CollectiveRun] | None = None) -> pd.DataFrame:
    """Measured collectives beside ``hw.collective_time_s`` on their cluster's placement (levels pipelined, and in
    series as the source documents add them): times in ms and the share of the bound each reaches (bound time over
    measured time, %). Chapter :ref:`ch-sharding`."""
    runs = step_measurements.COLLECTIVE_RUNS if runs is None else tuple(runs)
    if not runs or not all(isinstance(run, CollectiveRun) for run in runs):
        raise TypeError(f"runs must be a non-empty sequence of CollectiveRun records, got {runs!r}")
    rows = []
    for run in runs:
        cluster = find_cluster(run.cluster_key)
        bound = collective_time_s(run.kind, run.n_bytes, group_topology(cluster, run.n_chips, 1, run.n_chips))
        series = collective_time_s(
            run.kind, run.n_bytes, group_topology(cluster, run.n_chips, 1, run.n_chips, pipelined=False)
        )
        rows.append(
            {
                "run": f"{run.n_chips} x {cluster.chip.name}, {run.source}",
                "cluster": cluster.name,
                "array (GiB)": run.n_bytes / GiB,
                "measured (ms)": 1e3 * run.time_s,
                "bound (ms)": 1e3 * float(bound),
                "levels in series (ms)": 1e3 * float(series),
                "% of bound": 100 * float(bound) / run.time_s,
            }
        )
    return pd.DataFrame(rows).set_index("run")


_LOAD_LABELS = {
    "capacity_per_s": "capacity (requests/s, all at once)",
    "requests_per_s": "completed requests/s",
    "output_tokens_per_s": "output tokens/s",
    "ttft_p50_s": "TTFT p50 (ms)",
    "ttft_p99_s": "TTFT p99 (ms)",
    "ttft_mean_s": "TTFT mean (ms)",
    "tpot_p50_s": "TPOT p50 (ms)",
    "tpot_p99_s": "TPOT p99 (ms)",
    "tpot_mean_s": "TPOT mean (ms)",
    "latency_mean_s": "latency mean (ms)",
}


def load_check_table(runs: Sequence[LoadRun] | None = None) -> pd.DataFrame:
    """Measured runs under load beside the serving simulation of the same system, load and lengths: one row per
    measured number (times in ms), the forecast at the measured rate and at the measured share of capacity, the
    bound, and the forecast's errors (%); runs whose host work is outside the model are marked. Chapter
    :ref:`ch-serving-measured`."""
    runs = load_runs() if runs is None else tuple(runs) if isinstance(runs, (list, tuple)) else ()
    if not runs or not all(isinstance(run, LoadRun) for run in runs):
        raise TypeError("runs must be a non-empty sequence of LoadRun records, such as load_runs()")
    outside = {run.key: bool(run.outside_model) for run in runs}
    rows = []
    for row in load_check(tuple(runs)):
        scale = 1.0 if row["metric"].endswith("per_s") else 1e3
        rows.append(
            {
                "run": row["run"],
                "measured": _LOAD_LABELS[row["metric"]],
                "value": row["measured"] * scale,
                "forecast": row["forecast"] * scale,
                "forecast, same share": row["at_share"] * scale,
                "bound": row["bound"] * scale,
                "error (%)": 100 * row["error"],
                "error, same share (%)": 100 * row["error_at_share"],
                "host outside model": outside[row["run"]],
            }
        )
    return pd.DataFrame(rows).set_index(["run", "measured"])


def speculation_check_table(run: SpeculationRun | None = None) -> pd.DataFrame:
    """A measured speed-up curve of speculative decoding beside the forecast's, the acceptance fitted at the first
    batch: per batch the measured and forecast speed-ups and the error (%). Chapter :ref:`ch-serving-measured`."""
    result = speculation_check(speculation_runs()[0] if run is None else run)
    return pd.DataFrame(
        {
            "batch": result["batches"],
            "measured speed-up": result["measured"],
            "forecast speed-up": result["forecast"],
            "error (%)": 100 * result["error"],
        }
    ).set_index("batch")


def load_sources_table(runs: Sequence[LoadRun] | None = None) -> pd.DataFrame:
    """Where each measured run under load comes from: the file or page, the load's line quoted, the configuration
    notes and what is outside the model. Chapter :ref:`ch-serving-measured`."""
    runs = load_runs() if runs is None else tuple(runs) if isinstance(runs, (list, tuple)) else ()
    if not runs or not all(isinstance(run, LoadRun) for run in runs):
        raise TypeError("runs must be a non-empty sequence of LoadRun records, such as load_runs()")
    return pd.DataFrame(
        {
            "system": [run.system for run in runs],
            "source": [run.rate_per_s.source for run in runs],
            "load quoted": [run.rate_per_s.quoted for run in runs],
            "configuration": [run.note for run in runs],
            "outside the model": [run.outside_model for run in runs],
        },
        index=pd.Index([run.key for run in runs], name="run"),
    )


def plot_share_of_bound(
    groups: Sequence[str], measured_pct: Sequence[float], forecast_pct: Sequence[float] | None = None, *, ax=None
):
    """Each measured run's share of its bound (%), one row of dots per group (a source or kind of run), with its
    forecast's share as an open ring beside it: how far below the bound the runs sit, and how well the forecast
    follows. Chapters :ref:`ch-serving` and :ref:`ch-sharding`; every run in the appendix :ref:`app-ledgers`."""
    labels = [str(group) for group in groups]
    measured = as_real_array("measured_pct", measured_pct, minimum=0.0)
    forecast = None if forecast_pct is None else as_real_array("forecast_pct", forecast_pct, minimum=0.0)
    for name, values in (("measured_pct", measured), ("forecast_pct", forecast)):
        if values is not None and values.shape != (len(labels),):
            raise ValueError(f"{name} must hold one share per group label ({len(labels)}), got {values.shape}")
    order = list(dict.fromkeys(labels))
    rows = np.array([order.index(label) for label in labels], dtype=float)
    jitter = (np.arange(len(labels)) % 5 - 2) * 0.06  # runs of one group apart, in a fixed pattern
    ax = new_axes(ax, (7.0, 0.45 * len(order) + 1.2))
    ax.scatter(measured, rows + jitter, s=22, color=PALETTE[0], label="measured", zorder=3)
    if forecast is not None:
        ax.scatter(forecast, rows + jitter, s=26, facecolors="none", edgecolors=PALETTE[1], label="forecast")
    ax.axvline(100.0, color="#222222", lw=1.0)
    ax.set_yticks(range(len(order)), order)
    ax.invert_yaxis()
    ax.set(xlabel="share of the bound (%)", xlim=(0, 105))
    ax.legend(loc="upper right", fontsize=8, frameon=False)
    return ax
