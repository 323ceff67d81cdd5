"""XLA's own counts: FLOPs and bytes that the compiler reports for the kernels hwlib counts.

:func:`xla_layer_flops` writes the dense part of one transformer layer in JAX (Q, K, V and output
projections of d x d, an MLP of d x 4d and 4d x d with a GELU between, residual connections),
differentiates a scalar loss that uses every output with ``jax.grad`` with respect to the weights
**and** the input, compiles the forward + backward with ``jax.jit`` and reads the FLOPs that XLA's
cost analysis reports (``compiled.cost_analysis()['flops']``, JAX documentation "Ahead-of-time
lowering and compilation"). The token mixing of attention is replaced by an element-wise mix of
Q, K and V, so the matmul FLOPs are exactly the 72 d^2 T of ``hw.layer_flops`` and the difference
is element-wise work; the mix multiplies Q by K, so no projection can be folded into another.
Explained in the chapters :ref:`ch-compute-and-commute` and :ref:`ch-own-roofline`.
"""

from __future__ import annotations

import warnings

from hwlib.layer_model import layer_flops
from hwlib.measure.kernels import (
    XlaCost,
    compiled_cost,
    jax_dtype,
    load_jax,
    matmul_kernel,
    stream_kernel,
    whole_number,
)

MLP_RATIO = 4
"""MLP hidden width over d, as in 12 d^2 parameters per layer."""
QKV_INPUT_GRADIENT_D2 = 6.0
"""Input-gradient FLOPs per token per d^2 of the Q, K and V projections: 3 x 2."""


def xla_matmul_cost(m: int, k: int, n: int, dtype: str = "fp32") -> XlaCost:
    """XLA's FLOPs and bytes accessed for the matmul ``measure_matmul`` times (compiled, not run).

    For fp32 XLA counts 2 m k n FLOPs and the minimum bytes, as hwlib does; where a backend
    has no native bf16 matmul (CPUs), it also counts the conversions to and from fp32.
    """
    rows, inner, cols = whole_number("m", m), whole_number("k", k), whole_number("n", n)
    jax, _ = load_jax()
    jdtype = jax_dtype(dtype)
    a = jax.ShapeDtypeStruct((rows, inner), jdtype)
    b = jax.ShapeDtypeStruct((inner, cols) if cols > 1 else (inner,), jdtype)
    return compiled_cost(matmul_kernel(dtype).lower(a, b).compile())


def xla_stream_cost(n_elements: int, dtype: str = "fp32") -> XlaCost:
    """XLA's FLOPs and bytes accessed for the stream kernel ``measure_stream`` times."""
    elements = whole_number("n_elements", n_elements)
    jax, _ = load_jax()
    jdtype = jax_dtype(dtype)
    x = jax.ShapeDtypeStruct((elements,), jdtype)
    scalar = jax.ShapeDtypeStruct((), jdtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = stream_kernel().lower(x, scalar, scalar).compile()
    return compiled_cost(compiled)


def xla_layer_flops(d: int, T: int, input_gradient: bool = True) -> float:
    """FLOPs that XLA counts for one layer's forward + backward on T tokens of width d (float32).

    ``input_gradient=False`` differentiates with respect to the weights only; XLA then drops
    the input-gradient matmuls of the first projections, which the 72 d^2 T count includes.
    One compilation per call: keep d and T small (a few hundred) for a quick check.
    Chapter :ref:`ch-compute-and-commute`.
    """
    width, tokens = whole_number("d", d), whole_number("T", T)
    if not isinstance(input_gradient, bool):
        raise TypeError(f"input_gradient must be True or False, got {input_gradient!r}")
    jax, jnp = load_jax()

    def layer(weights, x):
        wq, wk, wv, wo, w1, w2 = weights
        q, k, v = x @ wq, x @ wk, x @ wv
        mixed = q * k + v  # stands in for attention's token mixing: element-wise, so no extra matmul
        h = x + mixed @ wo
        return h + jax.nn.gelu(h @ w1) @ w2

    def loss(weights, x):
        return jnp.mean(layer(weights, x) ** 2)

    shapes = [(width, width)] * 4 + [(width, MLP_RATIO * width), (MLP_RATIO * width, width)]
    weights = tuple(jax.ShapeDtypeStruct(shape, jnp.float32) for shape in shapes)
    x = jax.ShapeDtypeStruct((tokens, width), jnp.float32)
    gradient = jax.grad(loss, argnums=(0, 1) if input_gradient else 0)
    compiled = jax.jit(gradient).lower(weights, x).compile()
    return compiled_cost(compiled).flops


def xla_matmul_flops(d: int, T: int, input_gradient: bool = True) -> float:
    """The layer's matmul FLOPs that ``xla_layer_flops`` should find: 72 d^2 T, less 6 d^2 T without input gradient.

    Forward 2 x 12 d^2 T; backward the same again for weight gradients and for input
    gradients, of which the Q, K and V projections' (3 x 2 d^2 T) go when ``input_gradient`` is False.
    Chapter :ref:`ch-compute-and-commute`.
    """
    width, tokens = whole_number("d", d), whole_number("T", T)
    full = float(layer_flops(width, tokens))
    return full if input_gradient else full - QKV_INPUT_GRADIENT_D2 * width**2 * tokens
