"""The helpers that the training-run modules share: the models hwlib records, by key (``MODEL_BY_KEY``), and
``gpt_style``, which builds a GPT-style decoder's shape (NeMo's GPT-3, MPT, BLOOM, MegaScale's 175B).
Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

from hwlib.data.model_shapes import MODELS
from hwlib.data.records import ModelShape

MODEL_BY_KEY = {record.key: record for record in MODELS}
"""The models hwlib records (``data/model_shapes.py``), by key."""


def gpt_style(
    key: str,
    name: str,
    layers: int,
    d: int,
    heads: int,
    vocab: int,
    positions: int,
    n_params: object,
    source: str,
    note: str = "",
) -> ModelShape:
    """A GPT-style decoder (Megatron's and MPT's): a 4d GELU MLP, multi-head attention, biases on every linear
    layer, LayerNorm with a bias, a tied output head and ``positions`` learned positions (0 for ALiBi)."""
    return ModelShape(
        key=key,
        name=name,
        n_layers=layers,
        d_model=d,
        n_heads=heads,
        n_kv_heads=heads,
        head_dim=d // heads,
        d_ff=4 * d,
        mlp="gelu",
        vocab=vocab,
        tied_embeddings=True,
        linear_bias=True,
        norm="layernorm",
        learned_positions=positions,
        n_params=n_params,
        source=source,
        note=note,
    )
