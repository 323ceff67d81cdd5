"""From bound to forecast: where a measured run's time goes between its bound and its measurement.

Chapter :ref:`ch-forecast`.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from hwlib.data import training_runs as all_training_runs
from hwlib.data.records import TrainingRun, require
from hwlib.efficiency import Efficiency
from hwlib.training.forecast import FORECAST_PARTS
from hwlib.training.plan import training_run_bound, training_run_forecast
from hwlib.viz.style import PALETTE, new_axes

_AT_PEAK = Efficiency.at_peak()
_STEPS = {
    "matmuls": "matmul efficiency",
    "fp8 experts": "fp8 grouped GEMMs of the experts",
    "expert kernels": "the experts' capacity padding and matmul tiles",
    "gradient accumulation": "weight gradients accumulated in fp32",
    "attention": "attention kernels",
    "elementwise": "elementwise kernels",
    "pipeline bubble": "bubble (longer compute)",
    "exposed communication": "exposed communication",
    "overlap slowdown": "compute slowed by overlap",
    "overhead": "MoE layer and expert overheads",
    "unmodelled": "unmodelled share",
}


def forecast_waterfall(run: TrainingRun) -> pd.DataFrame:
    """The seconds of one step of a measured training run, from its bound to its measurement: the bound, what each
    forecast part adds to it (``FORECAST_PARTS`` at the forecast's efficiencies less the same part at the peak),
    the forecast, what the forecast misses, and the measured time (its metric turned into seconds per step)."""
    run = require(TrainingRun, "run", run, "hw.training_runs()[0]")
    bound, step = training_run_bound(run)
    _, peak = training_run_bound(run, _AT_PEAK)
    measured_s = step.time_s * bound / run.measured.value
    rows = [("bound", step.time_s)]
    rows += [(_STEPS[name], step.forecast_parts_s[name] - peak.forecast_parts_s[name]) for name in FORECAST_PARTS]
    rows += [("forecast", step.forecast_time_s), ("left unexplained", measured_s - step.forecast_time_s)]
    rows += [("measured", measured_s)]
    return pd.DataFrame(rows, columns=["step", "seconds"]).set_index("step")


MISS_PERCENT = 15.0
"""A forecast error (%) beyond which ``forecast_misses`` names the term that takes the gap."""


def forecast_misses(runs: Sequence[TrainingRun] | None = None) -> pd.DataFrame:
    """The measured training runs whose forecast misses by more than ``MISS_PERCENT``, each with its error and its
    waterfall's (``forecast_waterfall``) largest term between bound and forecast: the term that takes the gap, the
    one whose assumption moves the forecast most. Chapter :ref:`ch-forecast`."""
    rows = {}
    for run in all_training_runs() if runs is None else runs:
        error = 100 * (float(training_run_forecast(run)) - run.measured.value) / run.measured.value
        if abs(error) <= MISS_PERCENT:
            continue
        seconds = forecast_waterfall(run)["seconds"]
        terms = seconds.drop(["bound", "forecast", "left unexplained", "measured"])
        largest = terms.abs().idxmax()
        rows[run.key] = {
            "run": run.model.name,
            "forecast error (%)": error,
            "largest term": largest,
            "its seconds": terms[largest],
            "left unexplained (s)": seconds["left unexplained"],
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def plot_forecast_waterfall(run: TrainingRun, *, title: str | None = None, ax: plt.Axes | None = None) -> plt.Axes:
    """A waterfall of ``forecast_waterfall(run)``: bars for the bound, the forecast and the measurement, and
    floating bars for what each term adds (a negative one hangs down)."""
    table = forecast_waterfall(run)
    ax = new_axes(ax, (4.2, 3.2))
    totals = {"bound", "forecast", "measured"}
    level, colours = 0.0, {"bound": "#999999", "forecast": PALETTE[0], "measured": "#222222"}
    positions = np.arange(len(table))
    for position, (name, seconds) in zip(positions, table["seconds"].items()):
        if name in totals:
            ax.bar(position, seconds, color=colours[name], width=0.7)
            level = seconds
        else:
            ax.bar(position, seconds, bottom=level, color=PALETTE[2] if seconds >= 0 else PALETTE[1], width=0.7)
            level += seconds
    ax.set_xticks(positions, table.index, rotation=60, ha="right", fontsize=7.5)
    ax.set(ylabel="seconds per step", title=title or run.key)
    return ax
