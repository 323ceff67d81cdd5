"""Mixture-of-experts training runs: Megatron-Bridge's rows (Qwen3-30B-A3B on 16 H100s, DeepSeek-V3 on 1,024 H100s
and on 256 B200s and GB200s, Qwen3-235B-A22B on 256 B200s and GB200s), the Megatron-Core MoE team's Model Zoo
(Qwen3-235B-A22B on 256 H100s) and DeepSeek-V3's own pre-training on 2,048 H800s. Each keeps its bound check; the
forecast's fit leaves them out (``outside_model``) where a cost of the run is not modelled. Chapter
:ref:`ch-sharding`.
"""

from __future__ import annotations

from hwlib.data.records import TrainingRun, cite
from hwlib.data.training_rows import MODEL_BY_KEY as _MODEL

_MBRIDGE_ARCHIVE = cite(
    "NVIDIA-NeMo/Megatron-Bridge, docs/performance-summary-archive.md (commit 067f987d), "
    "https://docs.nvidia.com/nemo/megatron-bridge/latest/performance-summary-archive.html",
    "2026-12-06",
)
_FORCED = (
    "The page: 'In MoE training benchmarks, we force-balance the token distribution among experts and all benchmarks "
    "are token-dropless' (routing_imbalance 1)."
)
_FINE_GRAINED = (
    "Fine-grained experts (128 of width 768 on a 2,048-wide model): the many small kernels of routing, permutation "
    "and grouped GEMMs that Megatron-Core's MoE guide names ('Fine-grained MoE produces many small operations that "
    "can underutilize GPU resources') are priced as one large matmul; the runs reach 15 to 25 % of their bound"
)
_CONFIGS = (
    "NVIDIA-NeMo/Megatron-Bridge, scripts/performance/configs: deepseek/deepseek_v3_llm_pretrain.yaml at commit "
    "0a72226a (2025-09-10, the 25.09 benchmarks: 'overlap_moe_expert_parallel_comm: true', 'recompute_modules: "
    '["mla_up_proj", "mlp"]\', DeepEP) and qwen/qwen3_workload_base_configs.py at c3e43e6a (2025-12-03: '
    "QWEN3_30B_A3B H100 'pipeline_model_parallel_size=2, virtual_pipeline_model_parallel_size=12, "
    "moe_a2a_overlap=True') and 4948f752 (EP 16 without pipeline: 'moe_a2a_overlap=False', HybridEP)"
)

# (release, the row as printed: System | #-GPUs | Precision | GBS | MBS | Sequence Length | [FSDP |] TP | PP | CP | VP
# | EP | Tokens / sec / GPU | Model TFLOP / sec / GPU)
_QWEN3_ROWS = (
    ("26.06", "| DGX-H100 | 16 | FP8 | 1024 | 1 | 4096 | 1 | 1 | 1 | n/a | 16 | 8826 | 203 |"),
    ("26.04.01", "| DGX-H100 | 16 | FP8 | 1024 | 1 | 4096 | 0 | 1 | 1 | 1 | n/a | 16 | 8960 | 206 |"),
    ("26.02.01", "| DGX-H100 | 16 | FP8 | 1024 | 1 | 4096 | 0 | 1 | 2 | 1 | 12 | 8 | 9058 | 208 |"),
)


def _qwen3_run(release: str, row: str) -> TrainingRun:
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    if len(cells) == 13:  # 26.06 prints no FSDP column
        cells.insert(6, "0")
    _, gpus, _, gbs, mbs, seq, _, tp, pp, cp, vp, ep, tokens, _ = cells
    gpus, gbs, mbs, seq, tp, pp, cp, ep = (int(cell) for cell in (gpus, gbs, mbs, seq, tp, pp, cp, ep))
    return TrainingRun(
        key=f"mbridge{release.replace('.', '')}-h100-qwen3-30b-a3b",
        source=f"Megatron-Bridge, {release} performance summary",
        model=_MODEL["qwen3-30b-a3b"],
        cluster_key="hgx-h100-ndr",
        mesh={"tp": tp, "pp": pp, "cp": cp, "dp": gpus // (tp * pp * cp), "ep": ep},
        global_batch_sequences=gbs,
        seq_len=seq,
        recompute="none",
        dtype="fp8",
        metric="tokens_per_s_per_chip",
        measured=_MBRIDGE_ARCHIVE(
            float(tokens), "tokens/s", row, f"Tokens / sec / GPU, Qwen3_30B_a3B, NeMo {release}."
        ),
        note=f"DGX-H100 (network not stated: modelled as hgx-h100-ndr); FP8; DDP; dp = GPUs / (TP PP CP) [derived]. "
        f"{_FORCED} Recomputation not stated: none, the least, keeps the bound a bound. The expert all-to-alls overlap "
        f"another micro-batch's compute in 26.02.01's configuration only: {_CONFIGS}.",
        micro_batch_sequences=mbs,
        interleave=int(vp) if pp > 1 else None,
        ep_overlap=release == "26.02.01",
    )


_BLACKWELL = (
    "DeepSeek-V3 in MXFP8 on Blackwell: the experts' MXFP8 grouped GEMMs are priced at the dense FP8 GEMM's "
    "efficiency (no grouped-GEMM measurement on B200 or GB200 was found); the runs whose step the experts' compute "
    "sets are slower than their forecast by more than any dense Blackwell run"
)
_BLACKWELL_CONFIGS = (
    "NVIDIA-NeMo/Megatron-Bridge, scripts/performance/configs/deepseek/deepseek_workload_base_configs.py: at commit "
    "5acef930 (2026-04-18) GB200 'pipeline_model_parallel_size=4, virtual_pipeline_model_parallel_size=4, "
    'expert_model_parallel_size=64, moe_flex_dispatcher_backend="hybridep", moe_a2a_overlap=False\', B200 MXFP8 '
    "'pipeline_model_parallel_size=8, virtual_pipeline_model_parallel_size=2, expert_model_parallel_size=32, "
    'moe_a2a_overlap=True, recompute_modules=["mla_up_proj", "mlp"]\' (B200 before it: PP 16, EP 8, '
    "'moe_a2a_overlap=False', 'recompute_modules=[\"mla_up_proj\"]'); at afb5dd47 (2026-06-10, 'DSV3 GB200 MXFP8 "
    "full-iter CG recipe') GB200 MXFP8 'cuda_graph_impl=\"full_iteration\", moe_a2a_overlap=True, "
    'recompute_modules=["mla_up_proj"]\''
)
# (release, cluster, the row as printed: System | #-GPUs | Precision | GBS | MBS | Sequence Length | [FSDP |] TP | PP
# | CP | VP | EP | Tokens / sec / GPU | Model TFLOP / sec / GPU, EP overlap, recompute) per the configurations above
_DEEPSEEK_BLACKWELL_ROWS = (
    ("26.02", "hgx-b200-ndr", "| DGX-B200 | 256 | MXFP8 | 4096 | 1 | 4096 | 0 | 1 | 16 | 1 | n/a | 8 | 2689 | 699 |"),
    (
        "26.02.01",
        "hgx-b200-ndr",
        "| DGX-B200 | 256 | MXFP8 | 4096 | 1 | 4096 | 0 | 1 | 16 | 1 | n/a | 8 | 2790 | 725 |",
    ),
    ("26.04", "hgx-b200-ndr", "| DGX-B200 | 256 | MXFP8 | 4096 | 1 | 4096 | 0 | 1 | 16 | 1 | n/a | 8 | 2815 | 732 |"),
    ("26.04.01", "hgx-b200-ndr", "| DGX-B200 | 256 | MXFP8 | 4096 | 1 | 4096 | 0 | 1 | 8 | 1 | 2 | 32 | 3328 | 864 |"),
    (
        "26.02",
        "gb200-nvl72-ndr",
        "| DGX-GB200 | 256 | MXFP8 | 4096 | 1 | 4096 | 0 | 1 | 4 | 1 | 4 | 64 | 3955 | 1028 |",
    ),
    (
        "26.02.01",
        "gb200-nvl72-ndr",
        "| DGX-GB200 | 256 | MXFP8 | 4096 | 1 | 4096 | 0 | 1 | 4 | 1 | 4 | 64 | 4021 | 1046 |",
    ),
    (
        "26.04",
        "gb200-nvl72-ndr",
        "| DGX-GB200 | 256 | MXFP8 | 4096 | 1 | 4096 | 0 | 1 | 4 | 1 | 4 | 64 | 4193 | 1090 |",
    ),
    (
        "26.04.01",
        "gb200-nvl72-ndr",
        "| DGX-GB200 | 256 | MXFP8 | 4096 | 1 | 4096 | 0 | 1 | 4 | 1 | 4 | 64 | 4256 | 1106 |",
    ),
    ("26.06", "gb200-nvl72-ndr", "| DGX-GB200 | 256 | MXFP8 | 4096 | 1 | 4096 | 1 | 4 | 1 | 4 | 64 | 4969 | 1292 |"),
    ("26.06.01", "gb200-nvl72-ndr", "| DGX-GB200 | 256 | MXFP8 | 4096 | 1 | 4096 | 1 | 4 | 1 | 4 | 64 | 4928 | 1280 |"),
)
_FULL_ITERATION_GRAPHS = ("26.06", "26.06.01")


def _deepseek_blackwell_run(release: str, cluster_key: str, row: str) -> TrainingRun:
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    if len(cells) == 13:  # 26.06 prints no FSDP column
        cells.insert(6, "0")
    system, gpus, _, gbs, mbs, seq, _, tp, pp, cp, vp, ep, tokens, _ = cells
    gpus, gbs, mbs, seq, tp, pp, cp, ep = (int(cell) for cell in (gpus, gbs, mbs, seq, tp, pp, cp, ep))
    overlap = ep == 32 or release in _FULL_ITERATION_GRAPHS  # B200's EP 32 recipe and GB200's June recipe
    return TrainingRun(
        key=f"mbridge{release.replace('.', '')}-{system.split('-')[1].lower()}-deepseek-v3",
        source=f"Megatron-Bridge, {release} performance summary",
        model=_MODEL["deepseek-v3"],
        cluster_key=cluster_key,
        mesh={"tp": tp, "pp": pp, "cp": cp, "dp": gpus // (tp * pp * cp), "ep": ep},
        global_batch_sequences=gbs,
        seq_len=seq,
        recompute="up-projections" if overlap or pp == 16 else "none",
        dtype="fp8",
        metric="tokens_per_s_per_chip",
        measured=_MBRIDGE_ARCHIVE(float(tokens), "tokens/s", row, f"Tokens / sec / GPU, DeepSeekV3, NeMo {release}."),
        note=f"{system}; MXFP8 (priced at the fp8 peak); dp = GPUs / (TP PP CP) [derived]. {_FORCED} Recomputation, "
        f"expert all-to-all overlap and dispatcher from the benchmark configurations of the time (the GB200 recipe's "
        f"dense-MLP recomputation recorded as none): {_BLACKWELL_CONFIGS}.",
        micro_batch_sequences=mbs,
        interleave=int(vp) if vp != "n/a" else 1,
        ep_overlap=overlap,
    )


_QWEN3_235B_CONFIGS = (
    "NVIDIA-NeMo/Megatron-Bridge, src/megatron/bridge/perf_recipes/qwen/{b200,gb200}/qwen3_moe.py at commit 067f987d: "
    "'cfg.model.recompute_granularity = None' in every Qwen3 235B-A22B recipe; B200 'pipeline_model_parallel_size = "
    "8', 'expert_model_parallel_size = 8', 'moe_a2a_overlap = False'; GB200 MXFP8 "
    "'virtual_pipeline_model_parallel_size = 3', 'expert_model_parallel_size = 32', "
    "'moe_flex_dispatcher_backend = \"hybridep\"'"
)
# (release, cluster, the row as printed: System | #-GPUs | Precision | GBS | MBS | Sequence Length | FSDP | TP | PP | CP
# | VP | EP | Tokens / sec / GPU | Model TFLOP / sec / GPU)
_QWEN3_235B_ROWS = (
    ("26.02", "hgx-b200-ndr", "| DGX-B200 | 256 | MXFP8 | 8192 | 1 | 4096 | 0 | 1 | 8 | 1 | n/a | 8 | 3805 | 563 |"),
    ("26.04.01", "hgx-b200-ndr", "| DGX-B200 | 256 | MXFP8 | 8192 | 1 | 4096 | 0 | 1 | 8 | 1 | n/a | 8 | 3776 | 560 |"),
    ("25.11", "gb200-nvl72-ndr", "| DGX-GB200 | 256 | BF16 | 8192 | 1 | 4096 | 0 | 1 | 8 | 1 | 3 | 32 | 4916 | 728 |"),
    (
        "26.04.01",
        "gb200-nvl72-ndr",
        "| DGX-GB200 | 256 | MXFP8 | 8192 | 1 | 4096 | 0 | 1 | 8 | 1 | 3 | 32 | 5680 | 840 |",
    ),
)


def _qwen3_235b_run(release: str, cluster_key: str, row: str) -> TrainingRun:
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    system, gpus, precision, gbs, mbs, seq, _, tp, pp, cp, vp, ep, tokens, _ = cells
    gpus, gbs, mbs, seq, tp, pp, cp, ep = (int(cell) for cell in (gpus, gbs, mbs, seq, tp, pp, cp, ep))
    return TrainingRun(
        key=f"mbridge{release.replace('.', '')}-{system.split('-')[1].lower()}-qwen3-235b-a22b",
        source=f"Megatron-Bridge, {release} performance summary",
        model=_MODEL["qwen3-235b-a22b"],
        cluster_key=cluster_key,
        mesh={"tp": tp, "pp": pp, "cp": cp, "dp": gpus // (tp * pp * cp), "ep": ep},
        global_batch_sequences=gbs,
        seq_len=seq,
        recompute="none",
        dtype="bf16" if precision == "BF16" else "fp8",
        metric="tokens_per_s_per_chip",
        measured=_MBRIDGE_ARCHIVE(
            float(tokens), "tokens/s", row, f"Tokens / sec / GPU, Qwen3_235B_a22B, NeMo {release}."
        ),
        note=f"{system}; {precision}"
        + (" (priced at the fp8 peak)" if precision == "MXFP8" else "")
        + f"; dp = GPUs / (TP PP CP) [derived]. {_FORCED} No recomputation and no expert all-to-all overlap, as the "
        f"benchmark configurations read: {_QWEN3_235B_CONFIGS}.",
        micro_batch_sequences=mbs,
        interleave=int(vp) if vp != "n/a" else None,
    )


_MODEL_ZOO = cite(
    "yanring/Megatron-MoE-ModelZoo (the Megatron-Core MoE team's best practices), best_practice/qwen3/readme.md at "
    "commit 798dfb50, the H100 table ('InfiniBand 8x50 GB/s')",
    "2026-12-06",
)
_ZOO_HEADER = (
    "| Model | Dispatcher | System | Precision | #GPUs | SEQ LEN | TP | CP | EP | PP | EDP | ETP | VPP | DP | FSDP "
    "| MBS | GBS | GA | recompute | Step time (sec) | Per GPU TF |"
)
_ZOO_NOTE = (
    "Qwen3 235B-A22B in BF16 on 256 H100s with DeepEP; routing not forced (the page: 'Add "
    "--moe-router-force-load-balancing to test forced load balancing'), so the busiest expert's load is not stated "
    "and the step prices balanced experts. The experts are not split by tensor parallelism (ETP 1: Megatron-Core's "
    "parallel folding spreads them over the tensor- and data-parallel ranks), where the mesh splits them with the "
    "attention (the same FLOPs and weights per chip; the all-to-all's group differs)."
)
"""What the Model Zoo's rows share."""


_DEEPSEEK_H100_ROW = (
    "| DeepSeekV3 (dropless) | 1024 | 8192 | 1 | 4096 | 0 | 2 | 8 | 1 | 4 | 64 | 128 | 1297 | 338 (330) |"
)

_DEEPSEEK_V3 = cite(
    "DeepSeek-AI, 'DeepSeek-V3 Technical Report', arXiv:2412.19437, Sec. 1, 3.1, 3.2 and 4.2", "2026-12-06"
)
_H800_GPU_HOURS_PER_TRILLION = 180e3
"""H800 GPU-hours per trillion tokens of DeepSeek-V3's pre-training (arXiv:2412.19437, Sec. 1)."""

RUNS: tuple[TrainingRun, ...] = (
    *(_qwen3_run(release, row) for release, row in _QWEN3_ROWS),
    *(_deepseek_blackwell_run(*row) for row in _DEEPSEEK_BLACKWELL_ROWS),
    *(_qwen3_235b_run(*row) for row in _QWEN3_235B_ROWS),
    TrainingRun(
        key="moe-zoo-h100-qwen3-235b-a22b-tp4",
        source="Megatron-MoE-ModelZoo, Qwen3 best practice",
        model=_MODEL["qwen3-235b-a22b"],
        cluster_key="hgx-h100-ndr",
        mesh={"tp": 4, "pp": 8, "dp": 8, "ep": 8},
        global_batch_sequences=2048,
        seq_len=4096,
        recompute="none",
        dtype="bf16",
        metric="tokens_per_s_per_chip",
        measured=_MODEL_ZOO(
            2048 * 4096 / (29.0 * 256),
            "tokens/s",
            "| 235B | DeepEP | H100 | BF16 | 256 | 4096 | 4 | 1 | 8 | 8 | 4 | 1 | 4 | 8 | / | 1 | 2048 | 256 | | 29.0 "
            "| 167 |",
            f"[derived] 2,048 x 4,096 tokens in 29.0 s on 256 GPUs. Header: {_ZOO_HEADER}",
        ),
        note=f"TP 4, PP 8, VPP 4, EP 8, DP 8, MBS 1; no recomputation named. {_ZOO_NOTE}",
        micro_batch_sequences=1,
        interleave=4,
    ),
    TrainingRun(
        key="moe-zoo-h100-qwen3-235b-a22b-fsdp",
        source="Megatron-MoE-ModelZoo, Qwen3 best practice",
        model=_MODEL["qwen3-235b-a22b"],
        cluster_key="hgx-h100-ndr",
        mesh={"tp": 2, "fsdp": 128, "ep": 8},
        global_batch_sequences=2048,
        seq_len=4096,
        recompute="full",
        dtype="bf16",
        metric="tokens_per_s_per_chip",
        measured=_MODEL_ZOO(
            2048 * 4096 / (17.6 * 256),
            "tokens/s",
            "| 235B | DeepEP | H100 | BF16 | 256 | 4096 | 2 | 1 | 8 | 1 | 32 | 1 | 1 | 128 | On | 4 | 2048 | 4 | full "
            "| 17.6 | 276 |",
            f"[derived] 2,048 x 4,096 tokens in 17.6 s on 256 GPUs. Header: {_ZOO_HEADER}",
        ),
        note=f"Megatron-FSDP over 128 data-parallel ranks, TP 2, EP 8 (EDP 32), MBS 4, full recomputation. {_ZOO_NOTE}",
        micro_batch_sequences=4,
    ),
    TrainingRun(
        key="mbridge2509-h100-deepseek-v3",
        source="Megatron-Bridge, 25.09 performance summary",
        model=_MODEL["deepseek-v3"],
        cluster_key="hgx-h100-ndr",
        mesh={"tp": 2, "pp": 8, "dp": 64, "ep": 64},
        global_batch_sequences=8192,
        seq_len=4096,
        recompute="up-projections",
        dtype="fp8",
        metric="tokens_per_s_per_chip",
        measured=_MBRIDGE_ARCHIVE(
            1297.0,
            "tokens/s",
            _DEEPSEEK_H100_ROW,
            "Tokens / sec / GPU outside the parentheses; the 25.09 table prints no precision: its footnote's "
            "'For H100 system, 128x128 for weights and 1x128 for activations' is FP8's quantization granularity.",
        ),
        note="DGX-H100 (network not stated: modelled as hgx-h100-ndr); FSDP 0, TP 2, PP 8, CP 1, VP 4, EP 64, GA 128; "
        "dp = 1024 / (2 x 8) = 64 [derived]. 'In token-dropless MoE training benchmarks, we force-balance the token "
        "distribution among experts.' The table states no recomputation. The multi-token-prediction module is not "
        "counted (fewer FLOPs, so the bound stays a bound). The benchmark's configuration overlaps the expert "
        f"all-to-alls with another micro-batch's compute and recomputes the MLA up-projections and the dense MLPs "
        f"(recorded as 'up-projections', which recomputes the norms as well and not the three dense MLPs): {_CONFIGS}.",
        micro_batch_sequences=1,
        interleave=4,
        ep_overlap=True,
    ),
    TrainingRun(
        key="deepseek-v3-2048-h800",
        source="DeepSeek-V3, DeepSeek-AI 2024",
        model=_MODEL["deepseek-v3"],
        cluster_key="hgx-h800-ndr",
        mesh={"pp": 16, "dp": 128, "ep": 64},
        global_batch_sequences=15360,
        seq_len=4096,
        recompute="up-projections",
        dtype="fp8",
        metric="tokens_per_s_per_chip",
        measured=_DEEPSEEK_V3(
            1e12 / (_H800_GPU_HOURS_PER_TRILLION * 3600),
            "tokens/s",
            "training DeepSeek-V3 on each trillion tokens requires only 180K H800 GPU hours, i.e., 3.7 days on our "
            "cluster with 2048 H800 GPUs",
            "[derived] 1e12 tokens over 180,000 GPU-hours: 1,543 tokens/s per GPU, averaged over the pre-training "
            "(its batch grows from 3,072 sequences to 15,360 over the first 469B tokens).",
        ),
        note="Sec. 3.1: 'trained on a cluster equipped with 2048 NVIDIA H800 GPUs'; Sec. 3.2: '16-way Pipeline "
        "Parallelism (PP), 64-way Expert Parallelism (EP) spanning 8 nodes, and ZeRO-1 Data Parallelism (DP)', "
        "'without using costly Tensor Parallelism (TP)', DualPipe; Sec. 3.3: FP8 GEMMs; Sec. 4.2: 'maximum sequence "
        "length to 4K', batch 15,360 after the first 469B tokens. Sec. 3.2.3 recomputes 'all RMSNorm operations and "
        "MLA up-projections' (recompute 'up-projections'). Its dispatch moves FP8 activations ('we quantize the "
        "activation before MoE up-projections into FP8 and then apply dispatch components', Sec. 3.3.3), where "
        "the step moves bf16: DualPipe hides the all-to-alls either way. It caches activations in FP8, which the "
        "memory model leaves out (the step does not fit 80 GB without full recomputation); its time does not "
        "depend on it.",
        schedule="dualpipe",
    ),
)
"""Mixture-of-experts training runs with their stated configuration."""
