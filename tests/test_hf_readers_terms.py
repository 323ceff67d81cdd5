"""Every term of the Hugging Face config readers pinned by hand: ``hwlib.data.records.hf_families`` (each
``model_type``'s keys to a ModelShape's fields), ``hf_reader.Reader`` (the checks that name the key),
``hf_config.shape_fields`` and ``head_of`` (the heads, the multimodal wrappers, the name), and the ``--config``
option's ``config_file``.

Each config here is small and synthetic (no copy of a real one): the expected fields are written out by hand from
the readers' docstrings and the ``transformers`` configuration classes they follow, and every derived field is
asserted at once (the whole dict), so a changed default, a dropped field, an off-by-one in a layer pattern or a
swapped key fails a test. Vision towers are summed term by term from the docstrings of ``_siglip`` and
``_llama4_vision``.
"""

import json
import warnings
from argparse import Namespace

import pytest

import hwlib as hw
from hwlib.cli.options import config_file, load_model
from hwlib.data.records.hf_config import head_of, shape_fields
from hwlib.data.records.hf_families import FAMILIES, GROUP_LIMITED, LLAMA_LIKE, MULTIMODAL, read_family
from hwlib.data.records.hf_reader import IGNORED, MAX_SIZE, Reader
from hwlib.data.records.latent_attention import LatentAttention


def fields(config: dict, text_only: bool = False) -> dict:
    """The reader's fields, with every key read or known to change no count, and a valid ModelShape of them."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = shape_fields(config, text_only)
    hw.ModelShape(key="t", **{k: v for k, v in out.items() if k != "name"})
    return out


# A Llama-like text model: d = 64, 4 layers, 8 query heads and 2 KV heads, gated MLP of 96, vocabulary 100.
TEXT = {
    "hidden_size": 64,
    "num_hidden_layers": 4,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "intermediate_size": 96,
    "vocab_size": 100,
}
BASE = dict(
    d_model=64,
    n_layers=4,
    vocab=100,
    mlp="gated",
    norm="rmsnorm",
    norms_per_layer=2,  # RMSNorm before attention and before the MLP
    tied_embeddings=False,
    qkv_bias=False,
    qk_norm="none",
    n_heads=8,
    n_kv_heads=2,
    head_dim=8,  # hidden_size // num_attention_heads = 64 // 8
    d_ff=96,
)


def expect(*drop: str, **changes) -> dict:
    out = {**BASE, **changes}
    for key in drop:
        del out[key]
    return out


def config(model_type: str, *drop: str, **changes) -> dict:
    out = {"model_type": model_type, **TEXT}
    for key in drop:
        del out[key]
    return {**out, **changes}


# --- the tables ------------------------------------------------------------------------------------------------


def test_the_families_read():
    assert LLAMA_LIKE == (
        "llama",
        "mistral",
        "mixtral",
        "qwen2",
        "qwen2_moe",
        "qwen3",
        "qwen3_moe",
        "gemma",
        "gemma2",
        "gemma3_text",
        "llama4_text",
        "deepseek_v2",
        "deepseek_v3",
        "phi3",
        "olmo2",
    )
    assert FAMILIES == (
        *LLAMA_LIKE,
        "falcon",
        "RefinedWebModel",
        "RefinedWeb",
        "gptj",
        "starcoder2",
        "gpt2",
        "gpt_neox",
    )
    assert GROUP_LIMITED == ("group_limited_greedy", "noaux_tc")
    assert set(MULTIMODAL) == {"gemma3", "llama4"}
    assert (MULTIMODAL["gemma3"][0], MULTIMODAL["llama4"][0]) == ("gemma3_text", "llama4_text")
    assert MAX_SIZE == 2**40


# --- Llama and the families of its block shape ---------------------------------------------------------------------


def test_llama():
    assert fields(config("llama")) == expect()
    # num_key_value_heads absent or null: multi-head attention, as many KV heads as query heads
    assert fields(config("llama", "num_key_value_heads")) == expect(n_kv_heads=8)
    assert fields(config("llama", num_key_value_heads=None)) == expect(n_kv_heads=8)
    assert fields(config("llama", num_key_value_heads=8)) == expect(n_kv_heads=8)
    assert fields(config("llama", num_key_value_heads=1)) == expect(n_kv_heads=1)
    # head_dim given overrides hidden_size // heads; then hidden_size need not divide by the heads
    assert fields(config("llama", head_dim=16)) == expect(head_dim=16)
    assert fields(config("llama", hidden_size=60, head_dim=16)) == expect(d_model=60, head_dim=16)
    assert fields(config("llama", tie_word_embeddings=True)) == expect(tied_embeddings=True)
    assert fields(config("llama", attention_bias=False, mlp_bias=False)) == expect()


def test_the_head_checks_name_their_keys():
    with pytest.raises(
        ValueError,
        match=r"^config's hidden_size \(60\) is not a multiple of num_attention_heads \(8\) and no head_dim is given$",
    ):
        shape_fields(config("llama", hidden_size=60))
    with pytest.raises(
        ValueError, match=r"^config's num_attention_heads \(8\) must be a multiple of num_key_value_heads \(3\)$"
    ):
        shape_fields(config("llama", num_key_value_heads=3))
    for key in ("attention_bias", "mlp_bias"):
        with pytest.raises(ValueError, match=rf"^config's {key} True is not modelled for 'llama': it adds biases"):
            shape_fields(config("llama", **{key: True}))


@pytest.mark.parametrize(
    "key", ["hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size"]
)
def test_a_missing_key_is_named(key):
    with pytest.raises(ValueError, match=rf"^config has no '{key}', which the 'llama' family needs$"):
        shape_fields(config("llama", key))


@pytest.mark.parametrize("family", ["mistral", "phi3"])
def test_one_window_on_every_layer(family):
    assert fields(config(family, sliding_window=32)) == expect(windows=(32, 32, 32, 32))
    assert fields(config(family, sliding_window=None)) == expect()
    assert fields(config(family)) == expect()


def test_mixtral():
    # num_local_experts experts of intermediate_size each, num_experts_per_tok per token, every layer
    cfg = config("mixtral", num_local_experts=6, num_experts_per_tok=2, sliding_window=16)
    assert fields(cfg) == expect("d_ff", n_experts=6, experts_per_token=2, d_ff_expert=96, windows=(16,) * 4)
    with pytest.raises(ValueError, match="config has no 'num_local_experts', which the 'mixtral' family needs"):
        shape_fields(config("mixtral", num_experts_per_tok=2))


def test_qwen2_biases_and_sliding_windows_above_max_window_layers():
    assert fields(config("qwen2")) == expect(qkv_bias=True)
    off = config("qwen2", use_sliding_window=False, sliding_window=16, max_window_layers=2)
    assert fields(off) == expect(qkv_bias=True)
    # layers i >= max_window_layers slide: i = 2, 3 of 0..3
    on = config("qwen2", use_sliding_window=True, sliding_window=16, max_window_layers=2)
    assert fields(on) == expect(qkv_bias=True, windows=(0, 0, 16, 16))
    assert fields({**on, "max_window_layers": 0}) == expect(qkv_bias=True, windows=(16, 16, 16, 16))
    assert fields({**on, "max_window_layers": 3}) == expect(qkv_bias=True, windows=(0, 0, 0, 16))
    assert fields({**on, "max_window_layers": 4}) == expect(qkv_bias=True, windows=(0, 0, 0, 0))
    with pytest.raises(ValueError, match=r"config's 'max_window_layers' must be a whole number >= 0, got -1"):
        shape_fields({**on, "max_window_layers": -1})
    with pytest.raises(ValueError, match="config has no 'max_window_layers', which the 'qwen2' family needs"):
        shape_fields(config("qwen2", use_sliding_window=True, sliding_window=16))
    with pytest.raises(ValueError, match="config's 'use_sliding_window' must be true or false, got 1"):
        shape_fields(config("qwen2", use_sliding_window=1))


def test_qwen2_moe_shared_expert_and_sparse_step():
    cfg = config(
        "qwen2_moe",
        num_hidden_layers=6,
        num_experts=6,
        num_experts_per_tok=2,
        moe_intermediate_size=24,
        shared_expert_intermediate_size=48,
        decoder_sparse_step=2,
        mlp_only_layers=[3],
    )
    # experts on layers with (i + 1) % decoder_sparse_step == 0 (i = 1, 3, 5), less mlp_only_layers (3)
    moe = (False, True, False, False, False, True)
    shared = dict(n_shared_experts=1, d_ff_shared=48, shared_expert_gate=True)
    expert = dict(n_experts=6, experts_per_token=2, d_ff_expert=24, qkv_bias=True, n_layers=6, **shared)
    assert fields(cfg) == expect(moe_layers=moe, **expert)
    step3 = {**cfg, "decoder_sparse_step": 3, "mlp_only_layers": []}  # i = 2, 5
    assert fields(step3) == expect(moe_layers=(False, False, True, False, False, True), **expert)
    first_dense = {**cfg, "decoder_sparse_step": 1, "mlp_only_layers": [0]}
    assert fields(first_dense) == expect(moe_layers=(False, True, True, True, True, True), **expert)
    # every layer an MoE layer: no dense width and no per-layer list
    every = {k: v for k, v in cfg.items() if k not in ("decoder_sparse_step", "mlp_only_layers")}
    assert fields(every) == expect("d_ff", moe_layers=(), **expert)
    with pytest.raises(ValueError, match=r"config's 'mlp_only_layers' must be a list of whole numbers"):
        shape_fields({**cfg, "mlp_only_layers": "3"})


def test_qwen3_and_qwen3_moe():
    assert fields(config("qwen3", head_dim=16)) == expect(head_dim=16, qk_norm="head")
    moe = config("qwen3_moe", num_experts=4, num_experts_per_tok=2, moe_intermediate_size=24, head_dim=16)
    assert fields(moe) == expect(
        "d_ff", head_dim=16, qk_norm="head", n_experts=4, experts_per_token=2, d_ff_expert=24, moe_layers=()
    )  # no shared expert, every layer experts
    two = {**moe, "decoder_sparse_step": 2}
    assert fields(two) == expect(
        head_dim=16,
        qk_norm="head",
        n_experts=4,
        experts_per_token=2,
        d_ff_expert=24,
        moe_layers=(False, True, False, True),
    )


def test_gemma2_alternates_local_and_global_layers():
    cfg = config("gemma2", head_dim=16, sliding_window=32)
    # four norms a layer, tied embeddings by default, windows on even layers
    gemma = dict(head_dim=16, norms_per_layer=4, tied_embeddings=True)
    assert fields(cfg) == expect(windows=(32, 0, 32, 0), **gemma)
    assert fields({**cfg, "sliding_window_size": 32}) == expect(windows=(32, 0, 32, 0), **gemma)
    assert fields({**cfg, "tie_word_embeddings": False}) == expect(
        windows=(32, 0, 32, 0), **{**gemma, "tied_embeddings": False}
    )
    with pytest.raises(ValueError, match="config has no 'sliding_window', which the 'gemma2' family needs"):
        shape_fields(config("gemma2"))


def test_gemma3_text_one_global_layer_in_every_pattern():
    cfg = config("gemma3_text", num_hidden_layers=6, sliding_window=32, sliding_window_pattern=3)
    gemma = dict(n_layers=6, norms_per_layer=4, tied_embeddings=True, qk_norm="head")
    # layer i is global where (i + 1) % sliding_window_pattern == 0: i = 2, 5
    assert fields(cfg) == expect(windows=(32, 32, 0, 32, 32, 0), **gemma)
    assert fields({**cfg, "sliding_window_pattern": 2}) == expect(windows=(32, 0, 32, 0, 32, 0), **gemma)
    assert fields({**cfg, "sliding_window_pattern": 1}) == expect(windows=(0,) * 6, **gemma)


def test_layer_types_where_the_config_lists_them():
    kinds = [
        "sliding_attention",
        "full_attention",
        "sliding_attention",
        "sliding_attention",
        "full_attention",
        "full_attention",
    ]
    cfg = config("gemma3_text", num_hidden_layers=6, sliding_window=32, sliding_window_pattern=3, layer_types=kinds)
    gemma = dict(n_layers=6, norms_per_layer=4, tied_embeddings=True, qk_norm="head")
    assert fields(cfg) == expect(windows=(32, 0, 32, 32, 0, 0), window_kind="sliding", **gemma)
    every_full = {**cfg, "layer_types": ["full_attention"] * 6}
    assert fields(every_full) == expect(**gemma)
    # the first local kind names the kind; a chunked one takes attention_chunk_size
    mixed = config(
        "llama",
        sliding_window=16,
        attention_chunk_size=32,
        layer_types=["full_attention", "chunked_attention", "sliding_attention", "full_attention"],
    )
    assert fields(mixed) == expect(windows=(0, 32, 32, 0), window_kind="chunked")
    sliding = {
        **{k: v for k, v in mixed.items() if k != "attention_chunk_size"},
        "layer_types": ["sliding_attention", "chunked_attention", "full_attention", "full_attention"],
    }
    assert fields(sliding) == expect(windows=(16, 16, 0, 0), window_kind="sliding")
    message = r"config's 'layer_types' must list one of \['chunked_attention', 'full_attention', 'sliding_attention'\]"
    for bad in (kinds[:5], [*kinds[:5], "global"], "sliding_attention"):
        with pytest.raises(ValueError, match=message):
            shape_fields({**cfg, "layer_types": bad})


def llama4_text(**changes) -> dict:
    return config(
        "llama4_text",
        num_local_experts=4,
        num_experts_per_tok=1,
        intermediate_size_mlp=192,
        interleave_moe_layer_step=2,
        attention_chunk_size=32,
        **changes,
    )


LLAMA4 = dict(n_experts=4, experts_per_token=1, d_ff_expert=96, d_ff=192, n_shared_experts=1)


def test_llama4_text_experts_interleaved_and_chunks_without_rope():
    # experts on range(step - 1, layers, step) = 1, 3; chunked attention where RoPE is used: every layer but
    # each no_rope_layer_interval-th (default 4: layer 3)
    assert fields(llama4_text()) == expect(
        moe_layers=(False, True, False, True), windows=(32, 32, 32, 0), window_kind="chunked", **LLAMA4
    )
    assert fields(llama4_text(no_rope_layer_interval=2)) == expect(
        moe_layers=(False, True, False, True), windows=(32, 0, 32, 0), window_kind="chunked", **LLAMA4
    )
    assert fields(llama4_text(no_rope_layers=[1, 0, 1, 1])) == expect(
        moe_layers=(False, True, False, True), windows=(32, 0, 32, 32), window_kind="chunked", **LLAMA4
    )
    assert fields(llama4_text(no_rope_layers=[])) == expect(
        moe_layers=(False, True, False, True), windows=(32, 32, 32, 0), window_kind="chunked", **LLAMA4
    )
    assert fields(llama4_text(moe_layers=[0, 2])) == expect(
        moe_layers=(True, False, True, False), windows=(32, 32, 32, 0), window_kind="chunked", **LLAMA4
    )
    # every layer MoE: Llama 4 keeps its dense width and the per-layer list
    every = {k: v for k, v in llama4_text().items() if k != "interleave_moe_layer_step"}
    assert fields(every) == expect(
        moe_layers=(True, True, True, True), windows=(32, 32, 32, 0), window_kind="chunked", **LLAMA4
    )
    no_chunks = {k: v for k, v in llama4_text().items() if k != "attention_chunk_size"}
    assert fields(no_chunks) == expect(moe_layers=(False, True, False, True), **LLAMA4)
    with pytest.raises(ValueError, match=r"config's 'no_rope_layers' must have one entry per layer \(4\), got 3"):
        shape_fields(llama4_text(no_rope_layers=[1, 1, 0]))


def deepseek(family="deepseek_v2", **changes) -> dict:
    keys = dict(
        num_hidden_layers=5,
        kv_lora_rank=16,
        qk_nope_head_dim=8,
        qk_rope_head_dim=4,
        v_head_dim=8,
        q_lora_rank=24,
        n_routed_experts=6,
        num_experts_per_tok=2,
        moe_intermediate_size=24,
        first_k_dense_replace=1,
        moe_layer_freq=2,
        n_shared_experts=2,
        num_nextn_predict_layers=1,
    )
    return config(family, "num_key_value_heads", **{**keys, **changes})


def test_deepseek_latent_attention_and_experts():
    mla = LatentAttention(kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=8, q_lora_rank=24)
    assert mla.qk_head_dim == 8 + 4
    ds = dict(
        n_layers=5,
        n_kv_heads=8,  # num_key_value_heads absent: num_attention_heads
        mla=mla,
        head_dim=12,  # qk_nope_head_dim + qk_rope_head_dim
        mtp_layers=1,
        n_experts=6,
        experts_per_token=2,
        d_ff_expert=24,
        n_shared_experts=2,
        router_bias=False,
    )
    # experts on layers i >= first_k_dense_replace with i % moe_layer_freq == 0: 2, 4 of 0..4
    moe = (False, False, True, False, True)
    assert fields(deepseek()) == expect(moe_layers=moe, **ds)
    # group-limited routing reads n_group and topk_group; noaux_tc adds V3's router bias
    limited = deepseek(topk_method="group_limited_greedy", n_group=3, topk_group=2)
    assert fields(limited) == expect(moe_layers=moe, expert_groups=3, groups_per_token=2, **ds)
    v3 = deepseek("deepseek_v3", topk_method="noaux_tc", n_group=3, topk_group=2, num_key_value_heads=4)
    assert fields(v3) == expect(
        moe_layers=moe, expert_groups=3, groups_per_token=2, **{**ds, "router_bias": True, "n_kv_heads": 4}
    )
    assert fields(deepseek(first_k_dense_replace=2, moe_layer_freq=1)) == expect(
        moe_layers=(False, False, True, True, True), **ds
    )
    assert fields(deepseek(first_k_dense_replace=0, moe_layer_freq=3)) == expect(
        moe_layers=(True, False, False, True, False), **ds
    )
    # the defaults: no dense layers (every layer MoE: no dense width, no list), no shared experts, no MTP layer,
    # a full-rank query, and qk_nope_head_dim may be 0
    bare = {
        k: v
        for k, v in deepseek(qk_nope_head_dim=0).items()
        if k
        not in (
            "first_k_dense_replace",
            "moe_layer_freq",
            "n_shared_experts",
            "num_nextn_predict_layers",
            "q_lora_rank",
        )
    }
    plain = LatentAttention(kv_lora_rank=16, qk_nope_head_dim=0, qk_rope_head_dim=4, v_head_dim=8)
    assert fields(bare) == expect(
        "d_ff", **{**ds, "mla": plain, "head_dim": 4, "mtp_layers": 0, "n_shared_experts": 0, "moe_layers": ()}
    )
    with pytest.raises(ValueError, match=r"^config's num_attention_heads must be a multiple of num_key_value_heads$"):
        shape_fields(deepseek(num_key_value_heads=3))
    with pytest.raises(ValueError, match="config has no 'kv_lora_rank', which the 'deepseek_v2' family needs"):
        shape_fields(deepseek("deepseek_v2", kv_lora_rank=None))
    with pytest.raises(ValueError, match="config has no 'n_group', which the 'deepseek_v3' family needs"):
        shape_fields(deepseek("deepseek_v3", topk_method="noaux_tc", topk_group=2))
    with pytest.raises(ValueError, match="config's 'topk_method' must be a string, got 3"):
        shape_fields(deepseek(topk_method=3))


def test_olmo2_norms_after_and_over_the_whole_query_and_key():
    assert fields(config("olmo2")) == expect(qk_norm="full", norms_per_layer=2)
    assert fields(config("olmo2", tie_word_embeddings=True)) == expect(
        qk_norm="full", norms_per_layer=2, tied_embeddings=True
    )


# --- the other families --------------------------------------------------------------------------------------------

FALCON_OLD = {"model_type": "falcon", "hidden_size": 64, "n_layer": 3, "n_head": 8, "vocab_size": 100}
FALCON = dict(
    d_model=64,
    n_layers=3,
    n_heads=8,
    n_kv_heads=1,  # multi_query defaults to True: one KV head
    head_dim=8,
    d_ff=256,  # ffn_hidden_size defaults to 4 x hidden_size
    mlp="gelu",
    vocab=100,
    tied_embeddings=True,
    norm="layernorm",
    norms_per_layer=1,  # parallel attention and MLP after one LayerNorm
    linear_bias=False,
)


@pytest.mark.parametrize("family", ["falcon", "RefinedWebModel", "RefinedWeb"])
def test_falcon_before_the_new_decoder(family):
    old = {**FALCON_OLD, "model_type": family}
    assert fields(old) == FALCON
    assert fields({**old, "multi_query": False}) == {**FALCON, "n_kv_heads": 8}
    assert fields({**old, "parallel_attn": False}) == {**FALCON, "norms_per_layer": 2}
    assert fields({**old, "bias": True}) == {**FALCON, "linear_bias": True}
    assert fields({**old, "ffn_hidden_size": 200}) == {**FALCON, "d_ff": 200}
    assert fields({**old, "tie_word_embeddings": False}) == {**FALCON, "tied_embeddings": False}
    assert fields({**old, "num_kv_heads": 4}) == FALCON  # read only by the new decoder


def test_falcon_new_decoder_architecture():
    new = {
        "model_type": "falcon",
        "hidden_size": 64,
        "num_hidden_layers": 3,
        "num_attention_heads": 8,
        "num_kv_heads": 2,
        "new_decoder_architecture": True,
        "vocab_size": 100,
    }
    assert fields(new) == {**FALCON, "n_kv_heads": 2, "norms_per_layer": 2}
    no_kv = {k: v for k, v in new.items() if k != "num_kv_heads"}
    assert fields(no_kv) == {**FALCON, "n_kv_heads": 8, "norms_per_layer": 2}
    with pytest.raises(ValueError, match=r"^config's hidden_size \(60\) is not a multiple of n_head \(8\)$"):
        shape_fields({**FALCON_OLD, "hidden_size": 60})
    with pytest.raises(
        ValueError, match=r"^config's hidden_size \(60\) is not a multiple of num_attention_heads \(8\)$"
    ):
        shape_fields({**new, "hidden_size": 60})


def test_gptj():
    cfg = {"model_type": "gptj", "n_embd": 64, "n_head": 8, "n_layer": 3, "vocab_size": 100, "n_positions": 128}
    gptj = dict(
        d_model=64,
        n_layers=3,
        n_heads=8,
        n_kv_heads=8,
        head_dim=8,
        d_ff=256,  # n_inner defaults to 4 x n_embd
        mlp="gelu",
        vocab=100,
        tied_embeddings=False,
        norm="layernorm",
        norms_per_layer=1,
        mlp_bias=True,
        head_bias=True,
    )
    assert fields(cfg) == gptj
    assert fields({**cfg, "n_inner": 200}) == {**gptj, "d_ff": 200}
    assert fields({**cfg, "tie_word_embeddings": True}) == {**gptj, "tied_embeddings": True}
    with pytest.raises(ValueError, match=r"^config's n_embd \(60\) is not a multiple of n_head \(8\)$"):
        shape_fields({**cfg, "n_embd": 60})


def test_starcoder2():
    cfg = config("starcoder2", sliding_window=32)
    star = dict(
        d_model=64,
        n_layers=4,
        n_heads=8,
        n_kv_heads=2,
        head_dim=8,
        d_ff=96,
        mlp="gelu",
        vocab=100,
        tied_embeddings=True,
        norm="layernorm",
        linear_bias=True,  # use_bias defaults to True
        windows=(32, 32, 32, 32),
    )
    assert fields(cfg) == star
    assert fields({**cfg, "use_bias": False, "sliding_window": None}) == {
        **{k: v for k, v in star.items() if k != "windows"},
        "linear_bias": False,
    }
    assert fields({**cfg, "mlp_type": "default", "norm_type": "layer_norm"}) == star
    for key, value in (("mlp_type", "gated"), ("norm_type", "rms_norm")):
        with pytest.raises(ValueError, match="config's mlp_type and norm_type must be 'default' and 'layer_norm'"):
            shape_fields({**cfg, key: value})


def test_gpt2():
    cfg = {"model_type": "gpt2", "n_embd": 64, "n_head": 8, "n_layer": 3, "vocab_size": 100, "n_positions": 128}
    gpt2 = dict(
        d_model=64,
        n_layers=3,
        n_heads=8,
        n_kv_heads=8,
        head_dim=8,
        d_ff=256,
        mlp="gelu",
        vocab=100,
        tied_embeddings=True,
        linear_bias=True,
        norm="layernorm",
        learned_positions=128,
    )
    assert fields(cfg) == gpt2
    assert fields({**cfg, "n_inner": 200, "activation_function": "gelu_new"}) == {**gpt2, "d_ff": 200}
    with pytest.raises(ValueError, match=r"^config's n_embd \(60\) is not a multiple of n_head \(8\)$"):
        shape_fields({**cfg, "n_embd": 60})
    with pytest.raises(ValueError, match="config has no 'n_positions', which the 'gpt2' family needs"):
        shape_fields({k: v for k, v in cfg.items() if k != "n_positions"})


def test_gpt_neox():
    cfg = config("gpt_neox", "num_key_value_heads", intermediate_size=256)
    neox = dict(
        d_model=64,
        n_layers=4,
        n_heads=8,
        n_kv_heads=8,
        head_dim=8,
        d_ff=256,
        mlp="gelu",
        vocab=100,
        norm="layernorm",
        linear_bias=True,
        tied_embeddings=False,
    )
    assert fields(cfg) == neox
    assert fields({**cfg, "attention_bias": True, "tie_word_embeddings": True}) == {**neox, "tied_embeddings": True}
    with pytest.raises(ValueError, match="config's attention_bias False is not modelled for gpt_neox"):
        shape_fields({**cfg, "attention_bias": False})


def test_an_unknown_family_is_named():
    with pytest.raises(
        ValueError, match=r"^config's model_type must be one of \('llama', .*'gemma3', 'llama4'\), got 'bert'$"
    ):
        shape_fields({**TEXT, "model_type": "bert"})
    with pytest.raises(ValueError, match=r"^config's text model_type must be one of \('llama', .*\), got 'gemma3'$"):
        read_family(Reader(TEXT, "gemma3"))
    with pytest.raises(ValueError, match="config's text model_type must be one of"):
        shape_fields({"model_type": "gemma3", "text_config": {**TEXT, "model_type": "bert"}})


# --- multimodal wrappers and their vision towers ---------------------------------------------------------------------

SIGLIP = {
    "hidden_size": 8,
    "intermediate_size": 16,
    "num_hidden_layers": 2,
    "patch_size": 4,
    "image_size": 18,
    "num_attention_heads": 2,
}
GEMMA3_TEXT = {k: v for k, v in TEXT.items()} | {"sliding_window": 32, "sliding_window_pattern": 2}
GEMMA3 = dict(norms_per_layer=4, tied_embeddings=True, qk_norm="head", windows=(32, 0, 32, 0))


def test_gemma3_with_its_siglip_tower():
    outer = {
        "model_type": "gemma3",
        "architectures": ["Gemma3ForConditionalGeneration"],
        "text_config": GEMMA3_TEXT,
        "vision_config": SIGLIP,
    }
    # h = 8, MLP 16, 2 layers, patch 4, image 18 (18 // 4 = 4 patches a side), 3 channels, text d = 64
    embeddings = 3 * 4 * 4 * 8 + 8 + 4**2 * 8  # patch conv weight and bias, a position per patch
    block = 4 * (8 * 8 + 8) + 2 * 2 * 8 + (8 * 16 + 16) + (16 * 8 + 8)  # q k v o, two LayerNorms, the MLP
    tower = embeddings + 2 * block + 2 * 8 + 8 * 64 + 8  # last LayerNorm, projection matrix and its norm
    assert (embeddings, block, tower) == (520, 600, 2256)
    assert fields(outer) == expect(vision_params=2256, **GEMMA3)
    assert fields(outer, text_only=True) == expect(vision_params=0, **GEMMA3)
    one_channel = {**outer, "vision_config": {**SIGLIP, "num_channels": 1}}
    assert fields(one_channel) == expect(vision_params=2256 - 2 * 4 * 4 * 8, **GEMMA3)
    # the outer tie_word_embeddings reaches the text model unless it has its own
    untied = {**outer, "tie_word_embeddings": False}
    assert fields(untied) == expect(vision_params=2256, **{**GEMMA3, "tied_embeddings": False})
    own = {**untied, "text_config": {**GEMMA3_TEXT, "tie_word_embeddings": True}}
    assert fields(own) == expect(vision_params=2256, **GEMMA3)
    with pytest.raises(ValueError, match="config's vision_config.vision_use_head true is not modelled for 'gemma3'"):
        shape_fields({**outer, "vision_config": {**SIGLIP, "vision_use_head": True}})
    with pytest.raises(ValueError, match="config has no 'vision_config', which the 'gemma3' family needs"):
        shape_fields({k: v for k, v in outer.items() if k != "vision_config"})
    with pytest.raises(ValueError, match="config has no 'text_config', which the 'gemma3' family needs"):
        shape_fields({k: v for k, v in outer.items() if k != "text_config"})
    with pytest.raises(ValueError, match="config has no 'patch_size', which the 'gemma3 vision_config' family"):
        shape_fields({**outer, "vision_config": {k: v for k, v in SIGLIP.items() if k != "patch_size"}})


def test_llama4_with_its_vision_tower_adapter_and_projector():
    vision = {**SIGLIP, "projector_input_dim": 12, "projector_output_dim": 6, "vision_output_dim": 10}
    text = {k: v for k, v in llama4_text().items() if k != "model_type"}
    outer = {"model_type": "llama4", "text_config": text, "vision_config": vision}
    # class token, positions for 4 x 4 patches and the class token, patch conv (no bias), LayerNorms before and after
    embeddings = 8 + (4**2 + 1) * 8 + 3 * 4 * 4 * 8 + 2 * 2 * 8
    block = 4 * (8 * 8 + 8) + (8 * 16 + 16) + (16 * 8 + 8) + 2 * 2 * 8
    adapter = 16 * 12 + 6 * 6  # pixel shuffle's two matrices: intermediate x projector_input, output x output
    projector = 10 * 64  # vision_output_dim x text d, no bias by default
    assert (embeddings, block, adapter, projector) == (560, 600, 228, 640)
    tower = embeddings + 2 * block + adapter + projector
    text_fields = dict(moe_layers=(False, True, False, True), windows=(32, 32, 32, 0), window_kind="chunked", **LLAMA4)
    assert fields(outer) == expect(vision_params=tower, **text_fields) and tower == 2628
    assert fields(outer, text_only=True) == expect(vision_params=0, **text_fields)
    biased = {**outer, "vision_config": {**vision, "multi_modal_projector_bias": True}}
    assert fields(biased) == expect(vision_params=2628 + 64, **text_fields)
    one_channel = {**outer, "vision_config": {**vision, "num_channels": 1}}
    assert fields(one_channel) == expect(vision_params=2628 - 2 * 4 * 4 * 8, **text_fields)


@pytest.mark.parametrize("family", ["gemma3", "llama4"])
def test_a_vision_tower_whose_image_holds_no_patch_is_refused(family):
    vision = {**SIGLIP, "image_size": 3, "projector_input_dim": 12, "projector_output_dim": 6, "vision_output_dim": 10}
    text = GEMMA3_TEXT if family == "gemma3" else {k: v for k, v in llama4_text().items() if k != "model_type"}
    outer = {"model_type": family, "text_config": text, "vision_config": vision}
    with pytest.raises(ValueError, match=f"{family} vision_config.image_size=3 is smaller than its patch_size=4"):
        shape_fields(outer)
    assert fields({**outer, "vision_config": {**vision, "image_size": 4}}, text_only=False)  # one patch counts


# --- heads, names and unused keys ----------------------------------------------------------------------------------


def test_the_head_architectures_name():
    assert head_of({}) == ("lm", 0)
    for name in ("LlamaForCausalLM", "GPT2LMHeadModel", "Gemma3ForConditionalGeneration"):
        assert head_of({"architectures": [name]}) == ("lm", 0)
    assert head_of({"architectures": ["LlamaModel"]}) == ("none", 0)
    classifier = {"architectures": ["LlamaForSequenceClassification"]}
    assert head_of(classifier) == ("classifier", 2)  # neither num_labels nor id2label: 2
    assert head_of({**classifier, "id2label": {"0": "a", "1": "b", "2": "c"}}) == ("classifier", 3)
    assert head_of({**classifier, "id2label": {"0": "a"}, "num_labels": 5}) == ("classifier", 5)
    assert head_of({**classifier, "num_labels": 1}) == ("classifier", 1)
    with pytest.raises(ValueError, match=r"config's 'num_labels' must be a whole number >= 1, got 0"):
        head_of({**classifier, "num_labels": 0})
    with pytest.raises(ValueError, match="architectures 'LlamaForTokenClassification' is not modelled"):
        head_of({"architectures": ["LlamaForTokenClassification"]})
    with pytest.raises(ValueError, match="config's 'architectures' must be a list of class names"):
        head_of({"architectures": "LlamaForCausalLM"})
    # a classifier or a headless model never ties its embeddings to a head
    tied = config("llama", tie_word_embeddings=True, architectures=["LlamaForSequenceClassification"], num_labels=3)
    assert fields(tied) == expect(head="classifier", n_labels=3, tied_embeddings=False)
    headless = config("llama", architectures=["LlamaModel"])
    assert fields(headless) == expect(head="none", n_labels=0)
    assert fields(config("llama", architectures=["LlamaForCausalLM"])) == expect()


def test_the_name_is_the_repository_names_last_part():
    assert fields(config("llama", _name_or_path="org/Tiny-Llama/")) == expect(name="Tiny-Llama")
    assert fields(config("llama", _name_or_path="tiny")) == expect(name="tiny")
    outer = {"model_type": "gemma3", "_name_or_path": "g/Gemma-T", "text_config": GEMMA3_TEXT, "vision_config": SIGLIP}
    assert fields(outer)["name"] == "Gemma-T"
    assert hw.ModelShape.from_hf_config(config("llama", _name_or_path="org/Tiny")).name == "Tiny"


def test_unused_keys_are_named_and_ignored_ones_are_not():
    with pytest.warns(UserWarning, match=r"config keys not used by the ModelShape reader .*: \['colour', 'zebra'\]"):
        shape_fields(config("llama", zebra=1, colour=2, rope_theta=1e4, torch_dtype="bfloat16"))
    outer = {"model_type": "gemma3", "text_config": GEMMA3_TEXT, "vision_config": SIGLIP, "extra": 1}
    with pytest.warns(UserWarning, match=r"\['gemma3.extra'\]"):
        shape_fields(outer)
    assert {"rope_theta", "torch_dtype", "rms_norm_eps", "n_group", "topk_group"} <= IGNORED
    assert fields(config("llama", rope_theta=1e4, torch_dtype="bfloat16", num_labels=2)) == expect()


def test_a_file_on_disk_and_a_non_mapping(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config("llama")))
    assert fields(path) == fields(str(path)) == expect()
    with pytest.raises(TypeError, match="config must be a config.json dict or a path to one, got"):
        shape_fields([("model_type", "llama")])


# --- Reader: the checks that name the key ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, r"^config's 'n' must be a whole number >= 1, got True \(bool\)$"),
        ("64", r"^config's 'n' must be a whole number >= 1, got '64' \(str\)$"),
        (64.0, r"^config's 'n' must be a whole number >= 1, got the float 64.0$"),
        (float("nan"), r"^config's 'n' must be a whole number >= 1, got the float NaN$"),
        (0, r"^config's 'n' must be a whole number >= 1, got 0$"),
        (-3, r"^config's 'n' must be a whole number >= 1, got -3$"),
        ([64], r"^config's 'n' must be a whole number >= 1, got \[64\]$"),
        (2**40 + 1, r"^config's 'n' is 1,099,511,627,777, more than any model has \(at most 1,099,511,627,776\)$"),
    ],
)
def test_whole_rejects_naming_the_key(value, message):
    with pytest.raises(ValueError, match=message):
        Reader({"n": value}, "llama").whole("n")


def test_whole_accepts_and_defaults():
    r = Reader({"n": 2**40, "z": 0, "one": 1, "none": None}, "llama")
    assert r.whole("n") == 2**40  # at most MAX_SIZE
    assert r.whole("z", minimum=0) == 0 and r.whole("one") == 1
    assert r.whole("absent", 7) == 7 and r.whole("none", 5) == 5  # null is absent
    assert r.whole("absent", None) is None
    with pytest.raises(ValueError, match=r"^config's 'z' must be a whole number >= 1, got 0$"):
        r.whole("z")
    with pytest.raises(ValueError, match=r"^config has no 'absent', which the 'llama' family needs$"):
        r.whole("absent")
    with pytest.raises(ValueError, match=r"^config's 'one' must be a whole number >= 2, got 1$"):
        r.whole("one", minimum=2)
    assert {"n", "z", "one", "none", "absent", "model_type"} == r.used


def test_flag_text_lists_and_biases():
    r = Reader({"f": False, "t": "x", "one": 1, "l": [1, 2], "bad": [1, True], "b": True}, "phi3")
    assert r.flag("f", True) is False and r.flag("absent", True) is True
    with pytest.raises(ValueError, match=r"^config's 'one' must be true or false, got 1$"):
        r.flag("one", False)
    assert r.text("t") == "x" and r.text("absent", "d") == "d"
    with pytest.raises(ValueError, match=r"^config's 'one' must be a string, got 1$"):
        r.text("one")
    assert r.whole_list("l") == [1, 2] and r.whole_list("l", 2) == [1, 2] and r.whole_list("absent", default=[]) == []
    with pytest.raises(ValueError, match=r"^config's 'bad' must be a list of whole numbers, got \[1, True\]$"):
        r.whole_list("bad")
    with pytest.raises(ValueError, match=r"^config's 'l' must have one entry per layer \(3\), got 2$"):
        r.whole_list("l", 3)
    r.absent_or_false("f", "absent")
    with pytest.raises(ValueError, match=r"^config's b True is not modelled for 'phi3': it adds biases"):
        r.absent_or_false("b")
    fresh = Reader({"model_type": "phi3", "a": 1, "rope_theta": 2, "c": 3}, "phi3")
    fresh.whole("a")
    assert fresh.unused() == ["c"]


# --- the --config option ---------------------------------------------------------------------------------------------


def test_config_file_finds_the_json_and_a_key(tmp_path):
    text = json.dumps(config("llama"))
    file = tmp_path / "Tiny.json"
    file.write_text(text)
    assert config_file(file) == (file, "Tiny")
    folder = tmp_path / "My-Model"
    folder.mkdir()
    (folder / "config.json").write_text(text)
    assert config_file(folder) == (folder / "config.json", "my-model")
    cache = tmp_path / "models--Org--Big-Model"
    old, new = cache / "snapshots" / "aaa", cache / "snapshots" / "bbb"
    for snapshot in (old, new):
        snapshot.mkdir(parents=True)
        (snapshot / "config.json").write_text(text)
    (cache / "refs").mkdir()
    (cache / "refs" / "main").write_text("aaa\n")
    assert config_file(cache) == (old / "config.json", "big-model")  # the snapshot refs/main names
    assert config_file(new) == (new / "config.json", "big-model")  # a snapshot folder: its model's name
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="a folder must hold a config.json"):
        config_file(empty)
    bare = tmp_path / "models--a--b"
    bare.mkdir()
    with pytest.raises(ValueError, match="no snapshot with a config.json in this Hugging Face cache folder"):
        config_file(bare)
    model = load_model(Namespace(config=str(folder), model=None))
    assert model.key == "my-model" and (model.d_model, model.n_layers, model.n_kv_heads, model.d_ff) == (64, 4, 2, 96)
