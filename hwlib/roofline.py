"""The roofline model: attainable FLOP/s from arithmetic intensity, and the matmul's counts.

A kernel that performs F FLOPs while moving B bytes to and from HBM has arithmetic
intensity I = F / B (FLOP/byte). On a chip with peak P (FLOP/s) and HBM bandwidth W
(bytes/s) it runs no faster than min(P, I W) (Williams, Waterman and Patterson, "Roofline:
an insightful visual performance model for multicore architectures", CACM 52(4), 2009).
The ridge point P / W is the intensity where the two bounds meet.
Explained in the chapter "Rooflines and ridge points".
"""

from __future__ import annotations

import numpy as np

from hwlib._checks import Number, broadcast, non_negative, positive, scalar_or_array
from hwlib.hardware import Chip, require_chip


def ridge_point(chip: Chip, dtype: str = "bf16") -> float:
    """Peak FLOP/s over HBM bytes/s: the intensity (FLOP/byte) where a kernel turns compute-bound."""
    chip = require_chip(chip)
    return chip.peak(dtype) / chip.hbm_bytes_per_s


def attainable_flops_per_s(intensity: Number, chip: Chip, dtype: str = "bf16") -> Number:
    """Roofline bound min(peak, intensity x HBM bandwidth) in FLOP/s, for intensity in FLOP/byte."""
    chip = require_chip(chip)
    values = non_negative("intensity", intensity, allow_inf=True)
    return scalar_or_array(np.minimum(chip.peak(dtype), values * chip.hbm_bytes_per_s))


def is_compute_bound(intensity: Number, chip: Chip, dtype: str = "bf16") -> bool | np.ndarray:
    """True where ``intensity`` (FLOP/byte) is at or above the ridge point: the peak FLOP/s is the limit."""
    values = non_negative("intensity", intensity, allow_inf=True)
    result = values >= ridge_point(chip, dtype)
    return bool(result) if result.ndim == 0 else result


def roofline_time_s(flops: Number, n_bytes: Number, chip: Chip, dtype: str = "bf16") -> Number:
    """Lower bound on run time, max(flops / peak, bytes / HBM bandwidth), in seconds."""
    chip = require_chip(chip)
    flop_count, byte_count = broadcast(flops=non_negative("flops", flops), n_bytes=non_negative("n_bytes", n_bytes))
    return scalar_or_array(np.maximum(flop_count / chip.peak(dtype), byte_count / chip.hbm_bytes_per_s))


def matmul_flops(m: Number, k: Number, n: Number) -> Number:
    """FLOPs of (m x k) @ (k x n): one multiply and one add per term, 2 m k n."""
    rows, inner, cols = broadcast(
        m=positive("m", m, integral=True), k=positive("k", k, integral=True), n=positive("n", n, integral=True)
    )
    return scalar_or_array(2.0 * rows * inner * cols)


def matmul_bytes(m: Number, k: Number, n: Number, bytes_per_element: Number = 2) -> Number:
    """HBM bytes of (m x k) @ (k x n) if each operand is read once and the result written once.

    (m k + k n + m n) x bytes_per_element: the minimum traffic, reached when the working
    set fits in on-chip memory.
    """
    rows, inner, cols, size = broadcast(
        m=positive("m", m, integral=True),
        k=positive("k", k, integral=True),
        n=positive("n", n, integral=True),
        bytes_per_element=positive("bytes_per_element", bytes_per_element),
    )
    return scalar_or_array(size * (rows * inner + inner * cols + rows * cols))


def matmul_intensity(m: Number, k: Number, n: Number, bytes_per_element: Number = 2) -> Number:
    """FLOP/byte of (m x k) @ (k x n): 2 m k n / ((m k + k n + m n) x bytes_per_element).

    For a square matmul of size n in bf16 this is n / 3.
    """
    return scalar_or_array(np.asarray(matmul_flops(m, k, n)) / np.asarray(matmul_bytes(m, k, n, bytes_per_element)))


def elementwise_intensity(
    flops_per_element: Number = 1, arrays_touched: Number = 3, bytes_per_element: Number = 2
) -> Number:
    """FLOP/byte of an element-wise op: e.g. ``z = x + y`` does 1 FLOP and touches 3 arrays."""
    flop_count, arrays, size = broadcast(
        flops_per_element=positive("flops_per_element", flops_per_element),
        arrays_touched=positive("arrays_touched", arrays_touched, integral=True),
        bytes_per_element=positive("bytes_per_element", bytes_per_element),
    )
    return scalar_or_array(flop_count / (arrays * size))
