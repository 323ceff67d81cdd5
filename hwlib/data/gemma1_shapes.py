"""Gemma 1 (2B and 7B), as config.json and the Gemma paper give them, in the catalogue before Gemma 2
(``model_shapes``). Chapter :ref:`ch-counting`.
"""

from __future__ import annotations

from hwlib.data.records import ModelShape, cite

_MIRROR = "Config values read from a copy of config.json ({}); the page itself was not among the stored copies."


READ = "2026-12-06"
_COUNT_SOURCE = (
    "Gemma Team, 'Gemma: Open Models Based on Gemini Research and Technology', arXiv:2403.08295, Table 2 "
    "(non-embedding parameters)"
)


def _shape(key: str, name: str, n_params: float, quoted: str, note: str, *, count_note: str, **fields) -> ModelShape:
    source = f"https://huggingface.co/google/{key}/blob/main/config.json"
    count = cite(_COUNT_SOURCE, READ)(float(n_params), "parameters", quoted, count_note)
    return ModelShape(key=key, name=name, n_params=count, source=source, read_on=READ, note=note, **fields)


_GEMMA1 = dict(head_dim=256, vocab=256000, tied_embeddings=True, mlp="gated", norm="rmsnorm")
_GEMMA1_COPY = (
    "NVIDIA-NeMo/Megatron-Bridge@588d3bb, tests/unit_tests/models/gemma/test_gemma_bridge.py, gemma_{0}_config_dict; "
    "{1}, _name_or_path google/gemma-{0}, agrees"
)
_GEMMA1_COUNT = (
    "Non-embedding parameters: params() less the 256000 x {0} embedding. Table 2's embedding count, {1}, is "
    "256,128 x {0}: Table 1's vocabulary and the rows of Google's JAX checkpoint, 128 more than config.json's "
    "vocab_size 256000, which the shape keeps (the Hugging Face checkpoint's rows)."
)


GEMMA1_SHAPES: tuple[ModelShape, ...] = (
    _shape(
        "gemma-2b",
        "Gemma 2B",
        1_981_884_416,
        "1,981,884,416 non-embedding",
        "Gemma 1: one KV head (multi-query attention, 8 query heads of 256); GeGLU MLP (Table 1's 'Feedforward hidden "
        "dims' 32768 counts the gate and up widths: intermediate_size 16384); two RMSNorms per layer; tied "
        "embeddings (GemmaConfig's default; the config has no tie_word_embeddings key); no sliding window. "
        + _MIRROR.format(_GEMMA1_COPY.format("2b", "a pasted verbatim copy")),
        count_note=_GEMMA1_COUNT.format("2048", "524,550,144"),
        n_layers=18,
        d_model=2048,
        n_heads=8,
        n_kv_heads=1,
        d_ff=16384,
        **_GEMMA1,
    ),
    _shape(
        "gemma-7b",
        "Gemma 7B",
        7_751_248_896,
        "7,751,248,896 non-embedding",
        "Gemma 1: 16 KV heads (multi-head attention); head_dim 256 (16 x 256 = 4096 > d_model 3072); GeGLU MLP "
        "(Table 1's 49152 is twice intermediate_size 24576), two RMSNorms per layer, tied embeddings, as Gemma 2B. "
        + _MIRROR.format(_GEMMA1_COPY.format("7b", "a loaded-config print")),
        count_note=_GEMMA1_COUNT.format("3072", "786,825,216"),
        n_layers=28,
        d_model=3072,
        n_heads=16,
        n_kv_heads=16,
        d_ff=24576,
        **_GEMMA1,
    ),
)
"""Gemma 2B and Gemma 7B."""
