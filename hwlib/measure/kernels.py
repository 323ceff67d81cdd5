"""JAX helpers shared by the measuring modules: loading JAX, dtypes, kernels and XLA's cost analysis.

JAX is imported only inside these functions, so ``import hwlib`` neither needs nor loads it.
Explained in the chapter :ref:`ch-own-roofline`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hwlib._checks import as_real_array, one_of

MEASURE_DTYPES = ("fp32", "bf16")
"""dtypes the measuring functions accept (hwlib's names; JAX's float32 and bfloat16)."""


def load_jax() -> tuple:
    """(jax, jax.numpy), imported on first use."""
    import jax
    import jax.numpy as jnp

    return jax, jnp


def jax_dtype(dtype: str) -> object:
    """JAX's dtype for hwlib's ``dtype`` name (one of ``MEASURE_DTYPES``)."""
    one_of("dtype", dtype, MEASURE_DTYPES)
    _, jnp = load_jax()
    return {"fp32": jnp.float32, "bf16": jnp.bfloat16}[dtype]


def whole_number(name: str, value: object) -> int:
    """``value`` as one whole number >= 1 (one compilation per shape), else a clear error naming ``name``."""
    array = as_real_array(name, value, minimum=0.0, strictly_above=True, integral=True)
    if array.ndim:
        raise TypeError(f"{name} must be one whole number (one compilation per shape), got {value!r}")
    return int(array)


def matmul_kernel(dtype: str) -> Callable:
    """The jitted matmul: fp32 at full fp32 precision (GPUs would otherwise use TF32 and TPUs bf16
    passes, which are other dtypes' peaks); bf16 at the backend's default."""
    jax, _ = load_jax()
    precision = jax.lax.Precision.HIGHEST if dtype == "fp32" else jax.lax.Precision.DEFAULT
    return jax.jit(lambda a, b: jax.numpy.matmul(a, b, precision=precision))


def stream_kernel() -> Callable:
    """y = a x + b, jitted with the input buffer donated to the output (updated in place)."""
    jax, _ = load_jax()
    return jax.jit(lambda x, a, b: x * a + b, donate_argnums=0)


@dataclass(frozen=True)
class XlaCost:
    """What XLA's cost analysis reports for one compiled kernel: FLOPs and bytes accessed."""

    flops: float
    bytes_accessed: float


def compiled_cost(compiled: object) -> XlaCost:
    """FLOPs and bytes accessed of a compiled computation: a dict, or (older JAX) a list of dicts."""
    cost = compiled.cost_analysis()
    entries = cost if isinstance(cost, (list, tuple)) else [cost]
    if not entries or any(not isinstance(entry, dict) for entry in entries):
        raise RuntimeError(f"this JAX backend gives no cost analysis (got {cost!r})")
    return XlaCost(
        flops=float(sum(entry.get("flops", 0.0) for entry in entries)),
        bytes_accessed=float(sum(entry.get("bytes accessed", 0.0) for entry in entries)),
    )
