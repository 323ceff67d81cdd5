"""Published model shapes that their papers give (the models publish no config.json): GPT-3 175B, PaLM 540B and
LLaMA 65B.

Explained in the chapters :ref:`ch-counting` and :ref:`ch-serving` (PaLM 540B's decode on 64 TPU v4 chips).
"""

from __future__ import annotations

from hwlib.data.records import ModelShape, cite

PAPER_SHAPES: tuple[ModelShape, ...] = (
    ModelShape(
        key="gpt-3-175b",
        name="GPT-3 175B",
        n_layers=96,
        d_model=12288,
        n_heads=96,
        n_kv_heads=96,
        head_dim=128,
        d_ff=4 * 12288,
        mlp="gelu",
        vocab=50257,
        tied_embeddings=True,
        linear_bias=True,
        norm="layernorm",
        learned_positions=2048,
        n_params=cite(
            "Brown et al., 'Language Models are Few-Shot Learners', NeurIPS 2020, arXiv:2005.14165, Table 2.1"
        )(
            175e9,
            "parameters",
            "GPT-3 175B ... 175.0B",
            "The paper's rounded count; Table 2.1 gives n_layers 96, d_model 12288, "
            "n_heads 96, d_head 128 and a 2048-token context.",
        ),
        source="Brown et al. 2020, arXiv:2005.14165, Table 2.1 and Sec. 2.1 (GPT-2's architecture and its "
        "50257-token vocabulary)",
        note="Dense attention throughout (the paper alternates dense and locally banded sparse attention, "
        "which changes the FLOPs, not the parameters). Table 2.1 itself was not among the stored copies; "
        "d_head = 12288 / 96.",
    ),
    ModelShape(
        key="palm-540b",
        name="PaLM 540B",
        n_layers=118,
        d_model=18432,
        n_heads=48,
        n_kv_heads=1,
        head_dim=256,
        d_ff=4 * 18432,
        mlp="gated",
        vocab=256000,
        tied_embeddings=True,
        norm="rmsnorm",
        norms_per_layer=1,
        parallel_block=True,
        n_params=cite(
            "Chowdhery et al., 'PaLM: Scaling Language Modeling with Pathways', arXiv:2204.02311, Table 1 "
            "(read in a stored extraction of https://ar5iv.labs.arxiv.org/html/2204.02311)"
        )(
            540.35e9,
            "parameters",
            "PaLM 540B | 118 | 48 | 18432 | 540.35",
            "Layers, heads, d_model and the count in billions. The table's caption: 'The feed-forward size dff is "
            "always 4 x dmodel and attention head size is always 256' (a third-party transcription; Google's "
            "google-research/scaling_transformer_inference_efficiency/checkpoint.py, commit 8d8a4f1b, has "
            "'qkv=256' and 'ff=4 * 18432').",
        ),
        source="Chowdhery et al. 2022, arXiv:2204.02311, Sec. 2 ('Model Architecture'); Google's "
        "google-research/scaling_transformer_inference_efficiency/checkpoint.py (commit 8d8a4f1b)",
        note="Multi-query attention ('key and value are projected to [1,h]'), SwiGLU ('three matrix multiplications "
        "in the MLP'), parallel attention and MLP layers (one layer norm feeds both), shared input-output "
        "embeddings, no biases ('No biases were used in any of the dense kernels or layer norms', so each norm has "
        "one weight vector, counted as an RMSNorm's). The vocabulary is '256k tokens'; Google's code "
        "has 256128, which changes the count by 2.4 million. 48 heads of 256 make a query width of 12288, not "
        "d_model; Pope et al. padded them to 64 for inference on 64 TPU v4 chips.",
    ),
    ModelShape(
        key="llama-65b",
        name="LLaMA 65B",
        n_layers=80,
        d_model=8192,
        n_heads=64,
        n_kv_heads=64,
        head_dim=128,
        d_ff=22016,
        mlp="gated",
        vocab=32000,
        norm="rmsnorm",
        n_params=cite(
            "Touvron et al., 'LLaMA: Open and Efficient Foundation Language Models', arXiv:2302.13971, Table 2",
            read_on="2026-12-06",
        )(
            65.2e9,
            "parameters",
            "65.2B | 8192 | 64 | 80",
            "Parameters, dimension, heads and layers; the shape counts 65.29 billion.",
        ),
        source="Touvron et al. 2023, arXiv:2302.13971, Table 2 and Sec. 2.2 (pre-normalization with RMSNorm, "
        "SwiGLU 'with a dimension of 2/3 4d', rotary embeddings); facebookresearch/llama, llama/model.py "
        "(FeedForward: 'hidden_dim = int(2 * hidden_dim / 3)', rounded up to multiple_of=256: 22016) and its "
        "32,000-token SentencePiece vocabulary",
        read_on="2026-12-06",
        note="Multi-head attention of 64 heads of 128, untied input and output embeddings. The base of QLoRA's "
        "Guanaco 65B (Dettmers et al. 2023, arXiv:2305.14314).",
    ),
)
"""The shapes read from papers, each with the paper's own count."""
