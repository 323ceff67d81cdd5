"""Read a Hugging Face ``config.json`` into the fields of a :class:`~hwlib.data.records.model_shape.ModelShape`.

``FAMILIES`` lists the ``model_type`` values read; each family's keys (the names of the ``transformers``
configuration class of the same name) map to the shape in ``hwlib.data.records.hf_families``. Every key a count
needs is checked: a missing one, a string, a float, NaN, zero or a negative number where a whole number belongs,
an absurd size, or widths the heads do not divide is a one-line ValueError naming the key. ``architectures`` says
what sits on the last hidden state: an LM head, a classifier (``...ForSequenceClassification``) or nothing
(``...Model``); a vision tower is counted where hwlib knows its shape (Gemma 3's SigLIP) and refused by name
otherwise (``text_only=True`` reads the language model alone). A key that would change a count but is not modelled
raises a ValueError naming it; any other key the reader does not use is named in a warning, never dropped silently.
Chapter :ref:`ch-counting`.
"""

from __future__ import annotations

import json
import math
import os
import warnings
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

_HEADS = {"ForCausalLM": "lm", "LMHeadModel": "lm", "ForConditionalGeneration": "lm"}


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


def _load(config: Mapping | str | os.PathLike) -> dict:
    if isinstance(config, (str, os.PathLike)):
        with open(config, encoding="utf-8") as handle:
            config = json.load(handle)
    if not isinstance(config, Mapping):
        raise TypeError(f"config must be a config.json dict or a path to one, got {config!r}")
    return dict(config)


def head_of(config: Mapping) -> tuple[str, int]:
    """What ``architectures`` puts on the last hidden state: ("lm", 0), ("classifier", labels) or ("none", 0)."""
    names = config.get("architectures") or []
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise ValueError(f"config's 'architectures' must be a list of class names, got {names!r}")
    if not names:
        return "lm", 0
    name = names[0]
    for suffix, head in _HEADS.items():
        if name.endswith(suffix):
            return head, 0
    if name.endswith("ForSequenceClassification"):
        labels = config.get("num_labels", len(config.get("id2label") or {}) or 2)
        if isinstance(labels, bool) or not isinstance(labels, int) or labels < 1:
            raise ValueError(f"config's 'num_labels' must be a whole number >= 1, got {labels!r}")
        return "classifier", labels
    if name.endswith("Model"):
        return "none", 0
    raise ValueError(
        f"config's architectures {name!r} is not modelled: hwlib counts a causal LM, a sequence classifier "
        "(...ForSequenceClassification) or a headless ...Model"
    )


def shape_fields(config: Mapping | str | os.PathLike, text_only: bool = False) -> dict:
    """The ModelShape keyword arguments a ``config.json`` gives (see the module docstring)."""
    from hwlib.data.records.hf_families import FAMILIES, MULTIMODAL, read_family

    config = _load(config)
    family = config.get("model_type")
    if family not in FAMILIES and family not in MULTIMODAL:
        raise ValueError(f"config's model_type must be one of {FAMILIES + tuple(MULTIMODAL)}, got {family!r}")
    head, labels = head_of(config)
    outer = None
    if family in MULTIMODAL:
        outer, config = Reader(config, family), config.get("text_config")
        if not isinstance(config, Mapping):
            raise ValueError(f"config has no 'text_config', which the {family!r} family needs")
        config = {**config, "model_type": config.get("model_type", MULTIMODAL[family][0])}
        for key in ("tie_word_embeddings",):
            if key in outer.config and key not in config:
                config[key] = outer.config[key]
        outer.used.update({"text_config", "tie_word_embeddings"})
    reader = Reader(config, config["model_type"])
    reader.used.add("num_labels")  # read by head_of
    fields = read_family(reader)
    if head != "lm":
        fields.update(head=head, n_labels=labels, tied_embeddings=False)
    if outer is not None:
        fields["vision_params"] = MULTIMODAL[family][1](outer, text_only, fields["d_model"])
        unused = reader.unused() + [f"{family}.{key}" for key in outer.unused()]
    else:
        unused = reader.unused()
    if unused:
        warnings.warn(
            f"config keys not used by the ModelShape reader (they change no count it models): {unused}", stacklevel=3
        )
    name = (outer.config if outer is not None else config).get("_name_or_path")
    if name:
        fields["name"] = str(name).rstrip("/").rsplit("/", 1)[-1]
    return fields
