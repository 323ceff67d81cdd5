"""Model shapes: layer count, widths, attention heads and KV heads of a few real open models.

Each shape is read from the model's ``config.json`` on huggingface.co (the URL in
``source``, read 2026-11-30). Parameter counts are exact: the sum of the tensor sizes
that the config implies, which ``tests/test_models.py`` recomputes from the shapes and
which match the rounded counts on the model pages ("8.03B" etc.). The TPU notebook's own
geometry (document 000) is kept as two records, one per model size it uses it for.
Explained in the chapter "KV-cache precision"; used by "HBM budgets for training".
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from hwlib._checks import Number
from hwlib.hardware import READ_ON, Sourced
from hwlib.memory import kv_cache_bytes
from hwlib.units import dtype_bytes


@dataclass(frozen=True)
class ModelShape:
    """The shape of one decoder-only transformer, as its source gives it.

    ``hidden`` and ``heads`` are None where the source gives only the KV geometry
    (document 000). ``n_params`` is a :class:`hwlib.hardware.Sourced` count (unit
    'parameters').
    """

    key: str
    name: str
    layers: int
    hidden: int | None
    heads: int | None
    kv_heads: int
    head_dim: int
    n_params: Sourced
    source: str
    read_on: str = READ_ON
    note: str = ""

    def __post_init__(self) -> None:
        for name in ("layers", "kv_heads", "head_dim"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"ModelShape.{name} must be a positive int, got {value!r}")
        if self.heads is not None and self.heads % self.kv_heads:
            raise ValueError(f"ModelShape.heads ({self.heads}) must be a multiple of kv_heads ({self.kv_heads})")

    @property
    def params(self) -> float:
        """Parameter count."""
        return float(self.n_params.value)

    @property
    def attention(self) -> str:
        """'MHA' (one KV head per query head), 'MQA' (one KV head), 'GQA' (between), or 'not stated'."""
        if self.heads is None:
            return "not stated"
        if self.kv_heads == self.heads:
            return "MHA"
        return "MQA" if self.kv_heads == 1 else "GQA"

    def kv_bytes_per_token(self, dtype: str = "bf16") -> float:
        """KV-cache bytes one token adds: 2 x layers x kv_heads x head_dim x element size."""
        return kv_cache_bytes(1, self.layers, self.kv_heads, self.head_dim, dtype)

    def kv_bytes(self, tokens: Number, dtype: str = "bf16", batch: Number = 1) -> Number:
        """KV-cache bytes of ``batch`` sequences of ``tokens`` tokens (see hw.kv_cache_bytes)."""
        return kv_cache_bytes(tokens, self.layers, self.kv_heads, self.head_dim, dtype, batch)

    def weight_bytes(self, dtype: str = "bf16") -> float:
        """Bytes of the weights stored in ``dtype`` (quantization scales not counted)."""
        return self.params * dtype_bytes(dtype)

    def __str__(self) -> str:
        return (f"{self.name}: {self.layers} layers, {self.kv_heads} KV heads x {self.head_dim}, "
                f"{self.attention}, {self.params / 1e9:.2f}B params [{self.source}]")


def _hf(repo: str) -> str:
    return f"https://huggingface.co/{repo}/blob/main/config.json"


def _count(value: float, quoted: str, source: str, note: str = "") -> Sourced:
    return Sourced(float(value), "parameters", source, READ_ON, quoted, note)


_SHAPE_NOTE = "Exact sum of the tensor sizes implied by config.json (recomputed in tests)."
_DOC000 = "000_dfa9af1fd73ea27d.txt (estimate_memory_gib defaults)"
_DOC000_NOTE = (
    "Document 000 gives only layers=32, kv_heads=8, head_dim=128 and params_billions; it "
    "uses the same geometry for its 7B and its 1.5B model."
)

MODELS: tuple[ModelShape, ...] = (
    ModelShape("llama-2-7b", "Llama 2 7B", 32, 4096, 32, 32, 128,
               _count(6_738_415_616, "6.74B params", _hf("meta-llama/Llama-2-7b-hf"), _SHAPE_NOTE),
               _hf("meta-llama/Llama-2-7b-hf"),
               note="num_key_value_heads = num_attention_heads = 32: multi-head attention."),
    ModelShape("llama-3-8b", "Llama 3 8B", 32, 4096, 32, 8, 128,
               _count(8_030_261_248, "8.03B params", _hf("meta-llama/Meta-Llama-3-8B"), _SHAPE_NOTE),
               _hf("meta-llama/Meta-Llama-3-8B"),
               note="num_key_value_heads 8: grouped-query attention, 4 query heads per KV head."),
    ModelShape("mistral-7b", "Mistral 7B", 32, 4096, 32, 8, 128,
               _count(7_241_732_096, "7.24B params", _hf("mistralai/Mistral-7B-v0.1"), _SHAPE_NOTE),
               _hf("mistralai/Mistral-7B-v0.1"),
               note="v0.1; its 4096-token sliding window caps the cache per layer, which this "
               "record does not model (the cache grows with context here)."),
    ModelShape("llama-3-70b", "Llama 3 70B", 80, 8192, 64, 8, 128,
               _count(70_553_706_496, "70.6B params", _hf("meta-llama/Meta-Llama-3-70B"), _SHAPE_NOTE),
               _hf("meta-llama/Meta-Llama-3-70B"),
               note="num_key_value_heads 8: grouped-query attention, 8 query heads per KV head."),
    ModelShape("falcon-7b", "Falcon 7B", 32, 4544, 71, 1, 64,
               _count(6_921_720_704, "6.92B params", _hf("tiiuae/falcon-7b"), _SHAPE_NOTE),
               _hf("tiiuae/falcon-7b"),
               note="multi_query true: one KV head shared by 71 query heads of size 64."),
    ModelShape("qwen2.5-1.5b", "Qwen2.5 1.5B", 28, 1536, 12, 2, 128,
               _count(1_543_714_304, "1.54B params", _hf("Qwen/Qwen2.5-1.5B"), _SHAPE_NOTE),
               _hf("Qwen/Qwen2.5-1.5B"),
               note="num_key_value_heads 2: grouped-query attention, 6 query heads per KV head."),
    ModelShape("gpt2-xl", "GPT-2 XL (1.5B)", 48, 1600, 25, 25, 64,
               _count(1_557_611_200, "1.56B params", _hf("openai-community/gpt2-xl"), _SHAPE_NOTE),
               _hf("openai-community/gpt2-xl"),
               note="n_layer 48, n_embd 1600, n_head 25: multi-head attention; 1024-token context."),
    ModelShape("doc000-7b", "document 000, 7B", 32, None, None, 8, 128,
               _count(7e9, "params_billions=7.0", _DOC000), _DOC000, note=_DOC000_NOTE),
    ModelShape("doc000-1.5b", "document 000, 1.5B", 32, None, None, 8, 128,
               _count(1.5e9, "params_billions=1.5", _DOC000), _DOC000, note=_DOC000_NOTE),
)
"""Every model shape hwlib knows, each with its source."""


def model(name: str) -> ModelShape:
    """The shape of model ``name`` (its key, e.g. "llama-3-8b", or its name, "Llama 3 8B").

    Unknown names raise KeyError with close matches. Used in the chapters "KV-cache
    precision" and "HBM budgets for training".
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a model name string, got {name!r}")
    wanted = name.strip().lower().replace(" ", "-")
    for record in MODELS:
        if wanted in (record.key, record.name.lower().replace(" ", "-")):
            return record
    keys = [record.key for record in MODELS]
    close = difflib.get_close_matches(wanted, keys, n=3, cutoff=0.4)
    hint = f"; did you mean {close}?" if close else ""
    raise KeyError(f"unknown model {name!r}{hint} Known models: {keys}")
