"""Training runs of Megatron-LM: its weak-scaling Table 1 on A100s (Narayanan et al. 2021), with the GPT shapes
the table states, and MegaScale's Table 2 (Jiang et al. 2024), its Megatron-LM baseline on up to 12,288
GPUs. Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

from hwlib.data.records import ModelShape, TrainingRun, cite
from hwlib.data.training_rows import gpt_style as _gpt_style

_MEGATRON = cite(
    "Narayanan et al., 'Efficient Large-Scale Language Model Training on GPU Clusters Using "
    "Megatron-LM', SC 2021, arXiv:2104.04473, Table 1 (read in a markdown copy of the paper's text)"
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


TABLE1_RUNS: tuple[TrainingRun, ...] = tuple(
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


# --- MegaScale (Jiang et al., NSDI 2024), Table 2: the Megatron-LM baseline --------------------------------------

_MEGASCALE = cite(
    "Jiang et al., 'MegaScale: Scaling Large Language Model Training to More Than 10,000 GPUs', NSDI 2024, "
    "arXiv:2402.15627, Tables 1 and 2 (read in a text copy of the paper whose table rows the conversion split)"
)
MEGASCALE_175B = _gpt_style(
    key="megascale-175b",
    name="MegaScale 175B",
    layers=96,
    d=12288,
    heads=128,
    vocab=64000,
    positions=2048,
    n_params=_MEGASCALE(175e9, "parameters", "|175B 530B|128 160|12288 20480|96 105|8 8|8 35|"),
    source="Jiang et al. 2024, arXiv:2402.15627, Table 1 (heads 128, hidden 12288, layers 96) and Sec. 6 ('Sequence "
    "length is 2,048 and vocabulary size is 64,000 for all the cases')",
    note="GPT-style layers as Megatron-LM builds them (biases, LayerNorm, learned positions, tied embeddings: not "
    "restated in the paper). params() is 174.8 B, within 0.2% of '175B'.",
)
# (batch, GPUs, iteration time in s, throughput in tokens/s as printed, MFU as printed)
_MEGASCALE_ROWS = (
    (768, 256, "40.0", "39.3k", "53.0%"),
    (768, 512, "21.2", "74.1k", "49.9%"),
    (768, 768, "15.2", "103.8k", "46.7%"),
    (768, 1024, "11.9", "132.7k", "44.7%"),
    (6144, 3072, "29.02", "433.6k", "48.7%"),
    (6144, 6144, "14.78", "851.6k", "47.8%"),
    (6144, 8192, "12.24", "1027.9k", "43.3%"),
    (6144, 12288, "8.57", "1466.8k", "41.2%"),
)
MEGASCALE_RUNS: tuple[TrainingRun, ...] = tuple(
    TrainingRun(
        key=f"megascale-t2-mlm-{batch}-{gpus}",
        source="MegaScale, Table 2",
        model=MEGASCALE_175B,
        cluster_key="hgx-a100-hdr",
        mesh={"tp": 8, "pp": 8, "dp": gpus // 64},
        global_batch_sequences=batch,
        seq_len=2048,
        recompute="none",
        dtype="bf16",
        metric="tokens_per_s_per_chip",
        measured=_MEGASCALE(
            float(throughput.rstrip("k")) * 1e3 / gpus,
            "tokens/s",
            f"Batch {batch} | Megatron-LM | GPUs {gpus} | Iteration Time (s) {seconds} | Throughput (tokens/s) "
            f"{throughput} | MFU {mfu}",
            f"[derived] {throughput} tokens/s / {gpus:,} GPUs. Iteration time x throughput = {batch} x 2048 "
            f"[derived, to 0.2%].",
        ),
        note="'more than 10,000 NVIDIA Ampere GPUs' (the SKU is not stated: A100 80 GB is the reading), 'eight 200G "
        "NICs' per server; 'Megatron-LM (commit hash: 285068c8)'; TP 8 PP 8 (Table 1), dp = GPUs / 64 [derived]; "
        "'interleaved pipeline-parallel schedule ... with six ... interleaving stages for the 175B'; 'Sequence "
        "length is 2,048'. Precision not stated (bf16 is the reading); micro-batch and recomputation not stated "
        "(one-sequence micro-batches and no recomputation, the least). The caption: batch 6144 from 3072 GPUs, "
        "768 below 'due to GPU memory limit'.",
        interleave=6,
    )
    for batch, gpus, seconds, throughput, mfu in _MEGASCALE_ROWS
)
