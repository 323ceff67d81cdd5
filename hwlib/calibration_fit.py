"""Calibrating the forecast on measured runs, and how far off it is on runs it was not fitted to.

The forecast (``hw.Efficiency``) takes its kernel efficiencies from sourced records; five values no record covers
are fitted here: the achieved share of HBM bandwidth and each layer's and each sequence's overhead per step, on the
serving runs, and training's elementwise passes and unmodelled share, on the training runs (with the fitted HBM
share). Each fit picks, on a grid, the values with the least mean absolute relative error
of the forecast against the measurement, |forecast - measured| / measured, in each run's own metric. The error a
reader can expect on a new run is the error on runs the fit did not see: for every run, the forecast fitted
without it (leave-one-out) and without every run of its source (leave-one-source-out; the source is the text
before the first comma of ``run.source``). Runs that depend on something the model leaves out
(``run.outside_model``), and serving runs whose prompt or answer lengths are not stated, are forecast and shown but
neither fitted on nor counted in the errors. The same leave-one-source-out error, per kind of run (training or
serving, dense or MoE, GPU or TPU), is the band ``forecast_band`` gives beside a forecast. Chapter :ref:`ch-forecast`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwlib._checks import one_of, whole_count
from hwlib.data import calibrated
from hwlib.data import chip as find_chip
from hwlib.data import cluster as find_cluster
from hwlib.data import model as find_model
from hwlib.data import serving_runs as all_serving_runs
from hwlib.data import training_runs as all_training_runs
from hwlib.data.records import (
    CHIP_FAMILIES,
    FORECAST_DOMAINS,
    MICRO_BATCH_KINDS,
    MODEL_KINDS,
    Chip,
    ModelShape,
    require,
    require_chip,
)
from hwlib.efficiency import Efficiency

TRAINING_GRID = {
    "elementwise_passes": np.linspace(0.0, 16.0, 33),
    "unmodelled_share": np.linspace(0.0, 0.40, 41),
    "moe_layer_overhead_s": np.linspace(0.0, 4e-3, 11),
    "expert_overhead_s": np.linspace(0.0, 0.4e-3, 9),
}
"""The values the training fit tries (a grid: every pair)."""
SERVING_GRID = {
    "hbm": np.linspace(0.5, 1.0, 26),
    "layer_overhead_s": np.linspace(0.0, 60e-6, 31),
    "sequence_overhead_s": np.linspace(0.0, 40e-6, 21),
}
"""The values the serving fit tries (a grid: every pair; the overhead in s)."""
TARGETS = {"training (dense)": (0.10, 0.25), "serving": (0.20, 0.40)}
"""The error targets the tests hold the forecast to: (mean, worst) absolute relative error, leave-one-out."""
SOURCE_OUT_TARGETS = {"training": (0.10, 0.30), "training (MoE)": (0.15, None), "training (TPU)": (0.12, None)}
"""The training forecast's targets with each source's runs left out of the fit in turn: (mean, worst or None)
absolute relative error over every counted training run, its mixtures of experts and its TPU runs."""


@dataclass(frozen=True)
class Calibration:
    """The fitted values (``fitted``: name -> value, fitted on every run in the targets; ``stored``: the values
    ``hwlib.data.calibrated`` holds and every forecast uses), one table per domain (``training``, ``serving``: each
    run's kind, measurement, bound, forecast, leave-one-out and leave-one-source-out forecasts and errors), the
    ``summary`` of errors per domain, and ``kinds``: per kind of run (domain, model, chip family) with runs in the
    targets, the runs, sources, and mean and worst leave-one-source-out error (%). Chapter :ref:`ch-forecast`."""

    fitted: dict
    stored: dict
    training: object
    serving: object
    summary: object
    kinds: object


def _source(run: object) -> str:
    return run.source.split(",")[0].strip()


def _grid(names: dict) -> tuple[dict, tuple[int, ...]]:
    """The grid's values as arrays that broadcast against each other, and the grid's shape."""
    axes = list(names)
    shape = tuple(len(names[name]) for name in axes)
    arrays = {}
    for index, name in enumerate(axes):
        view = [1] * len(axes)
        view[index] = shape[index]
        arrays[name] = names[name].reshape(view)
    return arrays, shape


def _fit(forecasts: np.ndarray, measured: np.ndarray, counted: np.ndarray, groups: list[str]) -> dict:
    """Forecasts at the full fit, leave-one-out and leave-one-source-out, and the grid index of the full fit.

    ``forecasts`` is runs x grid points; the fit minimises the mean absolute relative error over ``counted`` runs.
    """
    errors = np.abs(forecasts - measured[:, None]) / measured[:, None]
    used = errors[counted]
    total = used.sum(axis=0)
    best = int(np.argmin(total))
    count = int(counted.sum())
    rows = np.arange(len(measured))
    loo = np.empty(len(measured))
    loso = np.empty(len(measured))
    for run in rows:
        without = total - (errors[run] if counted[run] else 0.0)
        loo[run] = forecasts[run, int(np.argmin(without))]
        same = np.array([g == groups[run] for g in groups]) & counted
        loso[run] = forecasts[run, int(np.argmin(total - errors[same].sum(axis=0)))] if same.sum() < count else np.nan
    return {"best": best, "all": forecasts[:, best], "loo": loo, "loso": loso}


def _model_kind(model: ModelShape) -> str:
    return "MoE" if model.is_moe else "dense"


def _table(runs, measured, bound, fit, counted, groups, labels, kinds):
    import pandas as pd

    def error(values: np.ndarray) -> np.ndarray:
        return 100 * (values - measured) / measured

    return pd.DataFrame(
        {
            "source": groups,
            "run": labels,
            "model": [model for model, _, _ in kinds],
            "chip family": [family for _, family, _ in kinds],
            "micro-batches": [micro for _, _, micro in kinds],
            "measured": measured,
            "bound": bound,
            "forecast": fit["all"],
            "forecast, leave one out": fit["loo"],
            "forecast, leave source out": fit["loso"],
            "% of bound": 100 * measured / bound,
            "error (%)": error(fit["all"]),
            "error, leave one out (%)": error(fit["loo"]),
            "error, leave source out (%)": error(fit["loso"]),
            "in targets": counted,
            "why not": [run.outside_model for run in runs],
        },
        index=pd.Index([run.key for run in runs], name="key"),
    )


def _training() -> tuple[object, dict]:
    from hwlib.training.mesh import Mesh
    from hwlib.training.plan import training_run_bound, training_run_forecast

    runs = all_training_runs()
    grid, shape = _grid(TRAINING_GRID)
    efficiency = Efficiency(**grid)
    forecasts = np.array([np.broadcast_to(training_run_forecast(run, efficiency), shape).ravel() for run in runs])
    measured = np.array([float(run.measured.value) for run in runs])
    bound = np.array([training_run_bound(run)[0] for run in runs])
    counted = np.array([run.outside_model == "" for run in runs])
    groups = [_source(run) for run in runs]
    fit = _fit(forecasts, measured, counted, groups)
    labels = [f"{run.model.name}, {Mesh(**run.mesh).n_chips:,} x {run.cluster_key}" for run in runs]
    micro = [micro_batch_kind(training_run_bound(run)[1].micro_batches) for run in runs]
    kinds = [(_model_kind(run.model), find_cluster(run.cluster_key).chip.family, mb) for run, mb in zip(runs, micro)]
    index = np.unravel_index(fit["best"], shape)
    fitted = {name: float(TRAINING_GRID[name][i]) for name, i in zip(TRAINING_GRID, index)}
    return _table(runs, measured, bound, fit, counted, groups, labels, kinds), fitted


def serving_in_targets(run: object) -> str:
    """Why a serving run is left out of the error targets ("" where it is in them)."""
    if run.outside_model:
        return run.outside_model
    if run.input_len is None or run.output_len is None:
        return "prompt or answer lengths not stated"
    return ""


def _serving() -> tuple[object, dict]:
    from hwlib.serving.throughput import serving_run_bound

    runs = all_serving_runs()
    grid, shape = _grid(SERVING_GRID)
    efficiency = Efficiency(**grid)
    forecasts = np.array(
        [
            np.broadcast_to(serving_run_bound(run, efficiency=efficiency).forecast_tokens_per_s, shape).ravel()
            for run in runs
        ]
    )
    measured = np.array([float(run.tokens_per_s.value) for run in runs])
    bound = np.array([float(serving_run_bound(run).tokens_per_s) for run in runs])
    reasons = [serving_in_targets(run) for run in runs]
    counted = np.array([reason == "" for reason in reasons])
    groups = [_source(run) for run in runs]
    fit = _fit(forecasts, measured, counted, groups)
    labels = [f"{find_model(run.model_key).name}, {run.system}, {run.precision}" for run in runs]
    kinds = [(_model_kind(find_model(run.model_key)), find_chip(run.chip_key).family, "") for run in runs]
    table = _table(runs, measured, bound, fit, counted, groups, labels, kinds)
    table["why not"] = reasons
    index = np.unravel_index(fit["best"], shape)
    return table, {name: float(SERVING_GRID[name][i]) for name, i in zip(SERVING_GRID, index)}


def _summary(tables: dict) -> object:
    import pandas as pd

    rows = {}
    training = tables["training"]
    subsets = {
        **tables,
        "training (dense)": training[training["model"] == "dense"],
        "training (MoE)": training[training["model"] == "MoE"],
        "training (TPU)": training[training["chip family"] == "TPU"],
    }
    for domain, table in subsets.items():
        counted = table[table["in targets"]]
        target = TARGETS.get(domain, (np.nan, np.nan))
        rows[domain] = {
            "runs": len(table),
            "in targets": len(counted),
            "sources": counted["source"].nunique(),
            "mean error, fitted on all (%)": counted["error (%)"].abs().mean(),
            "mean error, leave one out (%)": counted["error, leave one out (%)"].abs().mean(),
            "worst, leave one out (%)": counted["error, leave one out (%)"].abs().max(),
            "mean error, leave source out (%)": counted["error, leave source out (%)"].abs().mean(),
            "worst, leave source out (%)": counted["error, leave source out (%)"].abs().max(),
            "target: mean (%)": 100 * target[0],
            "target: worst (%)": 100 * target[1],
        }
    return pd.DataFrame(rows).T


KIND_ERRORS = ("mean error, leave source out (%)", "worst, leave source out (%)")
"""The columns of ``Calibration.kinds`` that hold the errors (beside ``runs`` and ``sources``)."""


def _kinds(tables: dict) -> object:
    import pandas as pd

    rows = {}
    for domain, table in tables.items():
        counted = table[table["in targets"]]
        for (model, family, micro), runs in counted.groupby(["model", "chip family", "micro-batches"]):
            errors = runs["error, leave source out (%)"].abs()
            rows[(domain, model, family, micro)] = [len(runs), runs["source"].nunique(), errors.mean(), errors.max()]
    index = pd.MultiIndex.from_tuples(rows, names=["domain", "model", "chip family", "micro-batches"])
    frame = pd.DataFrame(list(rows.values()), index=index, columns=["runs", "sources", *KIND_ERRORS])
    return frame.astype({"runs": int, "sources": int})


def forecast_error_lines(result: Calibration) -> str:
    """The entries of ``FORECAST_ERRORS`` in ``hwlib/data/calibrated.py`` that ``result`` (``calibration()``) fits, as
    the Python lines to paste there when a change to the runs or the model moves them. Chapter :ref:`ch-forecast`."""
    mean, worst = KIND_ERRORS
    return "\n".join(
        f'    _error("{domain}", "{model}", "{family}", runs={int(row["runs"])}, sources={int(row["sources"])}, '
        f"mean={row[mean] / 100:.3f}, worst={row[worst] / 100:.3f}"
        + (f', micro_batches="{micro}"' if micro else "")
        + "),"
        for (domain, model, family, micro), row in result.kinds.iterrows()
    )


def calibration() -> Calibration:
    """Fit the forecast's open values on the measured runs and report its errors (see the module docstring).

    Takes a few seconds: every measured run's forecast on the whole grid. Chapter :ref:`ch-forecast`.
    """
    training, training_fit = _training()
    serving, serving_fit = _serving()
    stored = {
        "hbm": calibrated.HBM_FRACTION.value,
        "sequence_overhead_s": calibrated.SEQUENCE_OVERHEAD_S.value,
        "elementwise_passes": calibrated.ELEMENTWISE_PASSES.value,
        "unmodelled_share": calibrated.UNMODELLED_SHARE.value,
        "layer_overhead_s": calibrated.LAYER_OVERHEAD_S.value,
        "moe_layer_overhead_s": calibrated.MOE_LAYER_OVERHEAD_S.value,
        "expert_overhead_s": calibrated.EXPERT_OVERHEAD_S.value,
    }
    tables = {"training": training, "serving": serving}
    return Calibration(
        fitted={**training_fit, **serving_fit},
        stored=stored,
        training=training,
        serving=serving,
        summary=_summary(tables),
        kinds=_kinds(tables),
    )


@dataclass(frozen=True)
class ForecastBand:
    """How far off a forecast of one kind of run (``domain``, ``model``: "dense" or "MoE", ``family``: "GPU", "TPU",
    or "" for a chip given inline, and for training ``micro_batches``: "one" or "many") is on measured runs: the
    ``mean`` and ``worst`` absolute relative error (fractions) over ``runs`` runs of the kind from ``sources``
    sources, each source's runs left out of the fit in turn. Where too few runs of the kind are measured, ``mean``
    and ``worst`` are None and ``closest`` is the band of the closest kind that has one (None where there is none).
    ``text`` says it in one line. Chapter :ref:`ch-forecast`."""

    domain: str
    model: str
    family: str
    runs: int
    sources: int
    mean: float | None
    worst: float | None
    closest: ForecastBand | None
    text: str
    micro_batches: str = ""


def micro_batch_kind(micro_batches: int) -> str:
    """ "one" or "many" (``MICRO_BATCH_KINDS``): the kind of a training step of ``micro_batches`` per rank."""
    return "one" if micro_batches == 1 else "many"


def _kind_runs(domain: str, model: str, family: str, micro: str = "") -> str:
    runs = f"{family} {model} {domain} runs" if family else f"{model} {domain} runs on a chip given inline"
    return runs + (f" of {micro} micro-batch{'es' if micro == 'many' else ''}" if micro else "")


FEWEST_BAND_RUNS = 5
"""The fewest measured runs of a kind whose errors make a band; fewer, and the forecast says so and prints none."""


def _record(domain: str, model: str, family: str, micro: str) -> object:
    return {record.kind: record for record in calibrated.FORECAST_ERRORS}.get((domain, model, family, micro))


def _measured_band(domain: str, model: str, family: str, micro: str) -> ForecastBand | None:
    record = _record(domain, model, family, micro)
    if record is None or record.runs < FEWEST_BAND_RUNS:
        return None
    mean, worst = float(record.mean.value), float(record.worst.value)
    plural = "s" if record.sources > 1 else ""
    text = (
        f"±{100 * mean:.0f} % (mean leave-source-out error over {record.runs} "
        f"{_kind_runs(domain, model, family, micro)} from {record.sources} source{plural}; worst {100 * worst:.0f} %)"
    )
    return ForecastBand(domain, model, family, record.runs, record.sources, mean, worst, None, text, micro)


def forecast_band(domain: str, model: ModelShape, chip: Chip, micro_batches: int | None = None) -> ForecastBand:
    """The error band of a forecast of a ``domain`` ("training" or "serving") step of ``model`` on ``chip``: the
    forecast's measured leave-one-source-out error on runs of the same kind (dense or MoE, GPU or TPU, and for
    training one micro-batch per rank or many: ``micro_batches``, default many), stored in
    ``hwlib.data.calibrated.FORECAST_ERRORS``. A kind with fewer than ``FEWEST_BAND_RUNS`` measured runs gets no
    number: its text says the error is unknown and how many runs there are, and names the closest measured kind's
    error as that (the other micro-batch kind, then another model kind, then another chip family, never the other
    domain). Chapter :ref:`ch-forecast`.
    """
    one_of("domain", domain, FORECAST_DOMAINS)
    model_kind = _model_kind(require(ModelShape, "model", model, "hw.model('llama-3-8b')"))
    family = require_chip(chip).family
    if domain == "serving" and micro_batches is not None:
        raise ValueError(f"micro_batches applies to training bands only, got {micro_batches!r} for serving")
    if domain == "serving":
        micro = ""
    else:
        micro = "many" if micro_batches is None else micro_batch_kind(whole_count("micro_batches", micro_batches))
    band = _measured_band(domain, model_kind, family, micro)
    if band is not None:
        return band
    candidates = []
    if family:
        other_model = next(kind for kind in MODEL_KINDS if kind != model_kind)
        other_family = next(kind for kind in CHIP_FAMILIES if kind != family)
        candidates = [(other_model, family), (model_kind, other_family), (other_model, other_family)]
    others = [kind for kind in MICRO_BATCH_KINDS if kind != micro] if micro else []
    tries = [(model_kind, family, other) for other in others] + [(*kind, micro) for kind in candidates]
    closest = next(filter(None, (_measured_band(domain, *kind) for kind in tries)), None)
    few = _record(domain, model_kind, family, micro)
    counted = f"only {few.runs}" if few is not None else "no"
    text = f"error unknown: {counted} {_kind_runs(domain, model_kind, family, micro)} in the fit"
    if few is not None:
        text += f" (a band takes {FEWEST_BAND_RUNS})"
    if closest is not None:
        text += (
            f"; the closest measured kind, {_kind_runs(domain, closest.model, closest.family, closest.micro_batches)}"
            f", is off by ±{100 * closest.mean:.0f} % (worst {100 * closest.worst:.0f} %)"
        )
    return ForecastBand(domain, model_kind, family, 0, 0, None, None, closest, text, micro)
