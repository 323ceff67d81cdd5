"""Training runs of Llama 3 on H100s: Llama 3 405B's pre-training in Table 4 (Llama Team 2024) and torchtitan's
Llama 3.1 8B and 70B benchmarks (docs/performance.md). Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

from hwlib.data.records import TrainingRun, cite
from hwlib.data.training_rows import MODEL_BY_KEY as _MODEL

_LLAMA3 = cite(
    "Llama Team, 'The Llama 3 Herd of Models', arXiv:2407.21783 (2024), Table 4 (read in a text copy of the paper)"
)
_TORCHTITAN = cite(
    "pytorch/torchtitan, docs/performance.md (commit eaea6f6a), "
    "https://github.com/pytorch/torchtitan/blob/main/docs/performance.md"
)


_TORCHTITAN_GPU = (
    "H100s with 96 GB HBM2e at 2.4 TB/s and a 500 W limit, whose peak is 'between SXM and NVL' (torchtitan's "
    "words): hwlib has no record of this part, so the forecast prices the SXM's peak and 3.35 TB/s"
)


RUNS: tuple[TrainingRun, ...] = (
    (
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
        TrainingRun(
            key="llama3-405b-16k-gpus-131k",
            source="Llama 3 405B pre-training, Llama Team 2024, Table 4",
            model=_MODEL["llama-3.1-405b"],
            cluster_key="hgx-h100-ndr",
            mesh={"tp": 8, "cp": 16, "pp": 16, "fsdp": 8},
            global_batch_sequences=16 * 8,
            seq_len=131072,
            recompute="none",
            dtype="bf16",
            metric="mfu",
            measured=_LLAMA3(0.38, "1", "| 16,384 | 8 | 16 | 16 | 8 | 131,072 | 16 | 16M | 380 | 38% |"),
            note="The long-context stage of the 16,384-GPU run: context parallelism over 16 GPUs for sequences of "
            "131,072 tokens, 16M tokens per step as at 8K.",
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
            outside_model=_TORCHTITAN_GPU,
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
            "8192); torch.compile and Float8, so the bound uses the fp8 peak; 400 Gb/s RDMA per GPU; the GPUs of "
            "the 8B rows.",
            outside_model=_TORCHTITAN_GPU,
        ),
    )
)
