"""Gemma 1 (Gemma 2B and 7B) in the model catalogue: the config.json fields and the paper's Table 2 counts.

Config values: NVIDIA-NeMo/Megatron-Bridge@588d3bb, tests/unit_tests/models/gemma/test_gemma_bridge.py
(gemma_2b_config_dict, gemma_7b_config_dict). Counts: Gemma Team, "Gemma: Open Models Based on Gemini Research
and Technology", arXiv:2403.08295, Table 1 (vocab size 256128) and Table 2 (embedding and non-embedding parameters).
"""

import pytest

import hwlib as hw

# Table 2 of arXiv:2403.08295: (embedding, non-embedding) parameters.
TABLE_2 = {"gemma-2b": (524_550_144, 1_981_884_416), "gemma-7b": (786_825_216, 7_751_248_896)}
PAPER_VOCAB = 256_128  # Table 1 "Vocab size"; config.json's vocab_size is 256000


def gemma1_params(vocab, d_model, n_layers, n_heads, n_kv_heads, head_dim, d_ff):
    """Gemma 1 by hand: tied embeddings, Q/K/V/O without biases, a GeGLU MLP of three matrices, two RMSNorm weight
    vectors per layer and a final one."""
    attention = 2 * d_model * n_heads * head_dim + 2 * d_model * n_kv_heads * head_dim  # Q and O, K and V
    layer = attention + 3 * d_model * d_ff + 2 * d_model
    return vocab * d_model + n_layers * layer + d_model


@pytest.mark.parametrize(
    ("key", "fields"),
    [
        ("gemma-2b", dict(n_layers=18, d_model=2048, n_heads=8, n_kv_heads=1, head_dim=256, d_ff=16384)),
        ("gemma-7b", dict(n_layers=28, d_model=3072, n_heads=16, n_kv_heads=16, head_dim=256, d_ff=24576)),
    ],
)
def test_gemma1_shapes_hold_their_config_values(key, fields):
    model = hw.model(key)
    assert {name: getattr(model, name) for name in fields} == fields
    assert (model.vocab, model.mlp, model.norm, model.norms_per_layer) == (256000, "gated", "rmsnorm", 2)
    assert model.tied_embeddings and model.windows == () and model.n_experts == 0
    assert not (model.qkv_bias or model.linear_bias or model.mlp_bias) and model.qk_norm == "none"
    assert model.source == f"https://huggingface.co/google/{key}/blob/main/config.json"
    assert "arXiv:2403.08295" in model.n_params.source and "non-embedding" in model.n_params.quoted
    assert model.read_on == model.n_params.read_on == "2026-12-06"
    assert model.params() == gemma1_params(256000, **fields)


def test_gemma1_names_and_attention_kinds():
    two, seven = hw.model("Gemma 2B"), hw.model("Gemma 7B")
    assert (two.key, seven.key) == ("gemma-2b", "gemma-7b")
    assert two.attention == "MQA" and seven.attention == "MHA"
    assert seven.n_heads * seven.head_dim == 4096 != seven.d_model  # head_dim 256 is set apart from d_model
    # KV cache per token in bf16: 2 (K, V) x layers x KV heads x 256 x 2 bytes
    assert two.kv_bytes_per_token("bf16") == 2 * 18 * 1 * 256 * 2 == 18_432
    assert seven.kv_bytes_per_token("bf16") == 2 * 28 * 16 * 256 * 2 == 458_752
    assert two.kv_bytes(100_000) == 100_000 * two.kv_bytes_per_token("bf16")  # no window caps a layer


@pytest.mark.parametrize("key", sorted(TABLE_2))
def test_gemma1_counts_reproduce_table_2(key):
    model = hw.model(key)
    embedding, non_embedding = TABLE_2[key]
    parts = model.param_breakdown()
    assert parts["lm_head"] == 0.0 and parts["embedding"] == 256000 * model.d_model
    assert model.params() - parts["embedding"] == non_embedding == model.published_params  # exactly
    # The paper's embedding row counts Table 1's 256,128-token vocabulary, 128 rows more than config.json's.
    assert embedding == PAPER_VOCAB * model.d_model
    assert embedding - parts["embedding"] == 128 * model.d_model
    assert model.params() == pytest.approx(embedding + non_embedding, rel=1.1e-4)  # the paper's total, to 0.01 %


def test_gemma_2b_total_matches_the_hugging_face_checkpoint():
    """The google/gemma-2b checkpoint's tensors sum to 3,030,460,416 with the tied head counted twice
    (huggingface.co/google/gemma-2b/discussions/36): 2,506,172,416 once tied, the shape's count."""
    model = hw.model("gemma-2b")
    assert model.params() == 3_030_460_416 - 256000 * 2048 == 2_506_172_416
    assert round(hw.model("gemma-7b").params() / 1e9, 2) == 8.54


def test_gemma1_sits_before_gemma2_in_the_catalogue():
    keys = [model.key for model in hw.models("vendor")]
    assert keys.index("gemma-2b") < keys.index("gemma-7b") < keys.index("gemma-2-9b")
    assert len(set(keys)) == len(keys)
