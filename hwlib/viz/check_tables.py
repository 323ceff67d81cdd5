"""Measured runs beside their bounds, and the training plan: the tables of the chapters "Serving a model" and
"Sharding a training step" that put hwlib's models next to published measurements.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from hwlib.data import model as find_model
from hwlib.data import serving_runs as all_serving_runs
from hwlib.data import training_runs as all_training_runs
from hwlib.data.records import ServingRun, TrainingRun
from hwlib.serving.plan import max_mean_prompt, serving_run_bound
from hwlib.training.plan import training_run_bound


def serving_check_table(runs: Sequence[ServingRun] | None = None) -> pd.DataFrame:
    """Measured serving runs beside the model's throughput bound: tokens/s, the share of the bound reached,
    and for runs of unstated prompt length the longest mean prompt the bound allows. Chapter "Serving a model".
    """
    runs = all_serving_runs() if runs is None else tuple(runs) if isinstance(runs, (list, tuple)) else ()
    if not runs or not all(isinstance(run, ServingRun) for run in runs):
        raise TypeError(f"runs must be a non-empty sequence of ServingRun records, got {runs!r}")
    bounds = [serving_run_bound(run).tokens_per_s for run in runs]
    measured = [run.tokens_per_s.value for run in runs]
    lengths = [
        f"{run.input_len:,} / {run.output_len:,.0f}"
        if run.input_len is not None
        else f"prompt not stated; answer {run.output_len:,.0f} on average"
        if run.output_len is not None
        else "not stated"
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
            "longest mean prompt allowed": [
                max_mean_prompt(run) if run.input_len is None and run.output_len is not None else None for run in runs
            ],
            "key": [run.key for run in runs],
        },
        index=pd.Index([f"{run.source}: {run.system}" for run in runs], name="run"),
    )


def serving_sources_table(runs: Sequence[ServingRun] | None = None) -> pd.DataFrame:
    """Where each measured serving run comes from: the file or page, the line quoted, the configuration notes.

    Chapter "Serving a model".
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
    """Measured training runs beside ``hw.train_step``'s bound for each one's own mesh, in its own metric.

    Chapter "Sharding a training step".
    """
    runs = all_training_runs() if runs is None else tuple(runs) if isinstance(runs, (list, tuple)) else ()
    if not runs or not all(isinstance(run, TrainingRun) for run in runs):
        raise TypeError(f"runs must be a non-empty sequence of TrainingRun records, got {runs!r}")
    units = {
        "megatron_tflops": ("TFLOP/s per GPU (Eq. 3)", 1e-12),
        "mfu": ("MFU (%)", 100.0),
        "tokens_per_s_per_chip": ("tokens/s per GPU", 1.0),
    }
    rows = []
    for run in runs:
        bound, step = training_run_bound(run)
        label, scale = units[run.metric]
        rows.append(
            {
                "run": f"{run.model.name}, {step.n_chips:,} chips",
                "source": run.source.split(",")[0],
                "mesh": str(step.mesh),
                "batch x sequence": f"{run.global_batch_sequences:,} x {run.seq_len:,}",
                "metric": label,
                "measured": run.measured.value * scale,
                "bound": bound * scale,
                "% of bound": 100 * run.measured.value / bound,
                "key": run.key,
            }
        )
    return pd.DataFrame(rows).set_index("run")
