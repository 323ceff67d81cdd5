"""Read a Hugging Face ``config.json`` into the fields of a :class:`~hwlib.data.records.model_shape.ModelShape`.

Families read: Llama, Mistral, Mixtral, Qwen2, Gemma 2, GPT-2 and GPT-NeoX (their ``model_type``).
Each family's keys are mapped to the shape (the key names are those of the ``transformers``
configuration classes of the same names). A key that would change a count but is not modelled
raises a ValueError naming it; any other key the reader does not use is named in a warning,
never silently dropped. Explained in the chapter :ref:`ch-kv-cache`.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping

GATED_FAMILIES = ("llama", "mistral", "mixtral", "qwen2", "gemma2")
FAMILIES = (*GATED_FAMILIES, "gpt2", "gpt_neox")
"""``model_type`` values the reader knows."""

IGNORED = frozenset(
    {
        "_name_or_path",
        "architectures",
        "model_type",
        "torch_dtype",
        "transformers_version",
        "bos_token_id",
        "eos_token_id",
        "pad_token_id",
        "use_cache",
        "initializer_range",
        "rms_norm_eps",
        "layer_norm_eps",
        "layer_norm_epsilon",
        "rope_theta",
        "rope_scaling",
        "max_position_embeddings",
        "hidden_act",
        "hidden_activation",
        "attention_dropout",
        "hidden_dropout",
        "resid_pdrop",
        "embd_pdrop",
        "attn_pdrop",
        "summary_type",
        "summary_use_proj",
        "summary_activation",
        "summary_proj_to_labels",
        "summary_first_dropout",
        "task_specific_params",
        "sliding_window",
        "use_sliding_window",
        "max_window_layers",
        "output_router_logits",
        "router_aux_loss_coef",
        "router_jitter_noise",
        "pretraining_tp",
        "query_pre_attn_scalar",
        "final_logit_softcapping",
        "attn_logit_softcapping",
        "cache_implementation",
        "n_ctx",
        "scale_attn_weights",
        "reorder_and_upcast_attn",
        "scale_attn_by_inverse_layer_idx",
        "rotary_pct",
        "rotary_emb_base",
        "use_parallel_residual",
        "classifier_dropout",
        "rope_type",
        "attention_probs_dropout_prob",
        "hidden_dropout_prob",
        "bias_dropout_fusion",
        "tokenizer_class",
        "torchscript",
        "use_return_dict",
    }
)
"""Keys that change no parameter, FLOP or byte count (dtypes, token ids, epsilons, rotary settings,
dropout, sliding windows, logit caps)."""


def _load(config: Mapping | str | os.PathLike) -> dict:
    if isinstance(config, (str, os.PathLike)):
        with open(config, encoding="utf-8") as handle:
            config = json.load(handle)
    if not isinstance(config, Mapping):
        raise TypeError(f"config must be a config.json dict or a path to one, got {config!r}")
    return dict(config)


def _take(config: dict, used: set, key: str, default: object = KeyError) -> object:
    used.add(key)
    if key in config and config[key] is not None:
        return config[key]
    if default is KeyError:
        raise ValueError(f"config has no {key!r}, which the {config.get('model_type')!r} family needs")
    return default


def shape_fields(config: Mapping | str | os.PathLike) -> dict:
    """The ModelShape keyword arguments a ``config.json`` gives (see the module docstring)."""
    config = _load(config)
    family = config.get("model_type")
    if family not in FAMILIES:
        raise ValueError(f"config's model_type must be one of {FAMILIES}, got {family!r}")
    used: set = {"model_type"}
    if family in ("gpt2",):
        d = _take(config, used, "n_embd")
        heads = _take(config, used, "n_head")
        fields = dict(
            d_model=d,
            n_layers=_take(config, used, "n_layer"),
            n_heads=heads,
            n_kv_heads=heads,
            head_dim=d // heads,
            d_ff=_take(config, used, "n_inner", None) or 4 * d,
            mlp="gelu",
            vocab=_take(config, used, "vocab_size"),
            tied_embeddings=True,
            linear_bias=True,
            norm="layernorm",
            learned_positions=_take(config, used, "n_positions"),
        )
        used.add("activation_function")
    else:
        d = _take(config, used, "hidden_size")
        heads = _take(config, used, "num_attention_heads")
        fields = dict(
            d_model=d,
            n_layers=_take(config, used, "num_hidden_layers"),
            n_heads=heads,
            n_kv_heads=_take(config, used, "num_key_value_heads", heads),
            head_dim=_take(config, used, "head_dim", d // heads),
            vocab=_take(config, used, "vocab_size"),
        )
        if family == "gpt_neox":
            fields.update(
                d_ff=_take(config, used, "intermediate_size"),
                mlp="gelu",
                norm="layernorm",
                linear_bias=True,
                tied_embeddings=_take(config, used, "tie_word_embeddings", False),
            )
            used.update({"hidden_act", "attention_bias"})
            if config.get("attention_bias") is False:
                raise ValueError(
                    "config's attention_bias False is not modelled for gpt_neox (its counts assume "
                    "biases on every linear layer)"
                )
        else:
            tied_default = family == "gemma2"
            fields.update(
                mlp="gated",
                norm="rmsnorm",
                norms_per_layer=4 if family == "gemma2" else 2,
                tied_embeddings=_take(config, used, "tie_word_embeddings", tied_default),
                qkv_bias=family == "qwen2",
            )
            if family == "mixtral":
                fields.update(
                    n_experts=_take(config, used, "num_local_experts"),
                    experts_per_token=_take(config, used, "num_experts_per_tok"),
                    d_ff_expert=_take(config, used, "intermediate_size"),
                )
            else:
                fields["d_ff"] = _take(config, used, "intermediate_size")
            for key in ("attention_bias", "mlp_bias"):
                used.add(key)
                if config.get(key):
                    raise ValueError(f"config's {key} True is not modelled: it adds biases the counts would miss")
    unused = sorted(set(config) - used - IGNORED)
    if unused:
        warnings.warn(
            f"config keys not used by the ModelShape reader (they change no count it models): {unused}", stacklevel=3
        )
    if "_name_or_path" in config:
        fields["name"] = str(config["_name_or_path"]).rsplit("/", 1)[-1]
    return fields
