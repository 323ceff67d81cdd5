"""Published model shapes (hwlib.data.model_shapes; 0.1's hwlib.models) and the counts that come from them."""

import dataclasses

import pytest

import hwlib as hw


def llama_params(vocab, hidden, layers, ffn, kv_dim, tied=False, qkv_bias=False):
    """Parameters of a Llama-style decoder: gated MLP, RMSNorm, no biases (Qwen: QKV biases)."""
    attention = 2 * hidden * hidden + 2 * hidden * kv_dim + (hidden + 2 * kv_dim) * qkv_bias
    layer = attention + 3 * hidden * ffn + 2 * hidden
    return vocab * hidden * (1 if tied else 2) + layers * layer + hidden


def falcon_params(vocab, hidden, layers, head_dim):
    """Falcon-7B: fused QKV with one KV head, 4x GELU MLP, one LayerNorm per layer, tied embeddings."""
    layer = hidden * (hidden + 2 * head_dim) + hidden * hidden + 2 * hidden * 4 * hidden + 2 * hidden
    return vocab * hidden + layers * layer + 2 * hidden


def gpt2_params(vocab, context, hidden, layers):
    layer = (
        4 * hidden
        + (3 * hidden * hidden + 3 * hidden)
        + (hidden * hidden + hidden)
        + (4 * hidden * hidden + 4 * hidden)
        + (4 * hidden * hidden + hidden)
    )
    return vocab * hidden + context * hidden + layers * layer + 2 * hidden


def test_parameter_counts_follow_from_the_config_shapes():
    assert hw.model("llama-2-7b").params() == llama_params(32000, 4096, 32, 11008, 4096)
    assert hw.model("llama-3-8b").params() == llama_params(128256, 4096, 32, 14336, 1024)
    assert hw.model("mistral-7b").params() == llama_params(32000, 4096, 32, 14336, 1024)
    assert hw.model("llama-3-70b").params() == llama_params(128256, 8192, 80, 28672, 1024)
    assert hw.model("qwen2.5-1.5b").params() == llama_params(151936, 1536, 28, 8960, 256, tied=True, qkv_bias=True)
    assert hw.model("falcon-7b").params() == falcon_params(65024, 4544, 32, 64)
    assert hw.model("gpt2-xl").params() == gpt2_params(50257, 1024, 1600, 48)


def test_shapes_are_consistent():
    # 0.2: hw.MODELS is hw.models(); fields d_model, n_heads, n_layers, n_kv_heads (were hidden, heads, layers,
    # kv_heads); m.kv_bytes_per_token(dtype) is hw.kv_cache_bytes(1, m, dtype=dtype)
    for record in hw.models():
        sets_head_dim = ("gemma", "palm", "deepseek", "qwen3", "llama-4")  # head_dim given apart from d_model
        if record.d_model is not None and not record.key.startswith(sets_head_dim):
            assert record.n_heads * record.head_dim == record.d_model, record
        assert (
            record.n_params.unit == "parameters"
            and record.source
            and record.read_on in ("2026-11-30", "2026-12-02", "2026-12-06")
        )
        cached = 2 * record.n_kv_heads * record.head_dim if record.mla is None else record.mla.cache_width
        assert hw.kv_cache_bytes(1, record, dtype="bf16") == record.n_layers * cached * 2
        if record.d_model is not None:
            assert record.weight_bytes("bf16") == 2 * record.params()
        assert hw.model(record.key) is record and hw.model(record.name) is record
    from_papers = ("doc000", "doc002", "gpt-3", "palm", "llama-65b")
    published = [record for record in hw.models() if not record.key.startswith(from_papers)]
    assert all(record.source.startswith(("https://huggingface.co/", "config.json read from ")) for record in published)
    assert hw.model("gpt-3-175b").source.startswith("Brown et al. 2020")
    assert hw.model("palm-540b").source.startswith("Chowdhery et al. 2022")
    assert hw.model("llama-65b").source.startswith("Touvron et al. 2023")


def test_palm_540b_is_counted_as_its_paper_counts_it():
    """PaLM 540B: 118 layers, multi-query attention of 48 heads of 256, a SwiGLU MLP of 4 d_model, shared
    embeddings of a 256k vocabulary, no biases: 540.356 billion against the paper's 540.35."""
    palm = hw.model("palm-540b")
    assert palm.attention == "MQA" and palm.table().q_width == 12288 != palm.d_model
    assert abs(palm.params() / palm.published_params - 1) < 2e-5
    assert palm.kv_bytes_per_token("bf16") == 2 * 118 * 256 * 2


def test_attention_kinds_and_kv_bytes():
    kinds = {record.key: record.attention for record in hw.models()}
    assert kinds["llama-2-7b"] == "MHA" and kinds["gpt2-xl"] == "MHA"
    assert kinds["llama-3-8b"] == "GQA" and kinds["falcon-7b"] == "MQA"
    assert kinds["doc000-7b"] == "not stated"
    assert hw.kv_cache_bytes(1, hw.model("Llama 2 7B")) == 524288
    assert hw.kv_cache_bytes(1, hw.model("llama-3-8b")) == 131072
    assert hw.kv_cache_bytes(1, hw.model("falcon-7b")) == 8192
    assert hw.kv_cache_bytes(8192, hw.model("doc000-7b"), dtype="fp32") == 2 * 2**30
    assert hw.kv_cache_bytes(100, hw.model("llama-3-8b"), dtype="bf16", batch=3) == 3 * 100 * 131072
    assert hw.model("llama-3-8b").weight_bytes("int8") == 8_030_261_248
    assert "GQA" in str(hw.model("llama-3-8b")) and "8.03B params" in str(hw.model("llama-3-8b"))


def test_models_are_immutable_and_validated():
    with pytest.raises(dataclasses.FrozenInstanceError):
        hw.model("llama-3-8b").n_layers = 1
    with pytest.raises(ValueError, match="n_layers must be a whole number"):
        dataclasses.replace(hw.model("llama-3-8b"), n_layers=0)
    with pytest.raises(ValueError, match="must be a multiple of n_kv_heads"):
        dataclasses.replace(hw.model("llama-3-8b"), n_kv_heads=5)


def test_lookup_errors():
    with pytest.raises(KeyError, match="did you mean"):
        hw.model("llama-3-7b")
    with pytest.raises(TypeError, match="name must be a model name string"):
        hw.model(7)
    with pytest.raises(TypeError, match="unless n_layers is a ModelShape"):
        hw.kv_cache_bytes(1, "llama-3-8b")
    with pytest.raises(ValueError, match="gives no d_model"):
        hw.model("doc000-7b").params()
    assert hw.model("doc000-7b").weight_bytes("bf16") == 2 * hw.doc000.PARAMS_7B  # its published count
    with pytest.raises(ValueError, match="dtype must be one of"):
        hw.model("llama-3-8b").weight_bytes("fp64")


def test_models_by_source():
    """hw.models(source) splits the catalogue as hw.chips(source) does: published shapes, then each document's."""
    parts = [hw.models(source) for source in ("vendor", "doc000", "doc002")]
    assert sum(parts, ()) == hw.models()
    assert all(not m.key.startswith("doc") for m in parts[0])
    assert [m.key for m in parts[1] + parts[2]] == ["doc000-7b", "doc000-1.5b", "doc002-7b"]
    with pytest.raises(ValueError, match="source"):
        hw.models("published")
