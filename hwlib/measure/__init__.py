"""Measuring this machine: device information, timed kernels and XLA's own counts (needs JAX), as
``hw.measure.<name>``.

Each name loads its module on first use. Explained in the chapter :ref:`ch-own-roofline`; XLA's counts also in
:ref:`ch-compute-and-commute`.
"""

from __future__ import annotations

import importlib

_NAMES = {
    "hwlib.measure.device": ("device_info", "estimated_cpu_peak", "measurement_plan", "theoretical_peaks"),
    "hwlib.measure.timing": ("measure_matmul", "measure_matmuls", "measure_stream", "measured_chip"),
    "hwlib.measure.xla": ("xla_layer_flops", "xla_matmul_cost"),
}
_MODULE_OF = {name: module for module, names in _NAMES.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> object:
    """Load a measuring function on first use."""
    if name in _MODULE_OF:
        value = getattr(importlib.import_module(_MODULE_OF[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'hwlib.measure' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
