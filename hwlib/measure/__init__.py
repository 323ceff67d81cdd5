"""Measuring this machine: device information, timed kernels, XLA's own counts and the collectives it inserts
(needs JAX), as ``hw.measure.<name>``.

Each name loads its module on first use. Explained in the chapter :ref:`ch-own-roofline`; XLA's counts also in
:ref:`ch-compute-and-commute`; its collectives in :ref:`ch-sharded-matmuls`.
"""

from __future__ import annotations

from hwlib.lazy_names import lazy_names

_NAMES = {
    "hwlib.measure.device": ("device_info", "estimated_cpu_peak", "measurement_plan", "theoretical_peaks"),
    "hwlib.measure.timing": ("measure_matmul", "measure_matmuls", "measure_stream", "measured_chip"),
    "hwlib.measure.xla": ("xla_layer_flops", "xla_matmul_cost"),
    "hwlib.measure.hlo": ("compiled_collectives", "hlo_collectives"),
}

__all__, __getattr__, __dir__ = lazy_names(__name__, _NAMES)
