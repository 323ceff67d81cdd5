"""Everything document 000 states, and nothing else: its three TPUs, its budget inputs and recipes.

Document 000 is ``000_dfa9af1fd73ea27d.txt``, a notebook on TPU generations and HBM
budgeting that the chapters :ref:`ch-rooflines`, :ref:`ch-hbm-budgets` and
:ref:`ch-kv-cache` reproduce. Each value keeps the document's own spelling in ``quoted``.
"""

from __future__ import annotations

from hwlib.data.records import Chip, ModelShape, TrainingRecipe, cite
from hwlib.units import GB, TERA, GiB

FILE = "000_dfa9af1fd73ea27d.txt"
"""The document's file name, the one place it is spelled."""

_SPECS = cite(f"{FILE} (TPU_SPECS)")
_BUDGET = f"{FILE} (estimate_memory_gib)"


def _tpu(key: str, name: str, hbm_gib: float, bw_gbs: float, bf16_tflops: float) -> Chip:
    return Chip(
        key=key,
        name=name,
        vendor="Google",
        source="doc000",
        hbm=_SPECS(hbm_gib * GiB, "B", f'"hbm_gib": {hbm_gib}'),
        hbm_bandwidth=_SPECS(bw_gbs * GB, "B/s", f'"bw_gbs": {bw_gbs}'),
        peak_flops={"bf16": _SPECS(bf16_tflops * TERA, "FLOP/s", f'"bf16_tflops": {bf16_tflops}')},
    )


CHIPS: tuple[Chip, ...] = (
    _tpu("v5e", "TPU v5e", 16.0, 819.0, 197.0),
    _tpu("v5p", "TPU v5p", 95.0, 2765.0, 459.0),
    _tpu("v6e", "TPU v6e (Trillium)", 32.0, 1600.0, 918.0),
)
"""The notebook's ``TPU_SPECS``."""

RIDGE_DIGITS = 1
"""The notebook rounds ridge points to one decimal."""

USABLE_FRACTION = 0.8
"""Share of HBM the notebook counts as usable."""

MATMUL_SIZE = 1024
"""n of the square bf16 matmul whose intensity the notebook compares with the ridge points."""

SLICE_CHIPS = 4
"""The v5e-4 and v6e-4 slices of its exercises."""

PARAMS_7B = 7e9
"""``params_billions=7.0`` of the notebook's first budget."""
KV_TOKENS_7B = 8192
"""``kv_tokens=8192`` of the notebook's first budget."""
PARAMS_1P5B = 1.5e9
"""``params_billions=1.5`` of the notebook's second budget."""
KV_TOKENS_1P5B = 4096
"""``kv_tokens=4096`` of the notebook's second budget."""

MIXED_BF16 = TrainingRecipe(
    key="doc000_mixed_bf16",
    label="document 000 'mixed bf16'",
    weights=2,
    gradients=4,
    master=4,
    optimizer=8,
    parts={
        "weights": "bf16 weights",
        "gradients": "fp32 gradients",
        "master": "fp32 master weights",
        "optimizer": "fp32 Adam m and v",
    },
    source=f"{_BUDGET}: 'mixed_bf16_train_state' uses 18 bytes per parameter",
    note="The document's label; ZeRO's mixed-precision Adam keeps 16-bit gradients (16 B/param).",
)

_GEOMETRY_NOTE = (
    "Document 000 gives only layers=32, kv_heads=8, head_dim=128 and params_billions; it uses "
    "the same geometry for its 7B and its 1.5B model."
)
_COUNT = cite(f"{_BUDGET} defaults")

MODELS: tuple[ModelShape, ...] = (
    ModelShape(
        key="doc000-7b",
        name="document 000, 7B",
        n_layers=32,
        n_kv_heads=8,
        head_dim=128,
        n_params=_COUNT(PARAMS_7B, "parameters", "params_billions=7.0"),
        source=_BUDGET,
        note=_GEOMETRY_NOTE,
    ),
    ModelShape(
        key="doc000-1.5b",
        name="document 000, 1.5B",
        n_layers=32,
        n_kv_heads=8,
        head_dim=128,
        n_params=_COUNT(PARAMS_1P5B, "parameters", "params_billions=1.5"),
        source=_BUDGET,
        note=_GEOMETRY_NOTE,
    ),
)
"""The KV geometry of ``estimate_memory_gib``, one record per model size it is used for."""
