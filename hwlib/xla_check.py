"""Check the layer model's FLOP count against a compiler: XLA's own count for one transformer layer.

:func:`xla_layer_flops` writes the dense part of one transformer layer in JAX (Q, K, V and
output projections of d x d, an MLP of d x 4d and 4d x d with a GELU between, residual
connections), differentiates a scalar loss that uses every output with ``jax.grad`` with
respect to the weights **and** the input (the input gradient is what the previous layer
needs; a first layer would not), compiles the forward + backward with ``jax.jit`` and reads
the FLOPs that XLA's cost analysis reports (``compiled.cost_analysis()['flops']``, JAX
documentation "Ahead-of-time lowering and compilation").

The token mixing of attention (scores and softmax) is replaced by an element-wise mix of
Q, K and V, so the matmul FLOPs are exactly the 72 d^2 T of ``hw.layer_flops`` and the
difference is element-wise work. The mix multiplies Q by K, so no projection can be folded
into another: the compiler gets no algebraic shortcut a real layer would not offer.

JAX is imported only inside the functions, so ``import hwlib`` does not need it; the layer
is compiled for JAX's default device. Explained in the chapter "The training step as compute and commute".
"""

from __future__ import annotations

import numpy as np

from hwlib._checks import as_real_array
from hwlib.measure import _cost, _jax, _whole

MLP_RATIO = 4
"""MLP hidden width over d, as in 12 d^2 parameters per layer."""


def xla_layer_flops(d: int, T: int, input_gradient: bool = True) -> float:
    """FLOPs that XLA counts for one layer's forward + backward on T tokens of width d (float32).

    ``input_gradient=False`` differentiates with respect to the weights only; XLA then drops
    the input-gradient matmuls of the first projections, which the 72 d^2 T count includes.
    One compilation per call: keep d and T small (a few hundred) for a quick check.
    Chapter "The training step as compute and commute".
    """
    width, tokens = _whole("d", d), _whole("T", T)
    if not isinstance(input_gradient, bool):
        raise TypeError(f"input_gradient must be True or False, got {input_gradient!r}")
    jax, jnp = _jax()

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
    return _cost(compiled).flops


def xla_matmul_flops(d: int, T: int, input_gradient: bool = True) -> float:
    """The layer's matmul FLOPs that ``xla_layer_flops`` should find: 72 d^2 T, less 6 d^2 T without input gradient.

    Forward 2 x 12 d^2 T; backward the same again for weight gradients and for input
    gradients, of which the Q, K and V projections' (3 x 2 d^2 T) go when ``input_gradient`` is False.
    Chapter "The training step as compute and commute".
    """
    width, tokens = _whole("d", d), _whole("T", T)
    full = 72.0 * width**2 * tokens
    return full if input_gradient else full - 6.0 * width**2 * tokens


def compare_with_xla(ds: object, Ts: object) -> "pandas.DataFrame":  # noqa: F821
    """One row per (d, T) pair: hwlib's 72 d^2 T and XLA's count (MFLOP), the gaps, and XLA without the input gradient.

    Columns: "hwlib (MFLOP)", "XLA (MFLOP)", "extra per token per d" ((XLA - hwlib) / (T d),
    FLOPs), "relative gap" (XLA / hwlib - 1), "XLA weights only (MFLOP)", "weights only / hwlib".
    ``ds`` and ``Ts`` are broadcast together; each pair is one compilation.
    Chapter "The training step as compute and commute".
    """
    import pandas as pd

    from hwlib.layer_model import layer_flops

    widths = as_real_array("ds", ds, minimum=0.0, strictly_above=True, integral=True)
    tokens = as_real_array("Ts", Ts, minimum=0.0, strictly_above=True, integral=True)
    try:
        widths, tokens = np.broadcast_arrays(np.atleast_1d(widths), np.atleast_1d(tokens))
    except ValueError as error:
        raise ValueError(f"ds and Ts must broadcast together, got shapes {np.shape(ds)} and {np.shape(Ts)}") from error
    rows = []
    for width, count in zip(widths.astype(int), tokens.astype(int)):  # one XLA compilation per shape
        model = float(layer_flops(width, count))
        xla = xla_layer_flops(width, count)
        weights_only = xla_layer_flops(width, count, input_gradient=False)
        rows.append({
            "d": width, "T": count, "hwlib (MFLOP)": model / 1e6, "XLA (MFLOP)": xla / 1e6,
            "extra per token per d": (xla - model) / (count * width),
            "relative gap": xla / model - 1.0,
            "XLA weights only (MFLOP)": weights_only / 1e6,
            "weights only / hwlib": weights_only / model,
        })
    return pd.DataFrame(rows).set_index(["d", "T"])
