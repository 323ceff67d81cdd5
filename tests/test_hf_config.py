"""ModelShape.from_hf_config and the counts of a shape, on config dicts written here (no download).

Each config holds the keys of the model's config.json on huggingface.co; the expected counts are
the exact sums of the tensor sizes those configs imply (the figures Hugging Face shows rounded:
Mixtral 8x7B "46.7B", Gemma 2 9B "9.24B", GPT-NeoX-20B "20.6B", Qwen2.5 7B "7.62B").
"""

import json
import warnings

import pytest

import hwlib as hw

MIXTRAL_8X7B = {
    "model_type": "mixtral",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 32000,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
    "tie_word_embeddings": False,
    "rms_norm_eps": 1e-5,
    "rope_theta": 1e6,
    "torch_dtype": "bfloat16",
    "architectures": ["MixtralForCausalLM"],
    "sliding_window": None,
}
GEMMA2_9B = {
    "model_type": "gemma2",
    "hidden_size": 3584,
    "num_hidden_layers": 42,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 256,
    "intermediate_size": 14336,
    "vocab_size": 256000,
    "query_pre_attn_scalar": 256,
    "final_logit_softcapping": 30.0,
    "attn_logit_softcapping": 50.0,
    "sliding_window": 4096,
    "hidden_activation": "gelu_pytorch_tanh",
}
NEOX_20B = {
    "model_type": "gpt_neox",
    "hidden_size": 6144,
    "num_hidden_layers": 44,
    "num_attention_heads": 64,
    "intermediate_size": 24576,
    "vocab_size": 50432,
    "tie_word_embeddings": False,
    "rotary_pct": 0.25,
    "use_parallel_residual": True,
    "hidden_act": "gelu_fast",
}
QWEN25_7B = {
    "model_type": "qwen2",
    "hidden_size": 3584,
    "num_hidden_layers": 28,
    "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "intermediate_size": 18944,
    "vocab_size": 152064,
    "tie_word_embeddings": False,
    "max_window_layers": 28,
    "use_sliding_window": False,
}
LLAMA3_8B = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "tie_word_embeddings": False,
    "attention_bias": False,
    "mlp_bias": False,
    "hidden_act": "silu",
    "max_position_embeddings": 8192,
}
GPT2_XL = {
    "model_type": "gpt2",
    "n_embd": 1600,
    "n_layer": 48,
    "n_head": 25,
    "vocab_size": 50257,
    "n_positions": 1024,
    "n_ctx": 1024,
    "activation_function": "gelu_new",
    "layer_norm_epsilon": 1e-5,
}


@pytest.mark.parametrize(
    ("config", "total", "active"),
    [
        (MIXTRAL_8X7B, 46_702_792_704, 12_879_925_248),
        (GEMMA2_9B, 9_241_705_984, 9_241_705_984),
        (NEOX_20B, 20_554_567_680, 20_554_567_680),
        (QWEN25_7B, 7_615_616_512, 7_615_616_512),
        (LLAMA3_8B, 8_030_261_248, 8_030_261_248),
        (GPT2_XL, 1_557_611_200, 1_557_611_200),
    ],
    ids=lambda v: v.get("model_type") if isinstance(v, dict) else None,
)
def test_counts_from_configs(config, total, active):
    shape = hw.ModelShape.from_hf_config(config)
    assert shape.params() == total
    assert shape.params(active=True) == active
    assert sum(shape.param_breakdown().values()) == total


def test_the_catalogue_agrees_with_its_configs():
    assert hw.ModelShape.from_hf_config(LLAMA3_8B).params() == hw.model("llama-3-8b").params()
    assert hw.ModelShape.from_hf_config(GPT2_XL).params() == hw.model("gpt2-xl").params()


def test_mixture_of_experts_counts_and_flops():
    shape = hw.ModelShape.from_hf_config(MIXTRAL_8X7B)
    assert shape.is_moe and shape.n_experts == 8 and shape.experts_per_token == 2
    parts = shape.param_breakdown(active=True)
    assert parts["experts"] == 32 * 2 * 3 * 4096 * 14336 and parts["router"] == 32 * 4096 * 8
    # a token's forward: 2 FLOPs per weight it uses (no embedding lookup), plus no attention at context 0
    assert shape.flops_per_token() == 2 * (shape.params(active=True) - parts["embedding"] - parts["norms"])


def test_attention_term_is_causal_by_default():
    shape = hw.model("llama-3-8b")
    per_token = 4 * 32 * 32 * 128  # 4 n_h d_h L per attended token
    base = shape.flops_per_token(0)
    assert shape.flops_per_token(8192) - base == pytest.approx(per_token * 8193 / 2)
    assert shape.flops_per_token(8192, causal=False) - base == pytest.approx(per_token * 8192)
    assert shape.flops_per_token(8192, training=True) == pytest.approx(3 * shape.flops_per_token(8192))


def test_document_002_model_is_the_gelu_4d_special_case():
    d, layers, vocab, s = hw.doc002.D_MODEL, hw.doc002.N_LAYERS, hw.doc002.VOCAB, hw.doc002.SEQ_LEN
    shape = hw.ModelShape(
        d_model=d,
        n_layers=layers,
        n_heads=32,
        n_kv_heads=32,
        head_dim=d // 32,
        d_ff=4 * d,
        mlp="gelu",
        vocab=vocab,
        norm="none",
        norms_per_layer=0,
    )
    assert shape.params() == hw.transformer_params(d, layers, vocab) == 12 * d**2 * layers + 2 * vocab * d
    head = 2 * vocab * d * 3
    assert shape.flops_per_token(s, training=True, causal=False) - head == pytest.approx(
        layers * hw.layer_flops(d, 1, seq_len=s)
    )


def test_a_config_file_on_disk(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**LLAMA3_8B, "_name_or_path": "meta-llama/Meta-Llama-3-8B"}))
    shape = hw.ModelShape.from_hf_config(str(path))
    assert shape.name == "Meta-Llama-3-8B" and shape.params() == 8_030_261_248


def test_unused_keys_are_named_never_dropped_silently():
    with pytest.warns(UserWarning, match=r"not used.*\['new_knob'\]"):
        hw.ModelShape.from_hf_config({**LLAMA3_8B, "new_knob": 3})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hw.ModelShape.from_hf_config(LLAMA3_8B)  # every key is used or known to change no count


@pytest.mark.parametrize(
    ("config", "error", "words"),
    [
        ({**LLAMA3_8B, "model_type": "mamba"}, ValueError, "model_type must be one of"),
        ({**LLAMA3_8B, "attention_bias": True}, ValueError, "attention_bias True is not modelled"),
        ({**LLAMA3_8B, "mlp_bias": True}, ValueError, "mlp_bias True is not modelled"),
        ({k: v for k, v in LLAMA3_8B.items() if k != "hidden_size"}, ValueError, "config has no 'hidden_size'"),
        ({**MIXTRAL_8X7B, "num_experts_per_tok": 9}, ValueError, "experts_per_token must be in 1..n_experts"),
        ({**LLAMA3_8B, "num_key_value_heads": 5}, ValueError, "must be a multiple of num_key_value_heads"),
        ([1, 2], TypeError, "config must be a config.json dict"),
    ],
)
def test_bad_configs_get_clear_errors(config, error, words):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error, match=words):
            hw.ModelShape.from_hf_config(config)


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        (dict(mlp="swiglu"), "ModelShape.mlp must be one of"),
        (dict(norm="batchnorm"), "ModelShape.norm must be one of"),
        (dict(n_experts=8, experts_per_token=0, d_ff_expert=100), "experts_per_token must be in 1..n_experts"),
        (dict(n_experts=8, experts_per_token=2), "d_ff_expert is needed"),
        (dict(experts_per_token=2), "need n_experts > 0"),
        (dict(head_dim=0), "head_dim must be a whole number >= 1"),
    ],
)
def test_shape_validation(changes, words):
    fields = dict(n_layers=2, d_model=64, n_heads=4, n_kv_heads=2, head_dim=16, d_ff=128, mlp="gated", vocab=100)
    with pytest.raises((ValueError, TypeError), match=words):
        hw.ModelShape(**{**fields, **changes})


def test_counts_need_the_structure():
    with pytest.raises(ValueError, match="gives no d_model, n_heads, mlp, vocab, d_ff"):
        hw.model("doc000-7b").flops_per_token()
    with pytest.raises(ValueError, match="context_len must be"):
        hw.model("llama-3-8b").flops_per_token(-1)
    with pytest.raises(TypeError, match="training must be True or False"):
        hw.model("llama-3-8b").flops_per_token(10, training="yes")


# The published count each catalogue model is checked against, what that count is, and how far hwlib's
# params() may be from it: exact where the source is an exact sum, the rounding of a size class otherwise.
PUBLISHED = {
    "llama-2-7b": ("total", 0.0),
    "llama-3-8b": ("total", 0.0),
    "mistral-7b": ("total", 0.0),
    "llama-3-70b": ("total", 0.0),
    "falcon-7b": ("total", 0.0),
    "qwen2.5-1.5b": ("total", 0.0),
    "gpt2-xl": ("total", 0.0),
    "llama-2-13b": ("total", 0.0013),  # "13B": 13.016 B
    "llama-2-70b": ("total", 0.015),  # "70B": 68.98 B, the size class of a 69 B model
    "llama-3.1-405b": ("total", 0.0022),  # "405B": 405.85 B
    "qwen2.5-7b": ("total", 0.0008),  # "7.61B": 7.6156 B
    "qwen2.5-72b": ("total", 0.0001),  # "72.7B": 72.706 B
    "mixtral-8x7b": ("total", 0.0001),  # "46.7 billion": 46.703 B
    "mixtral-8x22b": ("total", 0.0027),  # "141B": 140.63 B
    "gemma-2b": ("non-embedding", 0.0),  # 1,981,884,416 exactly
    "gemma-7b": ("non-embedding", 0.0),  # 7,751,248,896 exactly
    "gemma-2-9b": ("non-embedding", 0.0),  # 8,324,201,984 exactly
    "gemma-2-27b": ("non-embedding", 0.0),  # 26,047,480,320 exactly
    "gpt-3-175b": ("total", 0.0023),  # "175.0B": 174.60 B
}


@pytest.mark.parametrize("key", sorted(PUBLISHED))
def test_catalogue_counts_match_their_published_counts(key):
    model = hw.model(key)
    kind, deviation = PUBLISHED[key]
    counted = model.params() - (model.param_breakdown()["embedding"] if kind == "non-embedding" else 0.0)
    assert counted == pytest.approx(model.published_params, rel=deviation, abs=0.0)
    assert model.n_params.source and model.n_params.quoted


def test_mixture_of_experts_active_counts_match_their_announcements():
    assert hw.model("mixtral-8x7b").params(active=True) == pytest.approx(12.9e9, rel=0.002)  # "12.9 billion"
    assert hw.model("mixtral-8x22b").params(active=True) == pytest.approx(39e9, rel=0.005)  # "39B active"


def test_the_catalogue_holds_what_readers_meet():
    keys = {model.key for model in hw.models()}
    assert set(PUBLISHED) <= keys and {"doc000-7b", "doc000-1.5b"} <= keys


def test_document_002s_model_is_in_the_catalogue_and_gives_its_counts():
    model = hw.model("doc002-7b")
    assert model.params() == model.published_params == hw.transformer_params(4096, 32, 50000)
    steps = hw.regime_steps(hw.chip("A100-80GB", source="doc002"), d=model)
    reference = hw.regime_steps(hw.chip("A100-80GB", source="doc002"))
    assert steps.time_s == pytest.approx(reference.time_s, rel=1e-12)
    assert steps.energy_j == pytest.approx(reference.energy_j, rel=1e-12)
