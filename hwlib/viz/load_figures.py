"""Figures of serving under load: a queue against its closed form, latency percentiles as load grows, the batch
over time, speculative decoding's speed-up against the batch, and goodput. Chapter :ref:`ch-serving-many`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from hwlib._checks import positive
from hwlib.data.records import ModelShape, require
from hwlib.serving.engine import SimulatedServing
from hwlib.serving.simulate import queue_wait_s
from hwlib.serving.speculative import Speculation
from hwlib.serving.step import inference_step
from hwlib.viz.style import PALETTE, new_axes


def plot_queue_wait(
    service_s: float, loads: Sequence[float], simulated_wait_s: Sequence[float], *, ax: plt.Axes | None = None
) -> plt.Axes:
    """Mean wait against the load rho for one server of fixed service time ``service_s``: the M/D/1 closed form
    (``queue_wait_s``) as a line, the simulated means at ``loads`` as dots; both in units of the service time."""
    service = float(positive("service_s", service_s))
    rho = np.asarray(positive("loads", loads), dtype=float)
    ax = new_axes(ax, (5.6, 3.6))
    grid = np.linspace(0.02, 0.95, 200)
    ax.plot(grid, queue_wait_s(grid / service, service) / service, color=PALETTE[0], label="closed form (M/D/1)")
    ax.plot(rho, np.asarray(simulated_wait_s) / service, "o", color=PALETTE[3], label="simulated")
    ax.set(xlabel="load ρ (arrival rate × service time)", ylabel="mean wait / service time", xlim=(0, 1))
    ax.set_yscale("log")
    ax.legend(loc="upper left")
    return ax


def plot_latency_under_load(
    runs: Mapping[float, SimulatedServing],
    *,
    capacity_per_s: float | None = None,
    axes: Sequence[plt.Axes] | None = None,
) -> Sequence[plt.Axes]:
    """p50 and p99 of the time to first token (left) and per output token (right) against the arrival rate, one
    simulation per rate (``runs``: rate -> result); ``capacity_per_s`` marks the rate the engine sustains."""
    rates = np.array(sorted(runs), dtype=float)
    if axes is None:
        axes = plt.subplots(1, 2, figsize=(8.4, 3.4), layout="constrained")[1]
    for ax, metric, label in zip(axes, ("ttft", "tpot"), ("time to first token (s)", "time per output token (ms)")):
        scale = 1.0 if metric == "ttft" else 1e3
        for q, colour, style in ((50, PALETTE[0], "-"), (99, PALETTE[3], "--")):
            values = [runs[r].percentile(metric, q) * scale for r in rates]
            ax.plot(rates, values, style, marker="o", ms=3, color=colour, label=f"p{q}")
        if capacity_per_s:
            ax.axvline(capacity_per_s, color="0.5", lw=0.8, ls=":")
        ax.set(xlabel="arrival rate (requests/s)", ylabel=label)
        ax.set_yscale("log")
        ax.legend(loc="upper left")
    return axes


def plot_batch_over_time(runs: Mapping[str, SimulatedServing], *, ax: plt.Axes | None = None) -> plt.Axes:
    """Sequences in each step against time, one line per labelled simulation."""
    ax = new_axes(ax, (6.4, 3.2))
    for colour, (label, run) in zip(PALETTE, runs.items()):
        ax.step(run.step_end_s, run.step_sequences, where="post", color=colour, lw=0.9, label=label)
    ax.set(xlabel="time (s)", ylabel="sequences in the step")
    ax.legend(loc="upper right")
    return ax


def plot_speculation(
    model: ModelShape,
    where: object,
    speculations: Mapping[str, Speculation],
    batches: Sequence[int],
    context_len: int,
    *,
    ax: plt.Axes | None = None,
    **options: object,
) -> plt.Axes:
    """Forecast speed-up of speculative decoding (output tokens per second with it over without) against the
    batch, one line per labelled setup; above 1 it pays."""
    model = require(ModelShape, "model", model, "hw.model('llama-3-8b')")
    sizes = np.atleast_1d(positive("batches", batches, integral=True)).astype(np.int64)
    ax = new_axes(ax, (5.8, 3.6))
    plain = np.asarray(inference_step(model, where, sizes, context_len, **options).forecast_time_s)
    for colour, (label, spec) in zip(PALETTE, speculations.items()):
        step = inference_step(model, where, sizes, context_len, speculation=spec, **options)
        ax.plot(
            sizes,
            spec.tokens_per_step * plain / np.asarray(step.forecast_time_s),
            marker="o",
            ms=3,
            color=colour,
            label=label,
        )
    ax.axhline(1.0, color="0.4", lw=0.8)
    ax.set(xlabel="batch (sequences)", ylabel="speed-up per token", xscale="log")
    ax.legend(loc="upper right")
    return ax


def plot_goodput(
    rates: Sequence[float], goodput: Mapping[str, Sequence[float]], *, ax: plt.Axes | None = None
) -> plt.Axes:
    """Goodput (requests per second within the targets) against the arrival rate, one line per labelled setup;
    the diagonal is every request within its targets."""
    rates = np.asarray(positive("rates", rates), dtype=float)
    ax = new_axes(ax, (5.8, 3.6))
    ax.plot(rates, rates, color="0.7", lw=0.8, ls=":", label="every request")
    for colour, (label, values) in zip(PALETTE, goodput.items()):
        ax.plot(rates, values, marker="o", ms=3, color=colour, label=label)
    ax.set(xlabel="arrival rate (requests/s)", ylabel="goodput (requests/s)")
    ax.legend(loc="upper left")
    return ax
