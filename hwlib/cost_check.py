"""The cost model against what was published: GPU-hours of a whole pre-training from the forecast of its measured
mesh, a model card's emissions from its GPU-hours, its power and one grid intensity, and the power of whole systems
measured under load. Chapter :ref:`ch-costs`.
"""

from __future__ import annotations

import numpy as np

from hwlib.costs import SECONDS_PER_HOUR, record_value
from hwlib.data import calibrated, prices
from hwlib.data import chip as find_chip
from hwlib.data import training_runs as all_training_runs
from hwlib.data.power_runs import POWER_RUNS, SYSTEM_RATINGS
from hwlib.data.prices import PUBLISHED_RUN_COSTS
from hwlib.training.plan import training_run_bound

GRAMS_PER_TONNE = 1e6


def gpu_hours_check() -> object:
    """Per run whose authors state its GPU-hours and the tokens of each stage: the GPU-hours each stage's measured mesh
    and batch take through its tokens at the forecast's and the bound's tokens per second (``training_run_bound``),
    summed; where the text states the share of the wall time that trained, the forecast over that share too; the most
    GPUs a stage ran on; the published figure, and the forecast's error (the latter forecast where there is one, over
    published, minus 1). Chapter :ref:`ch-costs`."""
    import pandas as pd

    runs = {run.key: run for run in all_training_runs()}
    rows = {}
    for published in PUBLISHED_RUN_COSTS:
        if not published.stages:
            continue
        forecast = bound = tokens = chips = 0.0
        for run_key, stage_tokens in published.stages:
            _, step = training_run_bound(runs[run_key])
            chips = max(chips, step.n_chips)
            per_token_s = step.n_chips / SECONDS_PER_HOUR
            forecast += float(stage_tokens.value) / float(step.forecast_tokens_per_s) * per_token_s
            bound += float(stage_tokens.value) / float(step.tokens_per_s) * per_token_s
            tokens += float(stage_tokens.value)
        share = float(published.effective_time.value) if published.effective_time else 1.0
        hours = float(published.gpu_hours.value)
        rows[published.key] = {
            "stages": len(published.stages),
            "GPUs": chips,
            "tokens": tokens,
            "published GPU-hours": hours,
            "bound GPU-hours": bound,
            "forecast GPU-hours": forecast,
            "effective time": share,
            "forecast over effective time": forecast / share,
            "error (%)": 100 * (forecast / share / hours - 1),
        }
    return pd.DataFrame(rows).T.infer_objects()


def emissions_check(pue: object = 1.0) -> object:
    """Model cards' location-based emissions rebuilt as GPU-hours x the power charged per GPU x PUE x a grid
    intensity: per card run (``hwlib.data.prices.MODEL_CARD_RUNS``), the intensity (gCO2e/kWh) its own row implies,
    and its emissions rebuilt at the mean of the intensities the other cards imply (each card's the mean of its
    rows; each card left out in turn), with the
    error (rebuilt over stated, minus 1). ``pue`` (a number or a key of ``hwlib.data.prices.PUES``) defaults to 1:
    the cards' power is 'adjusted for power usage efficiency' already. No card states its grid. Chapter
    :ref:`ch-costs`."""
    import pandas as pd

    factor = record_value("pue", pue, prices.PUES, prices.DEFAULT_PUE)
    runs = prices.MODEL_CARD_RUNS
    kwh = {run.key: float(run.gpu_hours.value) * float(run.power.value) * factor / 1e3 for run in runs}
    implied = {run.key: float(run.co2e.value) * 1e3 / kwh[run.key] for run in runs}
    card = {run.key: run.gpu_hours.source for run in runs}
    by_card = {name: np.mean([implied[key] for key in implied if card[key] == name]) for name in set(card.values())}
    rows = {}
    for run in runs:
        others = [value for name, value in by_card.items() if name != card[run.key]]
        rows[run.key] = {
            "chip": run.chip_key,
            "GPU-hours": float(run.gpu_hours.value),
            "W per GPU": float(run.power.value),
            "energy (MWh)": kwh[run.key] / 1e3,
            "stated (tCO2e)": float(run.co2e.value) / 1e3,
            "implied grid (gCO2e/kWh)": implied[run.key],
            "rebuilt, card left out (tCO2e)": kwh[run.key] * float(np.mean(others)) / GRAMS_PER_TONNE,
        }
    table = pd.DataFrame(rows).T.infer_objects()
    table["error (%)"] = 100 * (table["rebuilt, card left out (tCO2e)"] / table["stated (tCO2e)"] - 1)
    return table


def _share_of_tdp(run: object) -> float:
    return float(run.power.value) / run.n_chips / float(find_chip(run.chip_key).tdp_w)


def power_fit(left_out: str = "") -> float:
    """The system power per GPU under load over the GPU's TDP, the mean over the measured systems in the fit
    (``hwlib.data.power_runs``, those without ``outside_model``), without the source ``left_out`` (the value stored
    as ``calibrated.SYSTEM_POWER_PER_TDP``). Chapter :ref:`ch-costs`."""
    shares = [_share_of_tdp(run) for run in POWER_RUNS if not run.outside_model and run.source != left_out]
    if not shares:
        raise ValueError(f"left_out {left_out!r} leaves no measured system in the fit")
    return float(np.mean(shares))


def power_check() -> object:
    """Per measured system (``hwlib.data.power_runs``): its watts per GPU at the wall, the forecast's (the stored
    multiple of the TDP), the forecast fitted without the run's source, their errors (forecast over measured, minus
    1), the bound (the rated system power per GPU, where a rating is sourced) and, where a throughput is stated, the
    measured joules per token. Chapter :ref:`ch-costs`."""
    import pandas as pd

    stored = calibrated.SYSTEM_POWER_PER_TDP.value
    rows = {}
    for run in POWER_RUNS:
        tdp = float(find_chip(run.chip_key).tdp_w)
        measured = float(run.power.value) / run.n_chips
        rating = SYSTEM_RATINGS.get(run.chip_key)
        rows[run.key] = {
            "source": run.source,
            "system": f"{find_chip(run.chip_key).name}: {run.workload}",
            "kind": run.kind,
            "chip": run.chip_key,
            "measured W per GPU": measured,
            "forecast W per GPU": stored * tdp,
            "error (%)": 100 * (stored * tdp / measured - 1),
            "error, leave source out (%)": 100 * (power_fit(left_out=run.source) * tdp / measured - 1),
            "bound W per GPU": float(rating[1].value) / rating[0] if rating else np.nan,
            "measured J per token": float(run.power.value) / run.tokens_per_s if run.tokens_per_s else np.nan,
            "in fit": not run.outside_model,
            "why not": run.outside_model,
        }
    return pd.DataFrame(rows).T.infer_objects()
