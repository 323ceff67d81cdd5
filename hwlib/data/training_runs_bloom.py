"""Training runs of BigScience's BLOOM 176B (tr11), with its shape (``BLOOM_176B``). Chapter :ref:`ch-sharding`."""

from __future__ import annotations

from hwlib.data.records import TrainingRun, cite
from hwlib.data.training_rows import gpt_style as _gpt_style

# --- BigScience BLOOM 176B (tr11) ----------------------------------------------------------------------------------

_BLOOM = cite(
    "bigscience-workshop/bigscience, train/tr11-176B-ml/README.md (commit e726b159), "
    "https://github.com/bigscience-workshop/bigscience/tree/master/train/tr11-176B-ml"
)
BLOOM_176B = _gpt_style(
    key="bloom-176b",
    name="BLOOM 176B",
    layers=70,
    d=14336,
    heads=112,
    vocab=250880,
    positions=0,
    n_params=_BLOOM(176e9, "parameters", "Model size: 176B"),
    source="bigscience-workshop/bigscience, train/tr11-176B-ml/README.md: 'NHIDDEN=14336 NLAYERS=70 NHEADS=112', "
    "'embedding size: `v*h`: `250880*14336`', '--position-embedding-type alibi', 'torch.nn.functional.gelu', "
    "the 'tied embedding layers'",
    note="ALiBi (no learned positions); the embedding LayerNorm ('--embed-layernorm', 2 x 14336 weights) is not "
    "counted. The tokenizer has '250,680 tokens'; the embedding is padded to 250,880. params() is 176.25 B, within "
    "0.2% of '176B'.",
)
RUNS: tuple[TrainingRun, ...] = (
    TrainingRun(
        key="bloom-176b-384",
        source="BigScience, BLOOM 176B",
        model=BLOOM_176B,
        cluster_key="hgx-a100-hdr",
        mesh={"tp": 4, "pp": 12, "dp": 8},
        global_batch_sequences=2048,
        seq_len=2048,
        recompute="full",
        dtype="bf16",
        metric="tokens_per_s_per_chip",
        measured=_BLOOM(
            2048 * 2048 / 104.70 / 384,
            "tokens/s",
            "iteration   85376/ 115311 | consumed samples:   158692272 | consumed tokens: 325001773056 | elapsed "
            "time per iteration (s): 104.70 | learning rate: 1.150E-05 | global batch size: 2048 | ... | samples per "
            "second: 19.561 | TFLOPs: 149.77",
            "[derived] 2048 sequences x 2048 tokens / 104.70 s / 384 GPUs = 104.3 tokens/s per GPU (the end of "
            "epoch one).",
        ),
        note="'using 384 gpus (48 nodes)' of 'A100 80GB', 8 per node on NVLink, 'Inter-node connect: Omni-Path "
        "Architecture (OPA)' with '4 OmniPath links' per node (modelled as the HDR cluster, more network than "
        "that); 'TP=4 PP=12 DP=8 MBS=2'; 'GLOBAL_BATCH_SIZE=2048', 'SEQ_LEN=2048'; '--bf16'; "
        "'--deepspeed-activation-checkpointing' (full recomputation); the BF16_Optimizer's own ZeRO stage 1. The "
        "schedule is not printed: Megatron-DeepSpeed runs DeepSpeed's pipeline engine, whose 1F1B schedule has no "
        "interleaving, so one chunk per stage.",
        micro_batch_sequences=2,
        interleave=1,
    ),
)
