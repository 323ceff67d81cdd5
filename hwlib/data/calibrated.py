"""The forecast's fitted values: what no kernel record covers, fitted by ``hw.calibration()`` on the measured runs.

Each is the value the fit over every measured run in the error targets returns (serving runs for the first three,
training runs for the others); ``tests/test_forecast.py`` refits and checks that these are its result, so a change to
the runs or the model that moves the fit fails until they are updated here. Chapter :ref:`ch-forecast`.
"""

from __future__ import annotations

from hwlib.data.records import cite

_FIT = cite("hw.calibration(), fitted on the measured runs of hw.training_runs() and hw.serving_runs()")

HBM_FRACTION = _FIT(
    0.7,
    "1",
    "fitted",
    "Share of the HBM bandwidth the kernels of a serving step reach on every chip: no published stream measurement "
    "of these chips was found to quote.",
)
"""Share of HBM bandwidth kernels reach (fitted)."""

LAYER_OVERHEAD_S = _FIT(
    54e-6,
    "s",
    "fitted",
    "Seconds each layer adds to every serving step beyond its kernels' priced time: launches, the gaps between "
    "kernels, sampling and scheduling, spread over the layers.",
)
"""Seconds each layer adds to every serving step (fitted)."""

SEQUENCE_OVERHEAD_S = _FIT(
    20e-6,
    "s",
    "fitted",
    "Seconds each sequence in a batch adds to every serving step beyond its kernels' priced time: sampling, "
    "detokenization and the scheduler's work per request.",
)
"""Seconds each sequence adds to every serving step (fitted)."""

ELEMENTWISE_PASSES = _FIT(
    2.0,
    "1",
    "fitted",
    "Passes of a training step's elementwise kernels (norms, activations, residual adds, rotary embeddings, "
    "softmax outside fused attention, casts) over the activations its matmuls read and write, per forward, "
    "backward (twice) and recomputed forward, at the chip's achieved HBM bandwidth.",
)
"""Passes of training's elementwise kernels over the matmuls' activations (fitted)."""

UNMODELLED_SHARE = _FIT(
    0.25,
    "1",
    "fitted",
    "Share of a training step's time outside every modelled term: the optimizer step, data loading, "
    "synchronisation and the gaps between kernels.",
)
"""Share of a training step's time no modelled term accounts for (fitted)."""

TRAINING_ERROR = _FIT(
    0.092,
    "1",
    "fitted",
    "Mean absolute relative error of the training forecast, each run left out of the fit in turn: the band the "
    "calculator prints beside a training forecast.",
)
"""Leave-one-out mean error of the training forecast (the calibration's result)."""

SERVING_ERROR = _FIT(
    0.120,
    "1",
    "fitted",
    "Mean absolute relative error of the serving forecast, each run left out of the fit in turn: the band the "
    "calculator prints beside a serving forecast.",
)
"""Leave-one-out mean error of the serving forecast (the calibration's result)."""
