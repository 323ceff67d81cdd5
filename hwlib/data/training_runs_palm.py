"""PaLM 540B's training run on 6,144 TPU v4 chips in two pods joined by the data-centre network (Chowdhery et al.
2022, arXiv:2204.02311, Sec. 4 and 4.1): a Multislice run, priced on ``tpu-v4-multislice``. Chapter
:ref:`ch-sharding`.
"""

from __future__ import annotations

from hwlib.data.records import TrainingRun, cite
from hwlib.data.training_rows import MODEL_BY_KEY as _MODEL

_PALM = cite(
    "Chowdhery et al., 'PaLM: Scaling Language Modeling with Pathways', arXiv:2204.02311, Sec. 4.1 (read in a stored "
    "extraction of https://ar5iv.labs.arxiv.org/html/2204.02311)",
    "2026-12-06",
)

_CHIPS = 6144

RUNS: tuple[TrainingRun, ...] = (
    TrainingRun(
        key="palm-540b-6144-v4",
        source="PaLM, Chowdhery et al. 2022, Sec. 4",
        model=_MODEL["palm-540b"],
        cluster_key="tpu-v4-multislice",
        mesh={"tp": 12, "fsdp": 256, "dp": 2},
        global_batch_sequences=2048,
        seq_len=2048,
        recompute="full",
        dtype="bf16",
        metric="tokens_per_s_per_chip",
        causal=False,
        measured=_PALM(
            238.3e3 / _CHIPS,
            "tokens/s",
            "PaLM 540B achieves an average training throughput of 238.3K tokens/sec at the batch size of 2048.",
            "[derived] 238.3K tokens/s over 6,144 chips: 38.8 tokens/s per chip. The paper: 'The MFU of PaLM 540B is "
            "45.7% without self-attention or 46.2% with it. Our analytically computed hardware FLOPs utilization, "
            "which includes rematerialization FLOPs, is 57.8%' (Table 3: 'PaLM | 540B | 6144 TPU v4 | 46.2%').",
        ),
        note="Sec. 4: 'PaLM 540B is trained over two TPU v4 Pods connected over data center network (DCN) ... We use "
        "3072 TPU v4 chips in each Pod attached to 768 hosts'; 'each weight tensor partitioned over 3072 chips using "
        "12-way model parallelism and 256-way fully sharded data parallelism'; 'two-way data parallelism at the pod "
        "level'; 'one fully sharded activation tensor is saved from each layer. During the backward pass, the rest of "
        "the activations are rematerialized' (full recomputation); Sec. 5: 'A sequence length of 2048', batch 2048 "
        "sequences at the end. causal=False: the paper's MFU counts the whole score matrix, and so counted the step's "
        "FLOPs give its 46.2% from the 238.3K tokens/s [derived, 46.23%]. The mesh lays tp, fsdp and dp out in that "
        "order: tp and fsdp fill each 3072-chip slice (12x16x16), dp crosses the DCN.",
        outside_model="How much of its 12-way model-parallel all-reduces its software hid is not published: hiding "
        "them all, as XLA's collective matmuls do in MaxText's runs, the forecast is faster than the run, and hiding "
        "none, slower. Its cross-pod gradient transfer did not overlap the backward pass ('a lack of overlap between "
        "the backward pass and the cross-pod gradient reduction', Sec. 4), where the step hides it",
    ),
)
"""PaLM 540B on two 3,072-chip TPU v4 pods."""
