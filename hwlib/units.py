"""Units: bytes, FLOPs and their prefixes, element sizes of dtypes, and formatting.

Decimal (SI) prefixes are powers of 1000 (kB, MB, GB, TB); binary (IEC) prefixes are
powers of 1024 (KiB, MiB, GiB, TiB). Vendors quote bandwidth in decimal units and often
quote HBM capacity as "GB" for what is physically a power of two, so hwlib keeps every
value in plain bytes, bytes/s and FLOP/s and names the prefix only when printing.
Explained in the chapter :ref:`ch-intro` (conventions) and used by every chapter.
"""

from __future__ import annotations

import math
from types import MappingProxyType

from hwlib._checks import Number, as_real_array, one_of, scalar_or_array

kB = 1e3
MB = 1e6
GB = 1e9
TB = 1e12
PB = 1e15

KiB = 2.0**10
MiB = 2.0**20
GiB = 2.0**30
TiB = 2.0**40

BITS_PER_BYTE = 8

GIGA = 1e9
TERA = 1e12
PETA = 1e15

DECIMAL_BYTE_UNITS = MappingProxyType({"B": 1.0, "kB": kB, "MB": MB, "GB": GB, "TB": TB, "PB": PB})
BINARY_BYTE_UNITS = MappingProxyType({"B": 1.0, "KiB": KiB, "MiB": MiB, "GiB": GiB, "TiB": TiB})
BYTE_UNITS = MappingProxyType({**DECIMAL_BYTE_UNITS, **BINARY_BYTE_UNITS})

BLOCK_SCALED = MappingProxyType({"nvfp4": ("fp4", 16, 1.0), "mxfp4": ("fp4", 32, 1.0)})
"""Block-scaled formats: (element dtype, elements per block, bytes of each block's scale). NVFP4 scales each block
of 16 E2M1 values by one E4M3 byte (NVIDIA, "Introducing NVFP4 for Efficient and Accurate Low-Precision
Inference", https://developer.nvidia.com/blog/introducing-nvfp4-for-efficient-and-accurate-low-precision-inference/,
2025-06-24, read 2026-12-06; its one FP32 scale per tensor is left out); MXFP4 each block of 32 by one E8M0 byte
(Open Compute Project, "OCP Microscaling Formats (MX) Specification" v1.0, 2023-09, Sec. 5). Chapter
:ref:`ch-serving`."""
_ELEMENT_BYTES = {"fp32": 4.0, "tf32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "fp4": 0.5, "int4": 0.5}
BYTES_PER_ELEMENT = MappingProxyType(
    {
        **_ELEMENT_BYTES,
        **{name: _ELEMENT_BYTES[element] + scale / block for name, (element, block, scale) in BLOCK_SCALED.items()},
    }
)
"""Storage size of one element of each dtype, in bytes (tf32 is stored as fp32; a block-scaled format's share of
its block's scale included: nvfp4 0.5625, mxfp4 0.53125)."""


def element_dtype(dtype: str) -> str:
    """The dtype whose matmul peak and efficiency price ``dtype``: a block-scaled format's element dtype (its
    tensor cores multiply the 4-bit values and apply the scales on the fly), else ``dtype`` itself."""
    return BLOCK_SCALED[dtype][0] if dtype in BLOCK_SCALED else dtype


def dtype_bytes(dtype: str) -> float:
    """Bytes per element of ``dtype`` (one of ``BYTES_PER_ELEMENT``); used in every chapter."""
    return BYTES_PER_ELEMENT[one_of("dtype", dtype, BYTES_PER_ELEMENT)]


def convert_bytes(n_bytes: Number, unit: str) -> Number:
    """``n_bytes`` expressed in ``unit`` (one of ``BYTE_UNITS``, e.g. "GiB" or "GB")."""
    values = as_real_array("n_bytes", n_bytes, minimum=0.0, allow_inf=True)
    return scalar_or_array(values / BYTE_UNITS[one_of("unit", unit, BYTE_UNITS)])


_SI_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))
_BINARY_PREFIXES = ((TiB, "Ti"), (GiB, "Gi"), (MiB, "Mi"), (KiB, "Ki"), (1.0, ""))
_SMALL_PREFIXES = ((1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p"), (1e-15, "f"), (1e-18, "a"))
COUNT_UNITS = (
    "1",
    "tokens",
    "parameters",
    "chips",
    "links",
    "sequences",
    "elements",
    "steps",
    "B/parameter",
    "tokens/s",
    "FLOP/B",
)
"""Units ``format_quantity`` writes as plain numbers, not with an SI prefix."""


def _format(value: object, name: str, unit: str, prefixes: tuple, digits: int) -> str:
    number = float(as_real_array(name, value, minimum=0.0, allow_inf=True))
    if number == float("inf"):
        return f"inf {unit}"
    scale, prefix = next(((s, p) for s, p in prefixes if number >= s), prefixes[-1])
    return f"{format_number(number / scale, digits)} {prefix}{unit}"


def format_bytes(n_bytes: float, *, binary: bool = True, digits: int = 3) -> str:
    """'16 GiB' (``binary=True``) or '17.2 GB': ``digits`` significant figures."""
    prefixes = _BINARY_PREFIXES if binary else _SI_PREFIXES
    return _format(n_bytes, "n_bytes", "B", prefixes, digits)


def format_bytes_per_s(bytes_per_s: float, *, digits: int = 3) -> str:
    """Bandwidth with a decimal prefix, e.g. '819 GB/s'."""
    return _format(bytes_per_s, "bytes_per_s", "B/s", _SI_PREFIXES, digits)


def format_flops_per_s(flops_per_s: float, *, digits: int = 3) -> str:
    """Compute rate with a decimal prefix, e.g. '197 TFLOP/s'."""
    return _format(flops_per_s, "flops_per_s", "FLOP/s", _SI_PREFIXES, digits)


def format_flops(flops: float, *, digits: int = 3) -> str:
    """A FLOP count with a decimal prefix, e.g. '2.15 GFLOP'."""
    return _format(flops, "flops", "FLOP", _SI_PREFIXES, digits)


def format_seconds(seconds: float, *, digits: int = 3) -> str:
    """A duration as 's', 'ms', 'µs' or 'ns', e.g. '1.31 ms'."""
    value = float(as_real_array("seconds", seconds, minimum=0.0))
    units = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))
    for index, (scale, unit) in enumerate(units):
        if value >= scale:
            if index and round(value / scale, digits - 3) >= 1000:  # 0.9997 s is '1 s', not '1,000 ms'
                scale, unit = units[index - 1]
            return f"{format_number(value / scale, digits)} {unit}"
    return f"{format_number(value / 1e-9, digits)} ns" if value else "0 ns"


def format_number(value: float, digits: int = 3) -> str:
    """A number for people: ``digits`` significant figures, thousands separators, never an exponent
    ('65,500', '3.14', '0.0123'). Used by the chapters' tables."""
    number = float(as_real_array("value", value))
    if number == 0 or number != number or abs(number) == float("inf"):
        return f"{number:g}"
    magnitude = math.floor(math.log10(abs(number)))
    if magnitude >= digits - 1:
        return f"{round(number, digits - 1 - magnitude):,.0f}"
    return f"{number:,.{digits - 1 - magnitude}f}".rstrip("0").rstrip(".")


def format_quantity(value: float, unit: str, digits: int = 3) -> str:
    """A value in an SI unit with a decimal prefix ('819 GB/s', '100 fJ/bit/mm'); counts stay plain numbers
    ('70.6 billion parameters', '8 links'). Used where records print themselves."""
    number = float(as_real_array("value", value, minimum=0.0))
    if unit in COUNT_UNITS:
        shown = f"{number / 1e9:.{digits}g} billion" if number >= 1e9 else format_number(number, digits)
        return shown if unit == "1" else f"{shown} {unit}"
    if 0 < number < 1:
        scale, prefix = next(((s, p) for s, p in _SMALL_PREFIXES if number >= s), _SMALL_PREFIXES[-1])
        return f"{format_number(number / scale, digits)} {prefix}{unit}"
    return _format(number, "value", unit, _SI_PREFIXES, digits)
