"""Training runs from AMD's Primus "MoE package": DeepSeek-V2-Lite on one node of 8 MI355Xs at micro-batches of 1 to
12 sequences, and DeepSeek-V2 on 4 nodes (32 MI355Xs), in BF16 with Primus's Megatron-LM backend. A publisher and a
software stack beside NVIDIA's, whose micro-batch sweep holds the per-micro-batch MoE overheads against runs they were
not fitted to. Chapter :ref:`ch-forecast`.
"""

from __future__ import annotations

from hwlib.data.records import TrainingRun, cite
from hwlib.data.training_rows import MODEL_BY_KEY as _MODEL

_REPO = "AMD-AGI/Primus, examples/moe_package"


def _chart(file: str) -> object:
    """The citation of one chart of the package's README (its bars' printed labels)."""
    return cite(
        f"{_REPO}/images/{file} (the bar labels of the chart, added at commit b3699abf; README.md at 3aaf2d5f, 'MoE "
        "Package Blog Released', as the ROCm blog 'MoE Training Best Practices on AMD GPUs', "
        "https://rocm.blogs.amd.com/software-tools-optimization/primus-moe-package/README.html)",
        "2026-12-06",
    )


_SOFTWARE = "ROCm 7.1.0, PyTorch 2.9.0, Primus with its Megatron-LM backend"
_BASELINE = (
    "The baseline bars run none of the package's optimizations (DeepEP, sync-free MoE, loss fusion and launch tuning "
    "come after): Megatron's all-to-all dispatcher ('moe_token_dispatcher_type: alltoall', primus/configs/models/"
    "megatron/deepseek_v2_base.yaml), grouped GEMMs, no expert all-to-all overlap. Routing force-balanced "
    "('moe_router_force_load_balancing: true' in the baseline yaml, 'LOAD_BALANCE=True' in the run script); mock data."
)
_MLA = (
    "Attention: multi-head latent attention, the model's own. The baseline yaml says 'multi_latent_attention: false' "
    "but the run script passes '--multi_latent_attention True' after it ('ENABLE_MLA=${ENABLE_MLA:-True}'), and "
    "Primus's command-line arguments override the yaml"
)
_LITE = (
    "configs/MI355X/deepseek_v2_lite-pretrain-baseline.yaml at commit 3aaf2d5f: 'micro_batch_size: 12', "
    "'global_batch_size: 768', 'tensor_model_parallel_size: ${PRIMUS_TP:1}', 'pipeline_model_parallel_size: "
    "${PRIMUS_PP:1}', 'expert_model_parallel_size: ${PRIMUS_EP:8}'; run_deepseek_v2_lite_pretrain_mi355x.sh: "
    "'RECOMPUTE_LAYERS=${RECOMPUTE_LAYERS:-0}'"
)
_V2 = (
    "configs/MI355X/deepseek_v2-pretrain-baseline.yaml and run_deepseek_v2_pretrain_mi355x.sh at commit 3aaf2d5f: "
    "'MBS=${MBS:-1}', 'GBS=${GBS:-256}', 'SEQ_LENGTH=${SEQ_LENGTH:-4096}', 'TP=${TP:-1}', 'PP=${PP:-4}', "
    "'EP=${EP:-8}', 'RECOMPUTE_LAYERS=${RECOMPUTE_LAYERS:-0}', 'NNODES=4', 'USING_AINIC=${USING_AINIC:-1}'"
)
# (model key, chart file, the bar as printed: its label and its value, micro-batch, global batch, GPUs, pp)
_ROWS = (
    ("deepseek-v2-lite", "DeepSeekV2Lite_tks_speedup_mi355.png", "MBS1-Baseline 10734.6", 1, 768, 8, 1),
    ("deepseek-v2-lite", "DeepSeekV2Lite_tks_speedup_mi355.png", "MBS2-Baseline 21028.2", 2, 768, 8, 1),
    ("deepseek-v2-lite", "DeepSeekV2Lite_tks_speedup_mi355.png", "MBS4-Baseline 28063.1", 4, 768, 8, 1),
    ("deepseek-v2-lite", "DeepSeekV2Lite_tks_speedup_mi355.png", "MBS8-Baseline 30359.5", 8, 768, 8, 1),
    ("deepseek-v2-lite", "DeepSeekV2Lite_tks_speedup_mi355.png", "MBS12-Baseline 30444.3", 12, 768, 8, 1),
    ("deepseek-v2", "DeepSeekV2_tks_speedup_mi355.png", "Base-1F1B 1987.6", 1, 256, 32, 4),
)
_HOST_BOUND = (
    "The baseline is bound by its host at one and two sequences per micro-batch: a micro-batch takes as long at MBS 2 "
    "as at 1 (8,192 / 21,028.2 = 0.390 s against 4,096 / 10,734.6 = 0.382 s per GPU [derived]), the floor of the CPU "
    "launches and device-to-host synchronizations AMD names ('CPU sync & launch delays', 'CPU device-to-host (D2H) "
    "synchronizations in MoE layers induce large kernel launch latencies'), which the step model does not price "
    "(it adds per-micro-batch overheads to the device's time)"
)
_HOST_BOUND_STAGES = (
    "One sequence per micro-batch on the same baseline software, whose host floor the DeepSeek-V2-Lite bars measure: "
    "0.382 s per micro-batch over its 27 layers [derived above], about 14 ms a layer forward and backward, so a "
    "pipeline stage of 15 of DeepSeek-V2's 60 layers waits about 0.21 s a micro-batch on its host [derived], longer "
    "than the step prices its device work; AMD's later bars for this configuration gain from launch tuning and "
    "sync-free MoE ('Pre+LaunchOpt', 'Pre+SyncFree1'). The step model does not price a host floor"
)
_TITLES = {
    "deepseek-v2-lite": "'DeepSeekV2Lite MI355X SinlgeNode Training Benchmark', Tokens/Sec/GPU",
    "deepseek-v2": "'DeepSeekV2 MI355X 4-Nodes Training Benchmark', Tokens/Sec/GPU",
}
_ENDNOTES = {
    "deepseek-v2-lite": "'DeepSeek-V2-Lite pretraining throughput (tokens/second/GPU) was tested with BF16 precision "
    "on a single MI355X node with a maximum sequence length of 4096 tokens'",
    "deepseek-v2": "'DeepSeek-V2 pretraining throughput (tokens/second/GPU) was tested with BF16 precision on 4 "
    "MI355X nodes (32 GPUs total) using a maximum sequence length of 4096 tokens'",
}


def _run(model_key: str, chart: str, bar: str, mbs: int, gbs: int, gpus: int, pp: int) -> TrainingRun:
    label, value = bar.rsplit(" ", 1)
    dp = gpus // pp
    if model_key == "deepseek-v2-lite":
        batch = (
            f"Global batch not stated at MBS {mbs}: the yaml's 768 (GA {gbs // (mbs * dp)} over DP {dp}), the largest "
            "stated, spreads the step's optimizer and gradient costs thinnest (the least work, keeping the bound a "
            "bound). The same chart's memory (28.05 % of HBM at MBS 1 to 99.13 % at MBS 12, "
            "DeepSeekV2Lite_mbs_scaling_mi355.png) grows by about 18 GB a sequence, as stored activations do"
        )
        config, name = _LITE, "DeepSeek-V2-Lite on one node of 8 MI355Xs"
    else:
        batch = (
            f"GA {gbs // (mbs * dp)} over DP {dp} [derived]; 'Base-1F1B': one chunk per stage (the later 'Pre+VPP3' "
            "and 'Pre+VPP5' bars interleave)"
        )
        config, name = _V2, "DeepSeek-V2 on 4 nodes of 8 MI355Xs, one Pollara 400 AI NIC per GPU"
    return TrainingRun(
        key=f"primus-mi355x-{model_key}-mbs{mbs}-{gpus}",
        source="AMD Primus, MoE package",
        model=_MODEL[model_key],
        cluster_key="mi355x-node",
        mesh={"tp": 1, "pp": pp, "cp": 1, "dp": dp, "ep": 8},
        global_batch_sequences=gbs,
        seq_len=4096,
        recompute="none",
        dtype="bf16",
        metric="tokens_per_s_per_chip",
        measured=_chart(chart)(
            float(value),
            "tokens/s",
            bar,
            f"The '{label}' bar of the chart {_TITLES[model_key]}; endnote: {_ENDNOTES[model_key]}.",
        ),
        note=f"{name}; BF16; {_SOFTWARE}; DDP with the distributed optimizer ('overlap_grad_reduce: true', "
        f"'overlap_param_gather: true'); dp = GPUs / PP [derived]. {_BASELINE} {_MLA}. Recomputation: none "
        f"('RECOMPUTE_LAYERS=0'). {batch}. Configuration: {_REPO}/{config}.",
        micro_batch_sequences=mbs,
        outside_model=(_HOST_BOUND if mbs <= 2 else "") if model_key == "deepseek-v2-lite" else _HOST_BOUND_STAGES,
        interleave=1 if pp > 1 else None,
        schedule="1f1b" if pp > 1 else None,
    )


RUNS: tuple[TrainingRun, ...] = tuple(_run(*row) for row in _ROWS)
"""The baseline bars of AMD's Primus MoE package on MI355X (the optimization bars after them each add several
changes at once and are not runs of one stated configuration)."""
