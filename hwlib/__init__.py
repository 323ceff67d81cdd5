"""hwlib: the companion library of the book on ML-accelerator performance modelling.

Chapters use it as ``import hwlib as hw``; ``__all__`` below is the whole public API. Layers,
from the bottom: ``units``; ``data`` (record types and one module per source of numbers, with
the lookups ``chip``/``chips``, ``fabric``/``fabrics``, ...); the topic modules that compute
(``roofline``, ``memory``, ``sharding``, ``energy``, ``layer_model``, ``collectives``, ``serving``,
``serving_plan``, ``training``, ``data_parallel``); ``measure`` (runs things, with JAX); ``viz`` (tables,
figures, glue, explorers). Names from ``viz`` load matplotlib, pandas or ipywidgets only when
first used, so ``import hwlib`` stays a light calculator. Each function's docstring names the
chapter that explains it; CONTRIBUTING.md lists every quantity's one name and symbol.
"""

from __future__ import annotations

import importlib
import types

from hwlib.collectives import (
    COLLECTIVES,
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
    Fabric,
    ModelShape,
    Scenario,
    ServingRun,
    Sourced,
    TrainingRecipe,
    TrainingRun,
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
    training_measurements,
    training_runs,
)
from hwlib.data_parallel import (
    batch_squeeze,
    cluster_squeeze,
    critical_batch_from_loss,
    optimal_batch_tokens,
    steps_to_target,
    time_to_target,
    tokens_to_target,
)
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
from hwlib.measure.device import device_info, estimated_cpu_peak, measurement_plan, theoretical_peaks
from hwlib.measure.timing import measure_matmul, measure_matmuls, measure_stream, measured_chip
from hwlib.measure.xla import xla_layer_flops, xla_matmul_cost
from hwlib.memory import (
    RECOMPUTE,
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
from hwlib.parallelism import STEP_PARTS, Mesh, TrainStep, train_step
from hwlib.placement import group_topology
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
from hwlib.serving import (
    PRECISIONS,
    compute_bound_batch,
    inference_step,
    kv_copies,
    max_batch,
    memory_bound_context,
    scale_up_link,
    time_per_output_token_s,
    time_to_first_token_s,
)
from hwlib.serving_plan import (
    largest_batch_within,
    max_mean_prompt,
    serving_chips,
    serving_curve,
    serving_run_bound,
    tensor_parallel_sizes,
    throughput_bound,
)
from hwlib.sharding import training_memory
from hwlib.training import optimizer_bytes, regime_fabric, regime_steps, training_step, transformer_params
from hwlib.training_plan import (
    candidate_meshes,
    fsdp_threshold_tokens,
    megatron_step_flops,
    plan_meshes,
    training_run_bound,
)
from hwlib.units import (
    BITS_PER_BYTE,
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
    format_bytes_per_s,
    format_flops,
    format_flops_per_s,
    format_number,
    format_quantity,
    format_seconds,
)

_SOURCE_MODULES = {
    "hwlib.data.doc000",
    "hwlib.data.doc002",
    "hwlib.data.literature",
    "hwlib.data.serving_measurements",
    "hwlib.data.training_measurements",
}
"""The data modules a chapter reads by name (``hw.doc002.B_W``); other modules are not API."""

_VIZ = {
    "hwlib.viz.glue": ("glue", "glued_text"),
    "hwlib.viz.style": ("PALETTE", "use_book_style"),
    "hwlib.viz.tables": (
        "balance_table",
        "byte_cost_table",
        "chip_table",
        "elementwise_tax_table",
        "fabric_table",
        "measurements_table",
        "provenance_table",
        "regime_table",
        "squeeze_table",
        "t_min_table",
        "symbol_table",
        "xla_counts_table",
        "xla_layer_table",
    ),
    "hwlib.viz.check_tables": ("plan_training", "serving_check_table", "serving_sources_table", "training_check_table"),
    "hwlib.viz.figures": ("mark_kernel", "plot_capacity_and_ridge", "plot_measured_roofline", "plot_roofline"),
    "hwlib.viz.memory_figures": ("plot_activations", "plot_decode_bound", "plot_kv_per_token", "plot_max_params"),
    "hwlib.viz.commute_figures": (
        "plot_energy_per_flop",
        "plot_energy_shares",
        "plot_regimes",
        "plot_step_intensity",
        "plot_t_min",
        "plot_time_to_target",
    ),
    "hwlib.viz.model_figures": ("plot_flops_over_6p", "plot_param_shares"),
    "hwlib.viz.serving_figures": ("plot_latency_throughput", "plot_serving_roofline"),
    "hwlib.viz.training_figures": ("plot_step_breakdown",),
    "hwlib.viz.explorers": (
        "BatchSqueezeExplorer",
        "ByteEnergyExplorer",
        "EnergyShareExplorer",
        "KVCacheExplorer",
        "MemoryBudgetExplorer",
        "ModelShapeExplorer",
        "RegimeExplorer",
        "RooflineExplorer",
        "ServingExplorer",
        "StepIntensityExplorer",
        "TrainingExplorer",
    ),
}
_LAZY = {name: module for module, names in _VIZ.items() for name in names}


def __getattr__(name: str) -> object:
    """Load a viz name (figure, table, glue, explorer) on first use."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'hwlib' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = sorted(
    name
    for name, value in globals().items()
    if not name.startswith("_")
    and name not in {"annotations", "importlib"}
    and (not isinstance(value, types.ModuleType) or value.__name__ in _SOURCE_MODULES)
) + sorted(_LAZY)

__version__ = "0.2.0"
