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
import os
import warnings
from collections.abc import Mapping

from hwlib.data.records.hf_families import FAMILIES, MULTIMODAL, read_family
from hwlib.data.records.hf_reader import IGNORED, MAX_SIZE, Reader

__all__ = ["IGNORED", "MAX_SIZE", "Reader", "head_of", "shape_fields"]

_HEADS = {"ForCausalLM": "lm", "LMHeadModel": "lm", "ForConditionalGeneration": "lm"}


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
