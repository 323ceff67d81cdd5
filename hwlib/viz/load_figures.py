"""Figures of serving under load: a queue against its closed form, latency percentiles as load (or another setting)
grows, the batch over time, speculative decoding's speed-up against the batch, goodput, and closed-loop runs
measured against simulated. Each draws what the
simulation (``hw.simulate_serving``) or the step model (``hw.inference_step``) says, nothing of its own. Chapters
:ref:`ch-serving-many`, :ref:`ch-serving-techniques` (speculation, goodput) and :ref:`ch-serving-measured`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from hwlib._checks import as_real_array, describe, non_negative, one_of, positive
from hwlib.data.records import ModelShape, require
from hwlib.serving.served import SimulatedServing
from hwlib.serving.simulate import queue_wait_s
from hwlib.serving.speculative import Speculation
from hwlib.serving.step import inference_step
from hwlib.viz.style import PALETTE, new_axes

QUANTILE_STYLES = ("-", "--", ":", "-.")
"""Line styles of the percentiles a latency figure draws, in the order given."""


def _labelled(name: str, values: object, kind: type, example: str) -> dict:
    """A non-empty mapping of labels to ``kind``, else a TypeError naming ``name``."""
    if not isinstance(values, Mapping) or not values:
        raise TypeError(f"{name} must be a non-empty mapping of labels to {example}, got {describe(values)}")
    for label, value in values.items():
        if not isinstance(value, kind):
            raise TypeError(f"{name}[{label!r}] must be {example}, got {describe(value)}")
    return dict(values)


def _swept(name: str, runs: object) -> dict[float, SimulatedServing]:
    """``runs`` as {setting: SimulatedServing} sorted by setting (each setting a positive number)."""
    runs = _labelled(name, runs, SimulatedServing, "hw.simulate_serving(...) results")
    settings = positive(f"the keys of {name}", list(runs))
    return {float(x): runs[key] for x, key in sorted(zip(settings, runs), key=lambda pair: pair[0])}


def plot_queue_wait(
    service_s: float,
    loads: Sequence[float],
    simulated_wait_s: Sequence[float],
    *,
    errors_s: Sequence[float] | None = None,
    service_cv: float = 0.0,
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """Mean wait against the load rho for one server of mean service time ``service_s`` (s): the Pollaczek-Khinchine
    closed form (``queue_wait_s``, M/D/1 for ``service_cv`` 0) as a line, the simulated means at ``loads`` (each in
    (0, 1)) as dots, with ``errors_s`` (s, one per load) as error bars; all in units of the service time, on a log
    axis."""
    service = float(positive("service_s", service_s))
    rho = np.atleast_1d(positive("loads", loads))
    if (rho >= 1).any():
        raise ValueError(f"loads must each be below 1 (a queue past saturation has no mean wait), got {loads!r}")
    waits = np.atleast_1d(non_negative("simulated_wait_s", simulated_wait_s))
    if waits.shape != rho.shape:
        raise ValueError(f"simulated_wait_s must hold one mean wait per load ({rho.size}), got {waits.size}")
    spread = float(non_negative("service_cv", service_cv))
    ax = new_axes(ax, (5.6, 3.6))
    grid = np.linspace(min(0.02, rho.min()), max(0.95, rho.max()), 200)
    kind = "M/D/1" if spread == 0 else f"M/G/1, c = {spread:g}"
    closed = queue_wait_s(grid / service, service, spread) / service
    ax.plot(grid, closed, color=PALETTE[0], label=f"closed form ({kind})")
    if errors_s is None:
        ax.plot(rho, waits / service, "o", color=PALETTE[3], label="simulated")
    else:
        bars = np.atleast_1d(non_negative("errors_s", errors_s))
        if bars.shape != rho.shape:
            raise ValueError(f"errors_s must hold one error per load ({rho.size}), got {bars.size}")
        low = np.minimum(bars, 0.999 * waits)  # a log axis: keep the lower bar above zero
        ax.errorbar(
            rho,
            waits / service,
            yerr=[low / service, bars / service],
            fmt="o",
            color=PALETTE[3],
            capsize=3,
            label="simulated",
        )
    ax.set(xlabel="load ρ (arrival rate × service time)", ylabel="mean wait / service time", xlim=(0, 1))
    ax.set_yscale("log")
    ax.legend(loc="upper left")
    return ax


def plot_latency_under_load(
    runs: Mapping,
    *,
    capacity_per_s: float | Mapping[str, float] | None = None,
    quantiles: Sequence[float] = (50, 99),
    x_label: str = "arrival rate (requests/s)",
    x_scale: str = "linear",
    baselines: Mapping[str, SimulatedServing] | None = None,
    axes: Sequence[plt.Axes] | None = None,
) -> Sequence[plt.Axes]:
    """Percentiles (``quantiles``, 0-100) of the time to first token (left, s, log axis) and per output token
    (right, ms) against a swept setting, one simulation per point. ``runs`` maps the setting (an arrival rate, or what
    ``x_label`` names, such as a chunk budget) to a ``hw.simulate_serving`` result, or labels to such mappings,
    one colour per label. ``capacity_per_s`` marks a rate (or one per label) with a dotted vertical line;
    ``baselines`` draws each labelled result's percentiles as grey horizontal lines (a setup with no such
    setting)."""
    if isinstance(runs, Mapping) and runs and all(isinstance(v, Mapping) for v in runs.values()):
        setups = {str(label): _swept(f"runs[{label!r}]", sweep) for label, sweep in runs.items()}
    else:
        setups = {"": _swept("runs", runs)}
    levels = np.atleast_1d(non_negative("quantiles", quantiles))
    if (levels > 100).any() or levels.size > len(QUANTILE_STYLES):
        raise ValueError(f"quantiles must be at most {len(QUANTILE_STYLES)} percentiles in [0, 100], got {quantiles!r}")
    one_of("x_scale", x_scale, ("linear", "log"))
    if isinstance(capacity_per_s, Mapping):
        marks = {str(k): float(positive(f"capacity_per_s[{k!r}]", v)) for k, v in capacity_per_s.items()}
        unknown = set(marks) - set(setups)
        if unknown:
            raise ValueError(f"capacity_per_s names {sorted(unknown)}, which runs does not label")
    elif capacity_per_s is not None:
        marks = {label: float(positive("capacity_per_s", capacity_per_s)) for label in setups}
    else:
        marks = {}
    flat = _labelled("baselines", baselines, SimulatedServing, "hw.simulate_serving(...) results") if baselines else {}
    if axes is None:
        axes = plt.subplots(1, 2, figsize=(8.4, 3.4), layout="constrained")[1]
    single = len(setups) == 1
    for ax, metric, label in zip(axes, ("ttft", "tpot"), ("time to first token (s)", "time per output token (ms)")):
        scale = 1.0 if metric == "ttft" else 1e3
        for index, (name, sweep) in enumerate(setups.items()):
            settings = np.array(list(sweep))
            for order, (q, style) in enumerate(zip(levels, QUANTILE_STYLES)):
                colour = PALETTE[(0, 3, 2, 4)[order]] if single else PALETTE[index]
                values = [run.percentile(metric, q) * scale for run in sweep.values()]
                tag = f"p{q:g}" if not name else f"{name}, p{q:g}"
                ax.plot(settings, values, style, marker="o", ms=3, color=colour, label=tag)
            if name in marks:
                ax.axvline(marks[name], color="0.5" if single else PALETTE[index], lw=0.8, ls=":")
        for index, (name, run) in enumerate(flat.items()):
            for q, style in zip(levels, QUANTILE_STYLES):
                shade = str(0.25 + 0.3 * index)
                ax.axhline(run.percentile(metric, q) * scale, color=shade, lw=1.0, ls=style, label=f"{name}, p{q:g}")
        ax.set(xlabel=x_label, ylabel=label, xscale=x_scale)
        if metric == "ttft":
            ax.set_yscale("log")
        else:
            ax.set_ylim(bottom=0)
        if x_scale == "log":
            ax.set_xticks(sorted({x for sweep in setups.values() for x in sweep}))
        for axis, scale_kind in ((ax.xaxis, x_scale), (ax.yaxis, ax.get_yscale())):
            if scale_kind == "log" and axis is ax.yaxis:
                axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
            axis.set_minor_formatter(NullFormatter())
        ax.legend(loc="best", fontsize=7.5)
    return axes


def plot_batch_over_time(
    runs: Mapping[str, SimulatedServing],
    *,
    decode_only: bool = False,
    limits: Mapping[str, float] | None = None,
    until_s: float | None = None,
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """Sequences in each step against the time the step ends (s), one line per labelled simulation (each step's
    count held over the step). ``decode_only`` keeps the steps of one new token per sequence (the decode batch;
    prefill steps, which in a prefill-first engine hold only the prompts, drop out). ``limits`` draws labelled
    horizontal lines (a cap on sequences, what the KV cache holds); ``until_s`` ends the time axis."""
    runs = _labelled("runs", runs, SimulatedServing, "hw.simulate_serving(...) results")
    if not isinstance(decode_only, bool):
        raise TypeError(f"decode_only must be True or False, got {describe(decode_only)}")
    ax = new_axes(ax, (6.4, 3.6))
    for colour, (label, run) in zip(PALETTE, runs.items()):
        kept = run.step_tokens == run.step_sequences if decode_only else np.ones(len(run.step_end_s), dtype=bool)
        ax.step(run.step_end_s[kept], run.step_sequences[kept], where="pre", color=colour, lw=0.9, label=label)
    for index, (label, value) in enumerate((limits or {}).items()):
        level = float(positive(f"limits[{label!r}]", value))
        ax.axhline(level, color="0.35", lw=0.8, ls=QUANTILE_STYLES[1 + index % 3], label=label)
    if until_s is not None:
        ax.set_xlim(0, float(positive("until_s", until_s)))
    ylabel = "sequences in the decode step" if decode_only else "sequences in the step"
    ax.set(xlabel="time (s)", ylabel=ylabel)
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize=8)
    return ax


def speculation_speedup(
    model: ModelShape,
    where: object,
    speculation: Speculation,
    batches: Sequence[int],
    context_len: int,
    *,
    estimate: str = "forecast",
    **options: object,
) -> np.ndarray:
    """Output tokens per second with ``speculation`` over without, per batch: the expected tokens a verification
    yields times a plain decode step's time over a speculative step's (``inference_step``, its forecast or its
    bound); above 1 it pays."""
    sizes = np.atleast_1d(positive("batches", batches, integral=True)).astype(np.int64)
    field = {"forecast": "forecast_time_s", "bound": "time_s"}[one_of("estimate", estimate, ("forecast", "bound"))]
    plain = np.asarray(getattr(inference_step(model, where, sizes, context_len, **options), field))
    guessed = np.asarray(
        getattr(inference_step(model, where, sizes, context_len, speculation=speculation, **options), field)
    )
    return speculation.tokens_per_step * plain / guessed


def plot_speculation(
    model: ModelShape,
    where: object,
    speculations: Mapping[str, Speculation],
    batches: Sequence[int],
    context_len: int,
    *,
    bound: bool = False,
    ax: plt.Axes | None = None,
    **options: object,
) -> plt.Axes:
    """Speed-up of speculative decoding (``speculation_speedup``: output tokens per second with it over without)
    against the batch, one line per labelled setup, by the forecast (solid) and, with ``bound``, by the bound
    (dashed); above 1 it pays."""
    model = require(ModelShape, "model", model, "hw.model('llama-3-8b')")
    speculations = _labelled("speculations", speculations, Speculation, "hw.Speculation(...)")
    sizes = np.atleast_1d(positive("batches", batches, integral=True)).astype(np.int64)
    ax = new_axes(ax, (5.8, 3.6))
    for colour, (label, spec) in zip(PALETTE, speculations.items()):
        for estimate, style in (("forecast", "-"), ("bound", "--"))[: 2 if bound else 1]:
            gain = speculation_speedup(model, where, spec, sizes, context_len, estimate=estimate, **options)
            tag = label if not bound else f"{label}, {estimate}"
            ax.plot(sizes, gain, style, marker="o" if estimate == "forecast" else None, ms=3, color=colour, label=tag)
    ax.axhline(1.0, color="0.4", lw=0.8)
    ax.set(xlabel="batch (sequences)", ylabel="speed-up per token", xscale="log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.legend(loc="upper right", fontsize=8)
    return ax


def plot_goodput(
    rates: Sequence[float], goodput: Mapping[str, Sequence[float]], *, ax: plt.Axes | None = None
) -> plt.Axes:
    """Goodput (requests per second within the targets) against the arrival rate (requests/s), one line per
    labelled setup, each one value per rate; the dotted diagonal is every request within its targets."""
    rates = np.atleast_1d(positive("rates", rates))
    if not isinstance(goodput, Mapping) or not goodput:
        raise TypeError(f"goodput must be a non-empty mapping of labels to one value per rate, got {describe(goodput)}")
    ax = new_axes(ax, (5.8, 3.6))
    ax.plot(rates, rates, color="0.7", lw=0.8, ls=":", label="every request")
    for colour, marker, (label, values) in zip(PALETTE, "osD^v<>p", goodput.items()):
        values = np.atleast_1d(as_real_array(f"goodput[{label!r}]", values, minimum=0.0))
        if values.shape != rates.shape:
            raise ValueError(f"goodput[{label!r}] must hold one value per rate ({rates.size}), got {values.size}")
        ax.plot(rates, values, marker=marker, ms=3.5, color=colour, label=label)
    ax.set(xlabel="arrival rate (requests/s)", ylabel="goodput (requests/s)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper left", fontsize=8)
    return ax


_CLOSED_LOOP_COLUMNS = ("source", "engine", "ttft_measured_s", "ttft_s", "tpot_measured_s", "tpot_s")
_SOURCE_MARKERS = "osD^v<>p"


def plot_closed_loop_check(table: object, *, aims: Sequence[float] = (0.25, 0.15), axes=None) -> np.ndarray:
    """Simulated against measured time to first token and per output token (s, log axes; each run's mean, else its
    median) of runs under load, a ``hwlib.serving.closed_loop.concurrency_check()`` table (runs without a simulation
    left out): one colour per engine profile (the profile with the most runs drawn first), one marker per publisher,
    the diagonal and the band of ``aims`` (the mean errors aimed at, first token and per token) around it. Returns
    the two axes. Chapter :ref:`ch-serving-measured`."""
    import pandas as pd

    from hwlib.data.serving_engines import ENGINE_PROFILES

    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be a concurrency_check() table (a pandas DataFrame), got {describe(table)}")
    missing = [column for column in _CLOSED_LOOP_COLUMNS if column not in table.columns]
    if missing:
        raise ValueError(f"table lacks the columns {missing} of concurrency_check()")
    aim = np.atleast_1d(positive("aims", aims))
    if aim.shape != (2,) or (aim >= 1).any():
        raise ValueError(f"aims must be two fractions below 1 (first token, per token), got {aims!r}")
    drawn = table.dropna(subset=["ttft_s", "tpot_s"])
    if drawn.empty:
        raise ValueError("table holds no simulated run to draw")
    if axes is None:
        axes = plt.subplots(1, 2, figsize=(8.4, 3.9), layout="constrained")[1]
    engines = list(drawn["engine"].value_counts().index)  # the most runs drawn first, beneath the rest
    sources = list(dict.fromkeys(drawn["source"]))
    for ax, name, label, band in zip(axes, ("ttft", "tpot"), ("time to first token", "time per output token"), aim):
        shown = drawn.dropna(subset=[f"{name}_measured_s"])
        measured, simulated = shown[f"{name}_measured_s"], shown[f"{name}_s"]
        span = np.array([min(measured.min(), simulated.min()) / 1.5, max(measured.max(), simulated.max()) * 1.5])
        ax.fill_between(span, span * (1 - band), span * (1 + band), color="0.92", lw=0)
        ax.plot(span, span, color="0.5", lw=0.8, ls=":")
        for colour, engine in zip(PALETTE, engines):
            for marker, source in zip(_SOURCE_MARKERS, sources):
                runs = shown[(shown["engine"] == engine) & (shown["source"] == source)]
                if len(runs):
                    ax.scatter(
                        runs[f"{name}_measured_s"],
                        runs[f"{name}_s"],
                        s=9,
                        marker=marker,
                        color=colour,
                        alpha=0.6,
                        lw=0,
                        label=f"{ENGINE_PROFILES[engine].label}, {source}",
                    )
        ax.set(
            xscale="log",
            yscale="log",
            xlim=span,
            ylim=span,
            xlabel=f"measured {label} (s)",
            ylabel=f"simulated {label} (s)",
        )
        ax.set_title(f"{label}: band ±{100 * band:.0f} %", fontsize=9)
    axes[0].legend(loc="upper left", fontsize=6.5, markerscale=1.5)
    return np.asarray(axes)
