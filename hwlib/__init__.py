"""hwlib: the companion library of the book on ML-accelerator performance modelling.

Chapters use it as ``import hwlib as hw``. Every hardware number and every formula of the
book lives here once; the docstring of each function names the chapter that explains it.
"""

from hwlib.hardware import SOURCES, Chip, Sourced, chip, chips
from hwlib.publish import glue
from hwlib.energy import (
    ADD_EQUIVALENT_J,
    BITS_PER_BYTE,
    ADD_ENERGY_PER_BIT,
    HBM_INTERFACE_ENERGY_PER_BIT,
    SRAM_ENERGY_PER_BIT,
    TABLE1_NOTE_HBM_POWER,
    ROUND_TRIP_MM,
    WIRE_ENERGY_PER_BIT_MM,
    ByteCost,
    MachineBalance,
    add_equivalent_distance_mm,
    add_equivalents,
    byte_cost_table,
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
from hwlib.xla_check import compare_with_xla, xla_layer_flops, xla_matmul_flops
from hwlib.layer_model import (
    DOC002_MODEL,
    DOC002_SCENARIOS,
    Scenario,
    balance_table,
    elementwise_tax_table,
    regime_steps,
    regime_table,
    t_min_table,
    FABRIC_BANDWIDTH,
    FABRICS,
    TRAFFIC_CONSTANTS,
    LayerStep,
    TrainingStep,
    activation_energy_ratio,
    allreduce_time_s,
    d_min,
    elementwise_time_ratio,
    elementwise_time_share,
    fabric_bytes_per_s,
    l2_elements,
    layer_flops,
    layer_intensity,
    layer_step,
    optimizer_bytes,
    params_per_layer,
    t_min,
    t_min_large_d,
    training_step,
    transformer_params,
)
from hwlib.memory import (
    DEPLOYMENTS,
    PARTS,
    RECOMPUTE,
    TRAINING_RECIPES,
    Deployment,
    TrainingRecipe,
    activation_bytes,
    chips_needed,
    decode_step_time_s,
    deployment,
    deployment_chips,
    deployment_name,
    kv_cache_bytes,
    max_params,
    tokens_that_fit,
    training_state_breakdown,
    training_state_bytes,
    usable_bytes,
)
from hwlib.models import MODELS, ModelShape, model
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
from hwlib.plotting import (
    PALETTE,
    mark_kernel,
    plot_activations,
    plot_capacity_and_ridge,
    plot_decode_bound,
    plot_kv_per_token,
    plot_max_params,
    plot_roofline,
    use_book_style,
)
from hwlib.tables import chip_table, provenance_table
from hwlib.units import (
    BYTE_UNITS,
    BYTES_PER_ELEMENT,
    GB,
    GIGA,
    MB,
    PB,
    PETA,
    TB,
    TERA,
    GiB,
    KiB,
    MiB,
    TiB,
    convert_bytes,
    dtype_bytes,
    format_bytes,
    format_bytes_per_s,
    format_flops,
    format_flops_per_s,
    format_seconds,
    kB,
)
from hwlib.widgets import KVCacheExplorer, MemoryBudgetExplorer, RooflineExplorer
from hwlib.measure import (
    MEASURE_DTYPES,
    CpuInfo,
    DeviceInfo,
    MeasuredChip,
    Measurement,
    MeasurePlan,
    XlaCost,
    cpu_peak_flops_per_s,
    device_info,
    estimated_cpu_peak,
    measure_matmul,
    measure_matmuls,
    measure_stream,
    measured_chip,
    measurement_plan,
    measurements_table,
    parse_cpuinfo,
    stream_counts,
    theoretical_peaks,
    xla_counts_table,
    xla_matmul_cost,
    xla_stream_cost,
)
from hwlib.plotting import plot_measured_roofline
from hwlib.plotting import (
    ENERGY_PART_LABELS,
    plot_energy_per_flop,
    plot_energy_shares,
    plot_step_intensity,
    plot_t_min,
)
from hwlib.widgets import ByteEnergyExplorer, EnergyShareExplorer, RegimeExplorer, StepIntensityExplorer
from hwlib.fabrics import CLUSTERS, FABRICS_CATALOGUE, Cluster, Fabric, cluster, fabric, fabric_table, fabrics
from hwlib.data_parallel import (
    CRITICAL_BATCH_DOC002,
    KAPLAN_CRITICAL_BATCH,
    SQUEEZE_COLUMNS,
    BatchSqueeze,
    TimeToTarget,
    batch_squeeze,
    cluster_squeeze,
    critical_batch_from_loss,
    hierarchical_allreduce_time_s,
    optimal_batch_tokens,
    squeeze_table,
    steps_to_target,
    time_to_target,
    tokens_to_target,
)
from hwlib.plotting import plot_time_to_target
from hwlib.widgets import BatchSqueezeExplorer

__version__ = "0.1.0"
