"""What the chapters show: tables, figures, glue and explorers, as ``hw.viz.<name>``.

Each name loads its module (and matplotlib, pandas or ipywidgets) only when first used, so ``import hwlib``
stays a light calculator. The modules: ``tables`` and ``check_tables``; the figures of each topic
(``figures``, ``memory_figures``, ``model_figures``, ``serving_figures``, ``commute_figures``,
``training_figures``, ``forecast_figures``, ``family_figures``, ``load_figures``); ``explorers``; ``gluing``
(numbers in the prose); ``latex`` (tables in the PDF); ``style`` (the book's look).
"""

from __future__ import annotations

from hwlib.lazy_names import lazy_names

_NAMES = {
    "hwlib.viz.gluing": ("glue", "glued_text"),
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
    "hwlib.viz.check_tables": (
        "collective_check_table",
        "load_check_table",
        "load_sources_table",
        "plot_share_of_bound",
        "serving_check_table",
        "serving_sources_table",
        "speculation_check_table",
        "training_check_table",
    ),
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
    "hwlib.viz.forecast_figures": ("forecast_misses", "forecast_waterfall", "plot_forecast_waterfall"),
    "hwlib.viz.load_figures": (
        "plot_batch_over_time",
        "plot_closed_loop_check",
        "plot_goodput",
        "plot_latency_under_load",
        "plot_queue_wait",
        "plot_speculation",
    ),
    "hwlib.viz.family_figures": (
        "plot_attention_masks",
        "plot_decode_vs_context",
        "plot_experts_touched",
        "plot_kv_per_sequence",
        "plot_mla_flops",
        "plot_moe_usage",
    ),
    "hwlib.viz.explorers": (
        "BatchSqueezeExplorer",
        "ByteEnergyExplorer",
        "CollectiveExplorer",
        "CostExplorer",
        "EnergyShareExplorer",
        "KVCacheExplorer",
        "MemoryBudgetExplorer",
        "ModelShapeExplorer",
        "RegimeExplorer",
        "RooflineExplorer",
        "ServingExplorer",
        "ServingLoadExplorer",
        "StepIntensityExplorer",
        "TrainingExplorer",
    ),
}

__all__, __getattr__, __dir__ = lazy_names(__name__, _NAMES)
