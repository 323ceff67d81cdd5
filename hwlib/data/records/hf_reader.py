"""One Hugging Face ``config.json``'s keys, read with checks that name the key: the reader ``hf_config`` and
``hf_families`` share. Chapter :ref:`ch-counting`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

MAX_SIZE = 2**40
"""The largest width, count or vocabulary a config may give: beyond it a size is a typo, not a model."""

IGNORED = frozenset(
    {
        "_name_or_path",
        "architectures",
        "model_type",
        "torch_dtype",
        "dtype",
        "transformers_version",
        "bos_token_id",
        "eos_token_id",
        "pad_token_id",
        "use_cache",
        "initializer_range",
        "initializer_factor",
        "rms_norm_eps",
        "layer_norm_eps",
        "layer_norm_epsilon",
        "norm_epsilon",
        "rope_theta",
        "rope_scaling",
        "rope_parameters",  # transformers 5's home of rope_theta and rope_scaling
        "rope_local_base_freq",
        "partial_rotary_factor",
        "max_position_embeddings",
        "original_max_position_embeddings",
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
        "output_router_logits",
        "router_aux_loss_coef",
        "router_jitter_noise",
        "aux_loss_alpha",
        "seq_aux",
        "norm_topk_prob",
        "routed_scaling_factor",
        "scoring_func",
        "n_group",
        "topk_group",
        "ep_size",
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
        "rotary_dim",
        "use_parallel_residual",
        "classifier_dropout",
        "rope_type",
        "attention_probs_dropout_prob",
        "hidden_dropout_prob",
        "bias_dropout_fusion",
        "tokenizer_class",
        "torchscript",
        "use_return_dict",
        "auto_map",
        "quantization_config",
        "id2label",
        "label2id",
        "problem_type",
        "attn_scale",
        "attn_temperature_tuning",
        "floor_scale",
        "use_qk_norm",
        "for_llm_compressor",
        "boi_token_index",
        "eoi_token_index",
        "image_token_index",
        "mm_tokens_per_image",
        "alibi",
        "apply_residual_connection_post_layernorm",
        "_attn_implementation_autoset",
    }
)
"""Keys that change no parameter, FLOP or byte count: dtypes, token ids, epsilons, rotary settings, dropout, the
routers' balancing, logit caps, the norm of Llama 4's queries and keys (no weights), image token ids."""


class Reader:
    """One config's keys, read with checks that name the key; remembers which keys were read."""

    def __init__(self, config: Mapping, family: str) -> None:
        self.config, self.family, self.used = dict(config), family, {"model_type"}

    def _get(self, key: str, default: object) -> object:
        self.used.add(key)
        if key in self.config and self.config[key] is not None:
            return self.config[key]
        if default is KeyError:
            raise ValueError(f"config has no {key!r}, which the {self.family!r} family needs")
        return default

    def whole(self, key: str, default: object = KeyError, minimum: int = 1) -> int:
        """A whole number >= ``minimum`` (and at most ``MAX_SIZE``), else a ValueError naming ``key``."""
        value = self._get(key, default)
        if value is default and default is not KeyError:
            return value
        what = f"config's {key!r} must be a whole number >= {minimum}"
        if isinstance(value, bool) or isinstance(value, str):
            raise ValueError(f"{what}, got {value!r} ({type(value).__name__})")
        if isinstance(value, float):
            shown = "NaN" if math.isnan(value) else repr(value)
            raise ValueError(f"{what}, got the float {shown}")
        if not isinstance(value, int) or value < minimum:
            raise ValueError(f"{what}, got {value!r}")
        if value > MAX_SIZE:
            raise ValueError(f"config's {key!r} is {value:,}, more than any model has (at most {MAX_SIZE:,})")
        return value

    def flag(self, key: str, default: bool) -> bool:
        value = self._get(key, default)
        if not isinstance(value, bool):
            raise ValueError(f"config's {key!r} must be true or false, got {value!r}")
        return value

    def text(self, key: str, default: object = KeyError) -> str:
        value = self._get(key, default)
        if not isinstance(value, str):
            raise ValueError(f"config's {key!r} must be a string, got {value!r}")
        return value

    def whole_list(self, key: str, length: int | None = None, default: object = KeyError) -> list[int]:
        value = self._get(key, default)
        if value is default and default is not KeyError:
            return value
        if not isinstance(value, list) or any(isinstance(v, bool) or not isinstance(v, int) for v in value):
            raise ValueError(f"config's {key!r} must be a list of whole numbers, got {value!r}")
        if length is not None and len(value) != length:
            raise ValueError(f"config's {key!r} must have one entry per layer ({length}), got {len(value)}")
        return value

    def absent_or_false(self, *keys: str) -> None:
        """Keys whose True would add weights the counts do not model."""
        for key in keys:
            self.used.add(key)
            if self.config.get(key):
                raise ValueError(
                    f"config's {key} {self.config[key]!r} is not modelled for {self.family!r}: it adds biases the "
                    "counts would miss"
                )

    def unused(self) -> list[str]:
        return sorted(set(self.config) - self.used - IGNORED)
