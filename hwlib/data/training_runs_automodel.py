"""Training runs from NVIDIA NeMo AutoModel's performance summary: PyTorch FSDP2 with TransformerEngine kernels and
DeepEP or HybridEP all-to-alls, on DGX-H100 in BF16. A second software stack beside Megatron-Core's, so a
leave-one-source-out fit holds the MoE terms against runs they were not fitted to. Chapter :ref:`ch-forecast`.
"""

from __future__ import annotations

from hwlib.data.records import TrainingRun, cite
from hwlib.data.training_rows import MODEL_BY_KEY as _MODEL

_SUMMARY = (
    "NVIDIA-NeMo/Automodel, docs/performance-summary.md, 'Pre-Training Performance', 'System: DGX-H100, Precision: "
    "BF16'; https://docs.nvidia.com/nemo/automodel/performance/performance-summary.md"
)
_CONFIGS = {
    "deepseek-v3": "examples/benchmark/configs/deepseek_v3_te_deepep.yaml at commit 89e3a9fd: 'pp_schedule: "
    "interleaved1f1b', 'pp_microbatch_size: 1', 'activation_checkpointing: true', 'fake_balanced_gate: true'",
    "qwen3-30b-a3b": "examples/benchmark/configs/qwen3_moe_30b_te_deepep.yaml at commit 89e3a9fd: 'pp_size: 1', "
    "'ep_size: 8', 'activation_checkpointing: true', 'fake_balanced_gate: true'",
    "llama-3-70b": "examples/llm_benchmark/llama3_3/custom_llama3_1_70b_pretrain_benchmark_8nodes.yaml at commit "
    "2013a4dd: 'cp_size: 2', 'activation_checkpointing: True', 'seq_len: 8192'",
}
# (model key, commit that printed the row, the row as printed: Model | #GPUs | GBS | MBS | LBS | GA | Seq Length | TP |
# PP | CP | EP | VP | FSDP | Kernel Optimizations | Time per Global Step (s) | Model TFLOPs/sec/GPU | Tokens/sec/GPU)
_ROWS = (
    (
        "deepseek-v3",
        "89e3a9fd",
        "| DeepSeek V3 671B | 1024 | 8192 | 1 | 8 | 4 | 4096 | 1 | 4 | 1 | 64 | 8 | 256 | TE + DeepEP | 37.87 | 216 "
        "| 865 |",
    ),
    (
        "deepseek-v3",
        "89e3a9fd",
        "| DeepSeek V3 671B | 256 | 512 | 1 | 8 | 1 | 4096 | 1 | 4 | 1 | 64 | 8 | 64 | TE + DeepEP | 8.18 | 250 "
        "| 1,002 |",
    ),
    (
        "qwen3-30b-a3b",
        "8d9bfb90",
        "| Qwen3 MoE 30B | 8 | 512 | 4 | 4 | 16 | 4096 | 1 | 1 | 1 | 8 | - | 8 | TE + DeepEP | 21.773 | 277 | 12,040 |",
    ),
    (
        "llama-3-70b",
        "2013a4dd",
        "| Llama3 70B | 64 | 128 | 1 | 1 | 4 | 8192 | 1 | 1 | 2 | - | - | 32 | TE + fsdp2_prefetch | 18.90 | 389 "
        "| 866.77 |",
    ),
)


def _run(model_key: str, commit: str, row: str) -> TrainingRun:
    cells = [cell.strip() for cell in row.strip("| ").split("|")]
    _, gpus, gbs, mbs, _lbs, _ga, seq, tp, pp, cp, ep, vp, fsdp, kernels, step_s, _, tokens = cells
    gpus, gbs, mbs, seq, tp, pp, cp, fsdp = (int(cell) for cell in (gpus, gbs, mbs, seq, tp, pp, cp, fsdp))
    mesh = {"tp": tp, "pp": pp, "cp": cp, "fsdp": fsdp, **({"ep": int(ep)} if ep != "-" else {})}
    source = cite(f"{_SUMMARY} (row added at commit {commit})", "2026-12-06")
    return TrainingRun(
        key=f"automodel-h100-{model_key}-{gpus}",
        source="NeMo AutoModel, performance summary",
        model=_MODEL[model_key],
        cluster_key="hgx-h100-ndr",
        mesh=mesh,
        global_batch_sequences=gbs,
        seq_len=seq,
        recompute="full",
        dtype="bf16",
        metric="tokens_per_s_per_chip",
        measured=source(
            float(tokens.replace(",", "")),
            "tokens/s",
            row,
            f"Tokens/sec/GPU; {gbs} x {seq} tokens in {step_s} s on {gpus} GPUs.",
        ),
        note=f"DGX-H100 (network not stated: modelled as hgx-h100-ndr); BF16; {kernels}; FSDP2 over {fsdp} GPUs "
        f"(ZeRO-3); full activation checkpointing; routing force-balanced where MoE ('Fake balanced gate is enabled "
        f"to simulate ideal expert routing'); no gradient clipping. Configuration: {_CONFIGS[model_key]}.",
        micro_batch_sequences=mbs,
        interleave=int(vp) if pp > 1 else None,
        schedule="interleaved-1f1b" if pp > 1 else None,
    )


RUNS: tuple[TrainingRun, ...] = tuple(_run(*row) for row in _ROWS)
"""NeMo AutoModel's pre-training rows on DGX-H100 that hwlib's catalogue can express (Kimi K2 and GPT-OSS are not
in it)."""
