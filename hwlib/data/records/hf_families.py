"""Each ``model_type``'s keys mapped to a ModelShape's fields: attention (grouped-query, latent, windows), the MLP
or experts per layer, norms, biases and heads, as the ``transformers`` modelling code of that family builds them.
Read through ``hwlib.data.records.hf_config.shape_fields``. Chapter :ref:`ch-counting`.
"""

from __future__ import annotations

from collections.abc import Callable

from hwlib.data.records.hf_reader import Reader
from hwlib.data.records.latent_attention import LatentAttention

LLAMA_LIKE = (
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
"""Families of one block shape: RMSNorm, rotary positions, a gated (SwiGLU or GeGLU) MLP or experts."""
FAMILIES = (*LLAMA_LIKE, "falcon", "RefinedWebModel", "RefinedWeb", "gptj", "starcoder2", "gpt2", "gpt_neox")
"""``model_type`` values of a language model's own config (RefinedWeb*: Falcon's names before transformers)."""

_LAYER_TYPES = {"full_attention": None, "sliding_attention": "sliding", "chunked_attention": "chunked"}

GROUP_LIMITED = ("group_limited_greedy", "noaux_tc")
"""DeepSeek's ``topk_method`` values that pick a token's experts from ``topk_group`` of ``n_group`` groups only."""


def _heads(r: Reader, d: int, heads_key: str = "num_attention_heads", kv_key: str = "num_key_value_heads") -> dict:
    heads = r.whole(heads_key)
    kv = r.whole(kv_key, heads)
    if "head_dim" not in r.config and d % heads:
        raise ValueError(
            f"config's hidden_size ({d}) is not a multiple of {heads_key} ({heads}) and no head_dim is given"
        )
    if heads % kv:
        raise ValueError(f"config's {heads_key} ({heads}) must be a multiple of {kv_key} ({kv})")
    return dict(n_heads=heads, n_kv_heads=kv, head_dim=r.whole("head_dim", d // heads))


def _windows(r: Reader, layers: int) -> dict:
    """Per-layer windows: ``layer_types`` where the config lists them, else the family's own rule."""
    if "layer_types" in r.config:
        kinds = r._get("layer_types", KeyError)
        if not isinstance(kinds, list) or len(kinds) != layers or any(k not in _LAYER_TYPES for k in kinds):
            raise ValueError(f"config's 'layer_types' must list one of {sorted(_LAYER_TYPES)} per layer")
        local = [_LAYER_TYPES[k] for k in kinds]
        kind = next((k for k in local if k), "sliding")
        size = r.whole("attention_chunk_size" if kind == "chunked" else "sliding_window") if any(local) else 0
        r.used.update({"sliding_window", "_sliding_window_pattern", "sliding_window_pattern", "use_sliding_window"})
        return dict(windows=tuple(size if k else 0 for k in local), window_kind=kind) if any(local) else {}
    family = r.family
    if family in ("mistral", "mixtral", "phi3", "starcoder2"):
        size = r.whole("sliding_window", 0)
        return dict(windows=(size,) * layers) if size else {}
    if family.startswith("qwen"):
        r.used.update({"sliding_window", "max_window_layers"})
        if not r.flag("use_sliding_window", False):
            return {}
        size, full = r.whole("sliding_window"), r.whole("max_window_layers", minimum=0)
        return dict(windows=tuple(size if i >= full else 0 for i in range(layers)))
    if family == "gemma2":
        r.used.add("sliding_window_size")
        size = r.whole("sliding_window")
        return dict(windows=tuple(size if i % 2 == 0 else 0 for i in range(layers)))
    if family == "gemma3_text":
        size, every = r.whole("sliding_window"), r.whole("sliding_window_pattern")
        return dict(windows=tuple(0 if (i + 1) % every == 0 else size for i in range(layers)))
    if family == "llama4_text":
        size = r.whole("attention_chunk_size", 0)
        if "no_rope_layers" in r.config and r.config["no_rope_layers"]:
            rope = r.whole_list("no_rope_layers", layers)
        else:
            every = r.whole("no_rope_layer_interval", 4)
            r.used.add("no_rope_layers")
            rope = [int((i + 1) % every != 0) for i in range(layers)]
        return dict(windows=tuple(size if used else 0 for used in rope), window_kind="chunked") if size else {}
    return {}


def _experts(r: Reader, layers: int) -> dict:
    """An MoE's experts, shared experts and which layers have them."""
    family = r.family
    if family == "mixtral":
        return dict(
            n_experts=r.whole("num_local_experts"),
            experts_per_token=r.whole("num_experts_per_tok"),
            d_ff_expert=r.whole("intermediate_size"),
        )
    if family in ("qwen2_moe", "qwen3_moe"):
        step = r.whole("decoder_sparse_step", 1)
        dense = set(r.whole_list("mlp_only_layers", default=[]))
        fields = dict(
            n_experts=r.whole("num_experts"),
            experts_per_token=r.whole("num_experts_per_tok"),
            d_ff_expert=r.whole("moe_intermediate_size"),
            d_ff=r.whole("intermediate_size"),
            moe_layers=tuple(i not in dense and (i + 1) % step == 0 for i in range(layers)),
        )
        if family == "qwen2_moe":
            fields.update(
                n_shared_experts=1, d_ff_shared=r.whole("shared_expert_intermediate_size"), shared_expert_gate=True
            )
        return fields
    if family.startswith("deepseek"):
        first, every = r.whole("first_k_dense_replace", 0, minimum=0), r.whole("moe_layer_freq", 1)
        shared = r.whole("n_shared_experts", 0, minimum=0)
        expert = r.whole("moe_intermediate_size")
        fields = dict(
            n_experts=r.whole("n_routed_experts"),
            experts_per_token=r.whole("num_experts_per_tok"),
            d_ff_expert=expert,
            d_ff=r.whole("intermediate_size"),
            n_shared_experts=shared,
            router_bias=r.text("topk_method", "greedy") == "noaux_tc",  # V3's per-expert score-correction bias
            moe_layers=tuple(i >= first and i % every == 0 for i in range(layers)),
        )
        if r.text("topk_method", "greedy") in GROUP_LIMITED:  # experts from topk_group of n_group groups only
            fields.update(expert_groups=r.whole("n_group"), groups_per_token=r.whole("topk_group"))
        return fields
    if family == "llama4_text":
        experts = r.whole("num_local_experts")
        if r.config.get("moe_layers") is not None:
            moe = set(r.whole_list("moe_layers"))
            r.used.add("interleave_moe_layer_step")
        else:
            step = r.whole("interleave_moe_layer_step", 1)
            moe = set(range(step - 1, layers, step))
        return dict(
            n_experts=experts,
            experts_per_token=r.whole("num_experts_per_tok"),
            d_ff_expert=r.whole("intermediate_size"),
            d_ff=r.whole("intermediate_size_mlp"),
            n_shared_experts=1,
            moe_layers=tuple(i in moe for i in range(layers)),
        )
    return dict(d_ff=r.whole("intermediate_size"))


def _llama_like(r: Reader) -> dict:
    family = r.family
    d, layers = r.whole("hidden_size"), r.whole("num_hidden_layers")
    gemma = family.startswith("gemma")
    fields = dict(
        d_model=d,
        n_layers=layers,
        vocab=r.whole("vocab_size"),
        mlp="gated",
        norm="rmsnorm",
        norms_per_layer=4 if family in ("gemma2", "gemma3_text") else 2,  # Gemma 1 has a norm before each block only
        tied_embeddings=r.flag("tie_word_embeddings", gemma),
        qkv_bias=family in ("qwen2", "qwen2_moe"),
        qk_norm={"qwen3": "head", "qwen3_moe": "head", "gemma3_text": "head", "olmo2": "full"}.get(family, "none"),
    )
    if family.startswith("deepseek"):
        fields.update(
            n_heads=r.whole("num_attention_heads"),
            n_kv_heads=r.whole("num_key_value_heads", r.config.get("num_attention_heads")),
            mla=LatentAttention(
                kv_lora_rank=r.whole("kv_lora_rank"),
                qk_nope_head_dim=r.whole("qk_nope_head_dim", minimum=0),
                qk_rope_head_dim=r.whole("qk_rope_head_dim"),
                v_head_dim=r.whole("v_head_dim"),
                q_lora_rank=r.whole("q_lora_rank", None),
            ),
            mtp_layers=r.whole("num_nextn_predict_layers", 0, minimum=0),
        )
        fields["head_dim"] = fields["mla"].qk_head_dim
        if fields["n_heads"] % fields["n_kv_heads"]:
            raise ValueError("config's num_attention_heads must be a multiple of num_key_value_heads")
    else:
        fields.update(_heads(r, d))
    fields.update(_experts(r, layers))
    fields.update(_windows(r, layers))
    if fields.get("moe_layers") and all(fields["moe_layers"]) and family != "llama4_text":
        fields.pop("d_ff", None)
        fields["moe_layers"] = ()
    if family == "olmo2":
        fields["norms_per_layer"] = 2  # after attention and after the MLP, none before
    r.absent_or_false("attention_bias", "mlp_bias")
    return fields


def _falcon(r: Reader) -> dict:
    d = r.whole("hidden_size")
    layers = r.whole("num_hidden_layers" if "num_hidden_layers" in r.config else "n_layer")
    heads_key = "num_attention_heads" if "num_attention_heads" in r.config else "n_head"
    heads = r.whole(heads_key)
    new = r.flag("new_decoder_architecture", False)
    if new:
        kv = r.whole("num_kv_heads", heads)
    else:
        kv = 1 if r.flag("multi_query", True) else heads
        r.used.add("num_kv_heads")
    if d % heads:
        raise ValueError(f"config's hidden_size ({d}) is not a multiple of {heads_key} ({heads})")
    bias = r.flag("bias", False)
    parallel = r.flag("parallel_attn", True)
    return dict(
        d_model=d,
        n_layers=layers,
        n_heads=heads,
        n_kv_heads=kv,
        head_dim=d // heads,
        d_ff=r.whole("ffn_hidden_size", 4 * d),
        mlp="gelu",
        vocab=r.whole("vocab_size"),
        tied_embeddings=r.flag("tie_word_embeddings", True),
        norm="layernorm",
        norms_per_layer=2 if (new or not parallel) else 1,
        linear_bias=bias,
    )


def _gptj(r: Reader) -> dict:
    d, heads = r.whole("n_embd"), r.whole("n_head")
    if d % heads:
        raise ValueError(f"config's n_embd ({d}) is not a multiple of n_head ({heads})")
    r.used.add("n_positions")
    return dict(
        d_model=d,
        n_layers=r.whole("n_layer"),
        n_heads=heads,
        n_kv_heads=heads,
        head_dim=d // heads,
        d_ff=r.whole("n_inner", 4 * d),
        mlp="gelu",
        vocab=r.whole("vocab_size"),
        tied_embeddings=r.flag("tie_word_embeddings", False),
        norm="layernorm",
        norms_per_layer=1,  # attention and MLP in parallel after one LayerNorm
        mlp_bias=True,
        head_bias=True,
    )


def _starcoder2(r: Reader) -> dict:
    d = r.whole("hidden_size")
    layers = r.whole("num_hidden_layers")
    if r.text("mlp_type", "default") != "default" or r.text("norm_type", "layer_norm") != "layer_norm":
        raise ValueError("config's mlp_type and norm_type must be 'default' and 'layer_norm' for 'starcoder2'")
    return dict(
        d_model=d,
        n_layers=layers,
        **_heads(r, d),
        d_ff=r.whole("intermediate_size"),
        mlp="gelu",
        vocab=r.whole("vocab_size"),
        tied_embeddings=r.flag("tie_word_embeddings", True),
        norm="layernorm",
        linear_bias=r.flag("use_bias", True),
        **_windows(r, layers),
    )


def _gpt2(r: Reader) -> dict:
    d, heads = r.whole("n_embd"), r.whole("n_head")
    if d % heads:
        raise ValueError(f"config's n_embd ({d}) is not a multiple of n_head ({heads})")
    r.used.add("activation_function")
    return dict(
        d_model=d,
        n_layers=r.whole("n_layer"),
        n_heads=heads,
        n_kv_heads=heads,
        head_dim=d // heads,
        d_ff=r.whole("n_inner", 4 * d),
        mlp="gelu",
        vocab=r.whole("vocab_size"),
        tied_embeddings=True,
        linear_bias=True,
        norm="layernorm",
        learned_positions=r.whole("n_positions"),
    )


def _gpt_neox(r: Reader) -> dict:
    d = r.whole("hidden_size")
    r.used.add("hidden_act")
    if r.config.get("attention_bias") is False:
        raise ValueError(
            "config's attention_bias False is not modelled for gpt_neox (its counts assume biases on every linear "
            "layer)"
        )
    r.used.add("attention_bias")
    return dict(
        d_model=d,
        n_layers=r.whole("num_hidden_layers"),
        **_heads(r, d),
        d_ff=r.whole("intermediate_size"),
        mlp="gelu",
        vocab=r.whole("vocab_size"),
        norm="layernorm",
        linear_bias=True,
        tied_embeddings=r.flag("tie_word_embeddings", False),
    )


def read_family(r: Reader) -> dict:
    """The ModelShape fields of one language model's config (its ``model_type`` one of ``FAMILIES``)."""
    readers: dict[str, Callable[[Reader], dict]] = {
        "falcon": _falcon,
        "RefinedWebModel": _falcon,
        "RefinedWeb": _falcon,
        "gptj": _gptj,
        "starcoder2": _starcoder2,
        "gpt2": _gpt2,
        "gpt_neox": _gpt_neox,
    }
    if r.family not in FAMILIES:
        raise ValueError(f"config's text model_type must be one of {FAMILIES}, got {r.family!r}")
    return readers.get(r.family, _llama_like)(r)


def _patches(family: str, image: int, patch: int) -> int:
    """Patches along one side of an image: ``image // patch``, at least one, else a ValueError."""
    if image < patch:
        raise ValueError(
            f"config's {family} vision_config.image_size={image} is smaller than its patch_size={patch}: no patches"
        )
    return image // patch


def _siglip(outer: Reader, text_only: bool, d_text: int) -> int:
    """Gemma 3's vision tower (SigLIP: patch and position embeddings, pre-norm blocks of attention and GELU MLP with
    biases, a last LayerNorm) and its projection into the text model (a matrix and a norm)."""
    if text_only:
        outer.used.add("vision_config")
        return 0
    vision = outer._get("vision_config", KeyError)
    v = Reader(vision, "gemma3 vision_config")
    h, width, layers = v.whole("hidden_size"), v.whole("intermediate_size"), v.whole("num_hidden_layers")
    patch, image, channels = v.whole("patch_size"), v.whole("image_size"), v.whole("num_channels", 3)
    v.whole("num_attention_heads")
    if v.flag("vision_use_head", False):
        raise ValueError("config's vision_config.vision_use_head true is not modelled for 'gemma3'")
    embeddings = channels * patch * patch * h + h + _patches("gemma3", image, patch) ** 2 * h
    block = 4 * (h * h + h) + 2 * 2 * h + (h * width + width) + (width * h + h)
    return embeddings + layers * block + 2 * h + h * d_text + h


def _llama4_vision(outer: Reader, text_only: bool, d_text: int) -> int:
    """Llama 4's vision tower (a class token, patch and position embeddings, LayerNorms before and after, blocks of
    attention and GELU MLP with biases), its pixel-shuffle adapter (two matrices) and the projection into the
    text model."""
    if text_only:
        outer.used.add("vision_config")
        return 0
    vision = outer._get("vision_config", KeyError)
    v = Reader(vision, "llama4 vision_config")
    h, width, layers = v.whole("hidden_size"), v.whole("intermediate_size"), v.whole("num_hidden_layers")
    patch, image, channels = v.whole("patch_size"), v.whole("image_size"), v.whole("num_channels", 3)
    into, out, projected = v.whole("projector_input_dim"), v.whole("projector_output_dim"), v.whole("vision_output_dim")
    v.whole("num_attention_heads")
    embeddings = h + (_patches("llama4", image, patch) ** 2 + 1) * h + channels * patch * patch * h + 2 * 2 * h
    block = 4 * (h * h + h) + (h * width + width) + (width * h + h) + 2 * 2 * h
    adapter = width * into + out * out
    projector = projected * d_text + (d_text if v.flag("multi_modal_projector_bias", False) else 0)
    return embeddings + layers * block + adapter + projector


MULTIMODAL = {"gemma3": ("gemma3_text", _siglip), "llama4": ("llama4_text", _llama4_vision)}
"""Configs that nest a language model's config in ``text_config``: its default model_type and what counts the
vision tower."""
