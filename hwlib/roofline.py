"""The roofline model: attainable FLOP/s from arithmetic intensity, and the matmul's counts.

A kernel that performs F FLOPs while moving Q bytes to and from HBM has arithmetic intensity
I = F / Q (FLOP/byte). On a chip with peak pi (FLOP/s) and HBM bandwidth beta (bytes/s) it runs
no faster than min(pi, I beta) (Williams, Waterman and Patterson, "Roofline: an insightful
visual performance model for multicore architectures", CACM 52(4), 2009). The ridge point
I* = pi / beta is the intensity where the two bounds meet. This module is the one place
where peak is divided by bandwidth and where a roofline time is computed.
Explained in the chapter :ref:`ch-rooflines`.
"""

from __future__ import annotations

import numpy as np

from hwlib._checks import Number, broadcast, broadcast_shape, non_negative, positive, scalar_or_array
from hwlib.data.records import Chip, require_chip


def ridge_point(chip: Chip, dtype: str = "bf16") -> float:
    """Peak FLOP/s over HBM bytes/s: the intensity I* (FLOP/byte) where a kernel turns compute-bound.

    Also called the machine's time balance. Chapter :ref:`ch-rooflines`.
    """
    chip = require_chip(chip)
    return chip.peak(dtype) / chip.hbm_bytes_per_s


def attainable_flops_per_s(intensity: Number, chip: Chip, dtype: str = "bf16") -> Number:
    """Roofline bound min(peak, intensity x HBM bandwidth) in FLOP/s, for intensity in FLOP/byte.

    Chapter :ref:`ch-rooflines`.
    """
    chip = require_chip(chip)
    values = non_negative("intensity", intensity, allow_inf=True)
    return scalar_or_array(np.minimum(chip.peak(dtype), values * chip.hbm_bytes_per_s))


def is_compute_bound(intensity: Number, chip: Chip, dtype: str = "bf16") -> bool | np.ndarray:
    """True where ``intensity`` (FLOP/byte) is at or above the ridge point. Chapter :ref:`ch-rooflines`."""
    values = non_negative("intensity", intensity, allow_inf=True)
    result = values >= ridge_point(chip, dtype)
    return bool(result) if result.ndim == 0 else result


def roofline_time_s(flops: Number, n_bytes: Number, chip: Chip, dtype: str = "bf16") -> Number:
    """Lower bound on run time, max(flops / peak, bytes / HBM bandwidth), in seconds.

    Chapter :ref:`ch-rooflines`; the layer model's GEMM phase and the decode bound call it.
    """
    chip = require_chip(chip)
    flop_count = non_negative("flops", flops)
    byte_count = non_negative("n_bytes", n_bytes)
    broadcast_shape(flops=flop_count, n_bytes=byte_count)
    return scalar_or_array(roofline_bound_s(flop_count, byte_count, chip, dtype))


def roofline_bound_s(flops: np.ndarray, n_bytes: np.ndarray, chip: Chip, dtype: str = "bf16") -> np.ndarray:
    """``roofline_time_s`` on arrays already validated by the caller (hwlib's vectorised models)."""
    return np.maximum(flops * (1.0 / chip.peak(dtype)), n_bytes * (1.0 / chip.hbm_bytes_per_s))


def matmul_flops(m: Number, k: Number, n: Number) -> Number:
    """FLOPs of (m x k) @ (k x n): one multiply and one add per term, 2 m k n. Chapter :ref:`ch-rooflines`."""
    rows, inner, cols = broadcast(
        m=positive("m", m, integral=True), k=positive("k", k, integral=True), n=positive("n", n, integral=True)
    )
    return scalar_or_array(2.0 * rows * inner * cols)


def matmul_bytes(
    m: Number,
    k: Number,
    n: Number,
    bytes_per_element: Number = 2,
    *,
    lhs_bytes_per_element: Number | None = None,
    rhs_bytes_per_element: Number | None = None,
    out_bytes_per_element: Number | None = None,
) -> Number:
    """HBM bytes of (m x k) @ (k x n) if each operand is read once and the result written once.

    m k b_lhs + k n b_rhs + m n b_out: the minimum traffic, reached when the working set fits on
    chip. ``bytes_per_element`` sizes all three; the keyword options size one operand each, e.g.
    int8 weights (``rhs_bytes_per_element=1``) against bf16 activations. Chapter :ref:`ch-rooflines`.
    """
    rows, inner, cols, size = broadcast(
        m=positive("m", m, integral=True),
        k=positive("k", k, integral=True),
        n=positive("n", n, integral=True),
        bytes_per_element=positive("bytes_per_element", bytes_per_element),
    )
    lhs, rhs, out = (
        size if value is None else positive(name, value)
        for name, value in (
            ("lhs_bytes_per_element", lhs_bytes_per_element),
            ("rhs_bytes_per_element", rhs_bytes_per_element),
            ("out_bytes_per_element", out_bytes_per_element),
        )
    )
    return scalar_or_array(rows * inner * lhs + inner * cols * rhs + rows * cols * out)


def matmul_intensity(m: Number, k: Number, n: Number, bytes_per_element: Number = 2, **operand_bytes: Number) -> Number:
    """FLOP/byte of (m x k) @ (k x n): 2 m k n / (m k b_lhs + k n b_rhs + m n b_out) (see ``matmul_bytes``).

    For a square matmul of size n in bf16 this is n / 3. Chapter :ref:`ch-rooflines`.
    """
    flops = np.asarray(matmul_flops(m, k, n))
    return scalar_or_array(flops / np.asarray(matmul_bytes(m, k, n, bytes_per_element, **operand_bytes)))


def elementwise_intensity(
    flops_per_element: Number = 1, arrays_touched: Number = 3, bytes_per_element: Number = 2
) -> Number:
    """FLOP/byte of an element-wise op: e.g. ``z = x + y`` does 1 FLOP and touches 3 arrays.

    Chapter :ref:`ch-rooflines`.
    """
    flop_count, arrays, size = broadcast(
        flops_per_element=positive("flops_per_element", flops_per_element),
        arrays_touched=positive("arrays_touched", arrays_touched, integral=True),
        bytes_per_element=positive("bytes_per_element", bytes_per_element),
    )
    return scalar_or_array(flop_count / (arrays * size))
