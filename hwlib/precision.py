"""The dtypes of a step: weights, KV cache, activations and matmuls, in one record, and the common bundles.

Weight-only quantization (int8, int4 weights) stores the weights small but multiplies in bf16; fp8 and fp4 run the
matmuls at their own peak. A ``Precision`` unpacks as keyword arguments (``**precision``), so the functions that take
``weight_dtype=``, ``kv_dtype=``, ``activation_dtype=`` and ``compute_dtype=`` take a bundle whole. Chapters
:ref:`ch-serving` and :ref:`ch-kv-cache`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType

from hwlib._checks import describe
from hwlib.units import BYTES_PER_ELEMENT


@dataclass(frozen=True)
class Precision(Mapping):
    """The dtype of the weights as stored, of the KV cache, of the activations between kernels and of the
    matmuls (whose peak prices them). Keys of ``hw.units.BYTES_PER_ELEMENT``."""

    weight_dtype: str = "bf16"
    kv_dtype: str = "bf16"
    activation_dtype: str = "bf16"
    compute_dtype: str = "bf16"

    def __post_init__(self) -> None:
        for name in _ROLES:
            value = getattr(self, name)
            if value not in BYTES_PER_ELEMENT:
                raise ValueError(f"Precision.{name} must be one of {tuple(BYTES_PER_ELEMENT)}, got {describe(value)}")

    def __getitem__(self, name: str) -> str:
        if name not in _ROLES:
            raise KeyError(f"a Precision has {_ROLES}, not {name!r}")
        return getattr(self, name)

    def __iter__(self) -> Iterator[str]:
        return iter(_ROLES)

    def __len__(self) -> int:
        return len(_ROLES)


_ROLES = tuple(field.name for field in fields(Precision))

PRECISIONS = MappingProxyType(
    {
        "bf16": Precision(),
        "fp16": Precision("fp16", "fp16", "fp16", "fp16"),
        "int8 weights": Precision(weight_dtype="int8"),
        "int8 weights and KV": Precision(weight_dtype="int8", kv_dtype="int8"),
        "fp8": Precision("fp8", "fp8", "fp8", "fp8"),
        "fp8, bf16 KV": Precision("fp8", "bf16", "fp8", "fp8"),
        "int4 weights, int8 KV": Precision(weight_dtype="int4", kv_dtype="int8"),
        "fp4, fp8 KV": Precision("fp4", "fp8", "fp4", "fp4"),
        "nvfp4, fp8 KV": Precision("nvfp4", "fp8", "nvfp4", "nvfp4"),
        "mxfp4, fp8 KV": Precision("mxfp4", "fp8", "mxfp4", "mxfp4"),
    }
)
"""Common serving precisions, each a ``Precision`` (pass one whole as ``**hw.PRECISIONS["fp8"]``). "fp4" counts the
4-bit values alone; the formats engines ship, "nvfp4" and "mxfp4", add their blocks' scales
(``hw.units.BLOCK_SCALED``)."""


def as_precision(precision: object, **dtypes: str) -> Precision:
    """``precision`` (an ``hw.Precision``, a key of ``hw.PRECISIONS``, or None: the ``dtypes`` given one by one) as
    a ``Precision``, else a ValueError or TypeError naming it."""
    if precision is None:
        return Precision(**{name: dtypes[name] for name in _ROLES if name in dtypes})
    if isinstance(precision, Precision):
        return precision
    if isinstance(precision, str):
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {tuple(PRECISIONS)}, got {describe(precision)}")
        return PRECISIONS[precision]
    raise TypeError(f"precision must be an hw.Precision, a key of hw.PRECISIONS or None, got {describe(precision)}")
