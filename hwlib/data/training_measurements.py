"""Published, measured training runs that state their model, chips, parallelism, batch and sequence length.

Megatron-LM's weak-scaling Table 1 (Narayanan et al. 2021), Llama 3 405B's Table 4 (Llama Team
2024) and torchtitan's H100 benchmarks. Each is compared with ``hw.train_step`` for its own mesh in
:ref:`ch-sharding`. The hunt behind them, with every quote, is in research/training_runs.md.
"""

from __future__ import annotations

from hwlib.data.model_shapes import MODELS
from hwlib.data.records import ModelShape, TrainingRun, cite

_MEGATRON = cite(
    "Narayanan et al., 'Efficient Large-Scale Language Model Training on GPU Clusters Using "
    "Megatron-LM', SC 2021, arXiv:2104.04473, Table 1 (read in a markdown copy of the paper's text)"
)
_LLAMA3 = cite(
    "Llama Team, 'The Llama 3 Herd of Models', arXiv:2407.21783 (2024), Table 4 (read in a text copy of the paper)"
)
_TORCHTITAN = cite(
    "pytorch/torchtitan, docs/performance.md (commit eaea6f6a), "
    "https://github.com/pytorch/torchtitan/blob/main/docs/performance.md"
)

_SELENE = (
    "A100 80 GB, 8 per node on NVLink/NVSwitch, 'eight NVIDIA Mellanox 200Gbps HDR Infiniband HCAs' per "
    "node; mixed precision, activation recomputation, the interleaved schedule (chunks per stage and "
    "micro-batch not stated: the bound takes one-sequence micro-batches and as many chunks as the layers "
    "allow, the smallest bubble). Measured teraFLOP/s count Eq. (3), 96 B s l h^2 (1 + s/6h + V/16lh), whose s/6h "
    "term is the whole score matrix (its appendix counts 4 B s^2 h per layer forward): the bound computes it "
    "the same way (causal=False)."
)

# (billion parameters, heads, hidden, layers, tensor parallel, pipeline parallel, GPUs, batch, TFLOP/s per GPU)
_TABLE1 = (
    (1.7, 24, 2304, 24, 1, 1, 32, 512, 137),
    (3.6, 32, 3072, 30, 2, 1, 64, 512, 138),
    (7.5, 32, 4096, 36, 4, 1, 128, 512, 142),
    (18.4, 48, 6144, 40, 8, 1, 256, 1024, 135),
    (39.1, 64, 8192, 48, 8, 2, 512, 1536, 138),
    (76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140),
    (145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148),
    (310.1, 128, 16384, 96, 8, 16, 1920, 2160, 155),
    (529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163),
    (1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 163),
)
MEGATRON_SEQ_LEN = _MEGATRON(2048, "tokens", "a sequence length (s) of 2048")
MEGATRON_VOCAB = _MEGATRON(51200, "tokens", "All models use a vocabulary size (denoted by V) of 51,200")


def _gpt(billions: float, heads: int, hidden: int, layers: int) -> ModelShape:
    return ModelShape(
        key=f"megatron-gpt-{billions:g}b",
        name=f"Megatron GPT {billions:g}B",
        n_layers=layers,
        d_model=hidden,
        n_heads=heads,
        n_kv_heads=heads,
        head_dim=hidden // heads,
        d_ff=4 * hidden,
        mlp="gelu",
        vocab=int(MEGATRON_VOCAB.value),
        tied_embeddings=True,
        linear_bias=True,
        norm="layernorm",
        learned_positions=int(MEGATRON_SEQ_LEN.value),
        n_params=_MEGATRON(billions * 1e9, "parameters", f"{billions:g}"),
        source="Narayanan et al. 2021, arXiv:2104.04473, Table 1 (GPT: 4h MLP, multi-head attention)",
    )


_MODEL = {record.key: record for record in MODELS}

RUNS: tuple[TrainingRun, ...] = (
    tuple(
        TrainingRun(
            key=f"megatron-{billions:g}b",
            source="Megatron-LM, Narayanan et al. 2021, Table 1",
            model=_gpt(billions, heads, hidden, layers),
            cluster_key="hgx-a100-hdr",
            mesh={"tp": tp, "pp": pp, "dp": gpus // (tp * pp)},
            global_batch_sequences=batch,
            seq_len=int(MEGATRON_SEQ_LEN.value),
            recompute="full",
            dtype="bf16",
            metric="megatron_tflops",
            causal=False,
            measured=_MEGATRON(
                tflops * 1e12,
                "FLOP/s",
                f"| {billions:g} | {heads} | {hidden} | {layers} | {tp} | {pp} | {gpus} | {batch} | {tflops} |",
            ),
            note=_SELENE,
        )
        for billions, heads, hidden, layers, tp, pp, gpus, batch, tflops in _TABLE1
    )
    + (
        TrainingRun(
            key="llama3-405b-8k-gpus",
            source="Llama 3 405B pre-training, Llama Team 2024, Table 4",
            model=_MODEL["llama-3.1-405b"],
            cluster_key="hgx-h100-ndr",
            mesh={"tp": 8, "pp": 16, "fsdp": 64},
            global_batch_sequences=64 * 32,
            seq_len=8192,
            recompute="none",
            dtype="bf16",
            metric="mfu",
            measured=_LLAMA3(0.43, "1", "| 8,192 | 8 | 1 | 16 | 64 | 8,192 | 32 | 16M | 430 | 43% |"),
            note="H100 80 GB at 700 W, 8 per server on NVLink, RoCE at 400 Gb/s per GPU (modelled as the NDR node, "
            "the same 50 GB/s); 'DP stands for FSDP'; no activation checkpointing at 8K; an interleaved schedule "
            "(chunks not stated: the bound takes the most the layers allow).",
        ),
        TrainingRun(
            key="llama3-405b-16k-gpus",
            source="Llama 3 405B pre-training, Llama Team 2024, Table 4",
            model=_MODEL["llama-3.1-405b"],
            cluster_key="hgx-h100-ndr",
            mesh={"tp": 8, "pp": 16, "fsdp": 128},
            global_batch_sequences=128 * 16,
            seq_len=8192,
            recompute="none",
            dtype="bf16",
            metric="mfu",
            measured=_LLAMA3(0.41, "1", "| 16,384 | 8 | 1 | 16 | 128 | 8,192 | 16 | 16M | 400 | 41% |"),
            note="As the 8,192-GPU row, with twice the data-parallel ranks and half the batch per rank.",
        ),
    )
    + tuple(
        TrainingRun(
            key=f"torchtitan-8b-cp{cp}",
            source="torchtitan, Llama 3.1 8B on 8 H100s, Table 2",
            model=_MODEL["llama-3-8b"],
            cluster_key="hgx-h100-ndr",
            mesh={"fsdp": 8 // cp, "cp": cp},
            global_batch_sequences=8 // cp,
            seq_len=seq,
            recompute="full",
            dtype="fp8",
            metric="tokens_per_s_per_chip",
            measured=_TORCHTITAN(
                float(tps), "tokens/s", f"FSDP {8 // cp} CP {cp} | local 1 | full | seq {seq} | {tps:,}"
            ),
            note="H100 (96 GB HBM2e, 2.4 TB/s, 500 W) with torch.compile and Float8: the bound takes the H100 SXM's "
            "fp8 peak and bandwidth, more than these GPUs have.",
        )
        for cp, seq, tps in ((1, 32768, 3890), (2, 65536, 2540), (4, 131072, 1071), (8, 262144, 548))
    )
    + (
        TrainingRun(
            key="torchtitan-70b-256",
            source="torchtitan, Llama 3.1 70B on 256 H100s, Table 4",
            model=_MODEL["llama-3-70b"],
            cluster_key="hgx-h100-ndr",
            mesh={"fsdp": 32, "tp": 8},
            global_batch_sequences=512,
            seq_len=8192,
            recompute="full",
            dtype="fp8",
            metric="tokens_per_s_per_chip",
            measured=_TORCHTITAN(829.0, "tokens/s", "256 (FSDP 32, TP 8) | local 16, global 512 | full | 2D | 829"),
            note="Sequence length 8,192 assumed (the table does not print it; torchtitan's Llama 3 70B config uses "
            "8192); torch.compile and Float8, so the bound uses the fp8 peak; 400 Gb/s RDMA per GPU.",
        ),
    )
)
"""Measured training runs, compared with ``hw.train_step`` in :ref:`ch-sharding`."""
