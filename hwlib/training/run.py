"""A whole training run: its time, chip-hours and tokens per second for a token budget, and the global batch that
reaches a target soonest.

A run of E tokens at a global batch of B tokens takes E / B optimizer steps of the planner's best step
(``plan_training``), so its time is E / B times that step's. Where the run trains to a target loss rather than
through a fixed number of tokens, a larger batch needs more tokens to get there: E = E_min (1 + B / B_crit)
(McCandlish et al. 2018, Eq. 2.11; ``hw.tokens_to_target``), so the time to the target,
E_min (1 + B / B_crit) / B x t_step(B), is smallest at a batch the squeeze sets: below it the fixed costs of each
step dominate, above it the extra tokens (:ref:`ch-batch-squeeze`). ``plan_run`` tries global batches of 2^k
sequences and keeps the fastest. Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwlib._checks import positive, whole_count
from hwlib.data.records import Cluster, ModelShape, require
from hwlib.training.plan import plan_training
from hwlib.training.squeeze import tokens_to_target
from hwlib.training.step import TrainStep

SECONDS_PER_HOUR = 3600.0
BATCH_RANGE = (1 / 16, 4.0)
"""The global batches ``plan_run`` tries, as multiples of the critical batch: from a sixteenth to four times it."""


@dataclass(frozen=True)
class TrainingRun:
    """A whole run: its step (``TrainStep``, the planner's best at ``global_batch_tokens``), the ``tokens`` it
    trains on (a target's E_min (1 + B / B_crit) where a critical batch is given), its ``steps``, and its time
    (s), chip-hours and tokens per second at the forecast and at the bound. ``tried`` maps each global batch
    (tokens) tried to its forecast time (s; inf where no mesh fits). Chapter :ref:`ch-sharding`."""

    step: TrainStep
    global_batch_tokens: float
    tokens: float
    steps: float
    forecast_time_s: float
    bound_time_s: float
    tried: dict

    @property
    def forecast_chip_hours(self) -> float:
        return self.forecast_time_s * self.step.n_chips / SECONDS_PER_HOUR

    @property
    def bound_chip_hours(self) -> float:
        return self.bound_time_s * self.step.n_chips / SECONDS_PER_HOUR

    @property
    def forecast_tokens_per_s(self) -> float:
        return self.tokens / self.forecast_time_s


def plan_run(
    model: ModelShape,
    cluster: Cluster,
    n_chips: int,
    tokens: float,
    seq_len: int,
    *,
    global_batch_tokens: float | None = None,
    critical_batch_tokens: float | None = None,
    **options: object,
) -> TrainingRun:
    """The fastest whole run of ``tokens`` tokens (with ``critical_batch_tokens``, the E_min of a target loss) of
    ``model`` on ``n_chips`` chips of ``cluster``: at ``global_batch_tokens``, or, where it is None, at the global
    batch of 2^k sequences (within ``BATCH_RANGE`` of the critical batch) whose run is the shortest by the
    forecast. ``options`` go to ``plan_training``. Raises ValueError where no mesh fits. Chapter
    :ref:`ch-sharding`."""
    model = require(ModelShape, "model", model, "hw.model('llama-3-70b')")
    cluster = require(Cluster, "cluster", cluster, "hw.cluster('hgx-h100-ndr')")
    count = whole_count("n_chips", n_chips)
    budget = float(positive("tokens", tokens))
    sequence = int(positive("seq_len", seq_len, integral=True))
    critical = (
        None if critical_batch_tokens is None else float(positive("critical_batch_tokens", critical_batch_tokens))
    )
    if global_batch_tokens is not None:
        batches = [float(positive("global_batch_tokens", global_batch_tokens))]
    elif critical is None:
        raise ValueError("plan_run needs global_batch_tokens or critical_batch_tokens (to choose the batch)")
    else:
        low, high = (max(sequence, critical * share) for share in BATCH_RANGE)
        batches = [float(sequence * 2**k) for k in range(40) if low <= sequence * 2**k <= high]
    tried, runs = {}, []
    for batch in batches:
        needed = budget if critical is None else float(tokens_to_target(batch, budget, critical))
        plan = plan_training(model, cluster, batch, sequence, count, **options)
        if not plan.feasible:
            tried[batch] = np.inf
            continue
        step = plan.feasible[0].step
        steps = needed / batch
        forecast = steps * float(step.forecast_time_s)
        tried[batch] = forecast
        runs.append(TrainingRun(step, batch, needed, steps, forecast, steps * step.time_s, tried))
    if not runs:
        raise ValueError(
            f"no mesh of {count:,} chips of {cluster.name} fits {model.name} at any global batch tried "
            f"({', '.join(f'{b:,.0f}' for b in batches)} tokens)"
        )
    return min(runs, key=lambda run: run.forecast_time_s)
