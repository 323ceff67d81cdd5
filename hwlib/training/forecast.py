"""The parts a training forecast reports (``TrainStep.forecast_parts_s``); the step is priced by the one pricer,
``hwlib.pricing``, which also holds the overlap rule (``hidden_s``). Chapter :ref:`ch-forecast`.
"""

from __future__ import annotations

FORECAST_PARTS = (
    "matmuls",
    "fp8 experts",
    "expert kernels",
    "gradient accumulation",
    "attention",
    "elementwise",
    "pipeline bubble",
    "exposed communication",
    "overlap slowdown",
    "overhead",
    "unmodelled",
)
"""The parts of a forecast step's time (``TrainStep.forecast_parts_s``); they sum to ``forecast_time_s``."""
