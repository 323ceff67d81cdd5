"""hwlib: the companion library of the book on ML-accelerator performance modelling.

Chapters use it as ``import hwlib as hw``; ``__all__`` below is the whole public API. Layers, from the bottom:
``units``; ``data`` (record types and one module per source of numbers, with the lookups ``chip``/``chips``,
``fabric``/``fabrics``, ...); the topic modules that compute (``roofline``, ``memory``, ``energy``,
``layer_model``, ``collectives``, ``placement``, ``serving/``, ``training/``), and beside each bound its
forecast (``efficiency``, ``calibration_fit``); ``measure`` (runs things, with JAX); ``viz`` (tables, figures,
glue, explorers). Names from ``viz`` load matplotlib, pandas or ipywidgets only when first used, so ``import
hwlib`` stays a light calculator. Each function's docstring names the chapter that explains it; CONTRIBUTING.md
lists every quantity's one name and symbol.
"""

from __future__ import annotations

import types

from hwlib import (
    cost_check,  # hw.cost_check.gpu_hours_check
    costs,  # hw.costs.serving_cost
    measure,  # loaded on first use: hw.measure.measure_matmul
    viz,  # loaded on first use: hw.viz.plot_roofline
)
from hwlib.calibration_fit import calibration, forecast_band
from hwlib.collectives import (
    allreduce_time_s,
    collective_time_s,
    hierarchical_allreduce_time_s,
    hierarchy,
    ring,
    switch,
    torus,
)
from hwlib.data import (
    Chip,
    Cluster,
    ModelShape,
    chip,
    chips,
    cluster,
    clusters,
    custom_chip,
    custom_fabric,
    deployment,
    deployments,
    doc000,
    doc002,
    fabric,
    fabrics,
    literature,
    model,
    models,
    recipe,
    recipes,
    serving_measurements,
    serving_runs,
    step_measurements,
    training_runs,
)
from hwlib.data.request_traces import request_trace
from hwlib.efficiency import Efficiency
from hwlib.energy import (
    ADD_EQUIVALENT_J,
    add_equivalent_distance_mm,
    add_equivalents,
    byte_costs,
    energy_per_flop_j,
    flop_energy_from_power,
    full_load_power_w,
    hbm_power_w,
    implied_hbm_power_w,
    machine_balance,
    rebuilt_byte_costs,
    wire_energy_j,
)
from hwlib.layer_model import (
    activation_energy_ratio,
    blocking_elements,
    d_min,
    elementwise_time_ratio,
    elementwise_time_share,
    layer_flops,
    layer_step,
    t_min,
    t_min_large_d,
)
from hwlib.memory import (
    activation_bytes,
    chips_needed,
    deployment_chips,
    deployment_name,
    kv_cache_bytes,
    logits_bytes,
    max_params,
    tokens_that_fit,
    training_state_breakdown,
    training_state_bytes,
    usable_bytes,
)
from hwlib.placement import group_topology
from hwlib.precision import PRECISIONS, Precision
from hwlib.roofline import (
    attainable_flops_per_s,
    elementwise_intensity,
    is_compute_bound,
    matmul_bytes,
    matmul_flops,
    matmul_intensity,
    ridge_point,
    roofline_time_s,
)
from hwlib.serving.max_rate import max_arrival_rate
from hwlib.serving.plan import largest_batch_within, serving_chips, serving_curve, tensor_parallel_sizes
from hwlib.serving.simulate import simulate_serving
from hwlib.serving.speculative import Speculation, speculative_tokens_per_step
from hwlib.serving.step import (
    compute_bound_batch,
    inference_step,
    kv_copies,
    max_batch,
    memory_bound_context,
    time_per_output_token_s,
    time_to_first_token_s,
)
from hwlib.serving.throughput import serving_run_bound, throughput_bound
from hwlib.training.closed_forms import fsdp_threshold_tokens, fsdp_tp_optimum, saved_activation_bytes
from hwlib.training.finetune import LoRA
from hwlib.training.mesh import Mesh
from hwlib.training.plan import plan_training
from hwlib.training.regimes import optimizer_bytes, regime_steps, training_step, transformer_params
from hwlib.training.savers import Offload
from hwlib.training.squeeze import (
    batch_squeeze,
    cluster_squeeze,
    critical_batch_from_loss,
    steps_to_target,
    time_to_target,
    tokens_to_target,
)
from hwlib.training.step import train_step
from hwlib.training.zero import training_memory
from hwlib.units import (
    BYTES_PER_ELEMENT,
    GB,
    MB,
    TB,
    TERA,
    GiB,
    KiB,
    MiB,
    convert_bytes,
    dtype_bytes,
    format_bytes,
    format_flops,
    format_number,
    format_seconds,
)

_SOURCE_MODULES = {
    "hwlib.data.doc000",
    "hwlib.data.doc002",
    "hwlib.data.literature",
    "hwlib.data.serving_measurements",
    "hwlib.data.step_measurements",
}
"""The data modules a chapter reads by name (``hw.doc002.B_W``); other modules are not API."""

__all__ = sorted(
    name
    for name, value in globals().items()
    if not name.startswith("_")
    and name not in {"annotations"}
    and (not isinstance(value, types.ModuleType) or value.__name__ in _SOURCE_MODULES or value in (measure, viz))
)

__version__ = "0.2.0"


def __dir__() -> list[str]:
    return sorted(__all__)
