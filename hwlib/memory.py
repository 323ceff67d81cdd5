"""HBM budgets: training state, activations, KV cache, and how many chips hold them.

Every function returns plain bytes (or seconds, or a chip count); chapters convert to GiB
or GB only when printing. The formulas and their sources:

- **Training state** = parameters x bytes per parameter of a recipe (``hw.recipes()``):
  weights + gradients + fp32 master copy + optimizer state. The mixed-precision Adam
  layout 2 + 2 + 12 = 16 bytes is Rajbhandari et al., "ZeRO: Memory Optimizations Toward
  Training Trillion Parameter Models", SC 2020 (arXiv:1910.02054), Sec. 3.1; each recipe
  cites its own source.
- **Activations per transformer layer** after Korthikanti et al., "Reducing Activation
  Recomputation in Large Transformer Models", MLSys 2023 (arXiv:2205.05198), Sec. 4 and
  Table 2: ``s b d (34 + 5 n_h s / d)`` bytes (their h is our d, their a our n_h) with 16-bit activations and 1-byte
  dropout masks,
  and its tensor-parallel, sequence-parallel and recomputation variants (see
  :func:`activation_bytes`).
- **KV cache** = 2 (K and V) x layers x tokens x KV heads x head size x bytes per element
  x batch (Vaswani et al. 2017 for the cached keys and values; Shazeer 2019,
  arXiv:1911.02150, for multi-query attention; Ainslie et al. 2023, arXiv:2305.13245, for
  grouped-query attention).
- **Chips needed** = ceil(bytes / (usable fraction x HBM per chip)); the smallest real
  deployment rounds that up to a slice shape or a whole node (``hw.deployment``).

Capacities are what a program sees (``chip.capacity_bytes``) where a device report is cited.
Explained in the chapters :ref:`ch-hbm-budgets` and :ref:`ch-kv-cache`.
"""

from __future__ import annotations

import numpy as np

from hwlib._checks import Number, as_real_array, broadcast, fraction, non_negative, one_of, positive
from hwlib.data import assumptions, deployment
from hwlib.data import recipe as find_recipe
from hwlib.data.records import Chip, ModelShape, TrainingRecipe, require_chip
from hwlib.data.records.layer_rules import (
    KEPT_ACTIVATION_BYTES,
    RECOMPUTE,
    kept_activation_bytes,
    kv_bytes,
    recomputed_norm_bytes,
)
from hwlib.units import BYTES_PER_ELEMENT, dtype_bytes


def _recipe(recipe: object) -> TrainingRecipe:
    """The TrainingRecipe ``recipe`` names, or a TypeError naming the parameter."""
    if not isinstance(recipe, (str, TrainingRecipe)):
        raise TypeError(f"recipe must be a recipe key such as 'zero_mixed_adam' or a TrainingRecipe, got {recipe!r}")
    return find_recipe(recipe)


def _out(values: np.ndarray) -> Number:
    return float(values) if np.ndim(values) == 0 else values


def training_state_bytes(n_params: Number, recipe: str | TrainingRecipe) -> Number:
    """Bytes of weights, gradients, master copy and optimizer state for ``n_params`` parameters.

    ``recipe`` is a key of ``hw.recipes()`` (e.g. "zero_mixed_adam") or a :class:`~hwlib.data.records.TrainingRecipe`.
    Activations are not included (see :func:`activation_bytes`).
    Explained in the chapter :ref:`ch-hbm-budgets`.
    """
    record = _recipe(recipe)
    return _out(non_negative("n_params", n_params) * record.bytes_per_param)


def training_state_breakdown(n_params: Number, recipe: str | TrainingRecipe) -> dict[str, Number]:
    """Bytes of each part (weights, gradients, master, optimizer) of the training state of ``n_params`` parameters."""
    record = _recipe(recipe)
    params = non_negative("n_params", n_params)
    return {name: _out(params * per_param) for name, per_param in record.breakdown().items()}


# --- activations -------------------------------------------------------------------------


def activation_bytes(
    seq_len: Number,
    batch: Number,
    d: Number | ModelShape,
    n_heads: Number | None = None,
    tensor_parallel: Number = 1,
    sequence_parallel: bool = False,
    recompute: str = "none",
    flash_attention: bool = False,
    dropout: bool | None = None,
) -> Number:
    """Bytes of activations one transformer layer keeps for the backward pass (per chip).

    With ``d`` and ``n_heads``: Korthikanti et al. 2022 (arXiv:2205.05198), Sec. 4 and Table 2, for
    their GPT layer (a GELU MLP of width 4d, multi-head attention, dropout), with s = ``seq_len``,
    b = ``batch`` (micro-batch), n_tp = ``tensor_parallel``, 16-bit activations and 1-byte masks:

    - no parallelism: s b d (34 + 5 n_h s / d)
    - tensor parallel: s b d (10 + 24/n_tp + 5 n_h s / (d n_tp))
    - tensor + sequence parallel: s b d (34/n_tp + 5 n_h s / (d n_tp))
    - selective recompute drops the 5 n_h s / d term (the attention scores, softmax and its
      dropout are recomputed); with sequence parallelism s b d (34/n_tp)
    - full recompute keeps only the layer input, 2 s b d (Table 2); with sequence
      parallelism that input is split too, 2 s b d / n_tp (our extension of the table).
    - ``up-projections`` recompute (DeepSeek-V3, Sec. 3.2.3) keeps neither norm's output, 4 s b d less, and an
      MLA layer keeps its latents in place of its expanded queries, keys and values.

    With a ModelShape in place of ``d``: the same accounting for the model's own structure (its MLP
    kind and width or the experts a token visits, its query and KV widths under GQA, its norms), with
    ``dropout`` False unless asked for (Llama, Qwen and Mixtral train without it); Korthikanti's
    counts are the special case of their GPT shape with ``dropout=True``.

    ``flash_attention=True`` drops the score term as well: a FlashAttention-style kernel (Dao et
    al. 2022, arXiv:2205.14135, Sec. 3.1) never writes the s x s score matrix and recomputes it in
    the backward pass from the output and per-row softmax statistics; those statistics, O(n_h s b)
    values, are neglected beside the O(s b d) terms. The logits are counted by ``logits_bytes``.
    Explained in the chapter :ref:`ch-hbm-budgets`.
    """
    one_of("recompute", recompute, RECOMPUTE)
    for name, flag in (("sequence_parallel", sequence_parallel), ("flash_attention", flash_attention)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False, got {flag!r}")
    if dropout is not None and not isinstance(dropout, bool):
        raise TypeError(f"dropout must be True, False or None (the model's own), got {dropout!r}")
    if isinstance(d, ModelShape):
        model = d
        if n_heads is not None:
            raise TypeError("give a ModelShape or d and n_heads, not both")
        whole, split, scores = model.table().kept_activation_bytes(bool(dropout), recompute)
        width = model.d_model
    else:
        if n_heads is None:
            raise TypeError("n_heads is needed unless d is a ModelShape such as hw.model('llama-3-8b')")
        width, heads = broadcast(d=positive("d", d, integral=True), n_heads=positive("n_heads", n_heads, integral=True))
        if (width % heads != 0).any():
            raise ValueError(f"d must be a multiple of n_heads, got d={d!r}, n_heads={n_heads!r}")
        gpt = dropout is None or dropout  # Korthikanti et al.'s GPT layer, with dropout unless asked otherwise
        whole, split, scores = kept_activation_bytes(width, width, width, heads, 4 * width, "gelu", 2, gpt)
        if recompute == "up-projections":
            whole = whole - recomputed_norm_bytes(width)
    s, b, t = broadcast(
        seq_len=positive("seq_len", seq_len, integral=True),
        batch=positive("batch", batch, integral=True),
        tensor_parallel=positive("tensor_parallel", tensor_parallel, integral=True),
    )
    tokens = s * b
    if recompute == "full":
        return _out(KEPT_ACTIVATION_BYTES * tokens * width / (t if sequence_parallel else 1.0))
    kept = (whole + split) / t if sequence_parallel else whole + split / t
    attended = 0.0 if (recompute == "selective" or flash_attention) else scores * s / t
    return _out(tokens * (kept + attended))


LOGIT_BYTES = 4.0
"""Logits are kept in fp32 for the loss, and so is their gradient."""


def logits_bytes(seq_len: Number, batch: Number, model: ModelShape) -> Number:
    """Bytes of the output logits and their gradient, s b V x 4 bytes each (fp32), kept once per model.

    They are not recomputed by full activation recomputation and can exceed all the layers' kept
    inputs at a large vocabulary. Chapter :ref:`ch-hbm-budgets`.
    """
    if not isinstance(model, ModelShape) or model.vocab is None:
        raise TypeError(f"model must be a ModelShape with a vocabulary such as hw.model('llama-3-8b'), got {model!r}")
    s, b = broadcast(seq_len=positive("seq_len", seq_len, integral=True), batch=positive("batch", batch, integral=True))
    return _out(2 * LOGIT_BYTES * s * b * model.vocab)


# --- KV cache ----------------------------------------------------------------------------


def kv_cache_bytes(
    seq_len: Number,
    n_layers: Number | ModelShape,
    n_kv_heads: Number | None = None,
    head_dim: Number | None = None,
    dtype: str = "bf16",
    batch: Number = 1,
) -> Number:
    """Bytes of cached keys and values: 2 x n_layers x seq_len x n_kv_heads x head_dim x size x batch.

    Give the geometry (``n_layers``, ``n_kv_heads``, ``head_dim``) or a ModelShape in place of
    ``n_layers`` (``hw.kv_cache_bytes(8192, hw.model("llama-3-8b"), dtype="int8")``); a model's windowed layers
    hold at most their window and an MLA layer one latent per token (``ModelShape.kv_bytes``). ``n_kv_heads``
    equals the query heads for multi-head attention (MHA), is 1 for multi-query attention (MQA,
    Shazeer 2019, arXiv:1911.02150) and lies between for grouped-query attention (GQA, Ainslie et al.
    2023, arXiv:2305.13245). ``dtype`` is the cache's element type, one of ``hw.BYTES_PER_ELEMENT``
    (quantization scales are not counted). Explained in the chapter :ref:`ch-kv-cache`.
    """
    one_of("dtype", dtype, BYTES_PER_ELEMENT)
    if isinstance(n_layers, ModelShape):
        if n_kv_heads is not None or head_dim is not None:
            raise TypeError("give a ModelShape or n_layers, n_kv_heads and head_dim, not both")
        tokens, sequences = broadcast(
            seq_len=non_negative("seq_len", seq_len, integral=True), batch=positive("batch", batch, integral=True)
        )
        return _out(np.asarray(n_layers.kv_bytes(tokens, dtype)) * sequences)
    if n_kv_heads is None or head_dim is None:
        raise TypeError(
            "n_kv_heads and head_dim are needed unless n_layers is a ModelShape such as hw.model('llama-3-8b')"
        )
    n, layer, kv, d, batches = broadcast(
        seq_len=non_negative("seq_len", seq_len, integral=True),
        n_layers=positive("n_layers", n_layers, integral=True),
        n_kv_heads=positive("n_kv_heads", n_kv_heads, integral=True),
        head_dim=positive("head_dim", head_dim, integral=True),
        batch=positive("batch", batch, integral=True),
    )
    return _out(kv_bytes(n, layer, kv, d, dtype_bytes(dtype), batches))


# --- capacity ----------------------------------------------------------------------------

_ROUNDING = 1e-12
"""Relative slack so that a total equal to a whole number of chips' usable HBM, up to
floating-point rounding (e.g. 51.2 GiB on 12.8 GiB chips), needs exactly that many."""


def usable_bytes(chip: Chip, usable_fraction: Number = assumptions.USABLE_HBM_FRACTION, n_chips: Number = 1) -> Number:
    """Usable HBM of ``n_chips`` chips: n_chips x usable_fraction x capacity per chip, in bytes.

    The capacity is what a program sees where a device report is cited (``chip.capacity_bytes``);
    the rest is left for the runtime, compiler scratch space and fragmentation.
    Explained in the chapter :ref:`ch-hbm-budgets`.
    """
    record = require_chip(chip)
    share, count = broadcast(
        usable_fraction=fraction("usable_fraction", usable_fraction),
        n_chips=positive("n_chips", n_chips, integral=True),
    )
    return _out(count * share * record.capacity_bytes)


def chips_needed(
    total_bytes: Number, chip: Chip, usable_fraction: Number = assumptions.USABLE_HBM_FRACTION
) -> int | np.ndarray:
    """Fewest chips whose usable HBM holds ``total_bytes``: ceil(bytes / (fraction x HBM)).

    At least 1. Returns an int, or an int array when an argument is an array. The count
    is not necessarily a real deployment size: see :func:`deployment_chips`.
    Explained in the chapter :ref:`ch-hbm-budgets`.
    """
    record = require_chip(chip)
    total, share = broadcast(
        total_bytes=non_negative("total_bytes", total_bytes),
        usable_fraction=fraction("usable_fraction", usable_fraction),
    )
    ratio = total / (share * record.capacity_bytes)
    count = np.maximum(np.ceil(ratio * (1.0 - _ROUNDING)), 1.0).astype(np.int64)
    return int(count) if count.ndim == 0 else count


def deployment_chips(
    total_bytes: Number, chip: Chip, usable_fraction: Number = assumptions.USABLE_HBM_FRACTION
) -> int | np.ndarray:
    """Chips in the smallest real deployment (slice shape or whole nodes) that holds ``total_bytes``.

    :func:`chips_needed` rounded up to the next size of :func:`hw.deployment <hwlib.data.deployment>`; beyond the
    largest single size, to a whole multiple of it. Explained in :ref:`ch-hbm-budgets`.
    """
    needed = np.asarray(chips_needed(total_bytes, chip, usable_fraction))
    sizes = np.array(deployment(chip).sizes, dtype=np.int64)
    index = np.searchsorted(sizes, needed, side="left")
    largest = sizes[-1]
    within = sizes[np.minimum(index, len(sizes) - 1)]
    result = np.where(index < len(sizes), within, -(-needed // largest) * largest).astype(np.int64)
    return int(result) if result.ndim == 0 else result


def deployment_name(n_chips: Number, chip: Chip) -> str | np.ndarray:
    """Name of the deployment of ``n_chips`` chips, e.g. 'v5litepod-16 (4x4)' or '2 × 8-GPU node'.

    ``n_chips`` must be one of the sizes :func:`deployment_chips` returns. Explained in
    the chapter :ref:`ch-hbm-budgets`.
    """
    plan = deployment(chip)
    counts = as_real_array("n_chips", n_chips, minimum=1, integral=True).astype(np.int64)
    sizes = np.array(plan.sizes, dtype=np.int64)
    index = np.minimum(np.searchsorted(sizes, counts), len(sizes) - 1)
    listed = sizes[index] == counts
    multiple = (counts > sizes[-1]) & (counts % sizes[-1] == 0)
    if plan.kind == "node":
        multiple = counts % sizes[-1] == 0
        listed = np.zeros_like(listed)
    if not (listed | multiple).all():
        raise ValueError(
            f"n_chips must be a deployment size of {chip.label} {plan.sizes} "
            f"or a multiple of {plan.largest}, got {n_chips!r}"
        )
    names = np.array([f"{n} ({t})" for n, t in zip(plan.names, plan.topologies)])
    base = names[-1] if plan.kind == "slice" else np.array(f"{sizes[-1]}-GPU node")
    groups = np.char.add(np.char.add((counts // sizes[-1]).astype(str), " × "), base)
    result = np.where(listed, names[index], groups)
    return str(result) if result.ndim == 0 else result


def max_params(capacity_bytes: Number, recipe: str | TrainingRecipe, reserved_bytes: Number = 0.0) -> Number:
    """Largest parameter count whose training state fits ``capacity_bytes`` (usable bytes).

    (capacity - reserved) / bytes per parameter, 0 where nothing fits; ``reserved_bytes``
    holds activations or anything else kept beside the state. Explained in :ref:`ch-hbm-budgets`.
    """
    record = _recipe(recipe)
    capacity, reserved = broadcast(
        capacity_bytes=non_negative("capacity_bytes", capacity_bytes),
        reserved_bytes=non_negative("reserved_bytes", reserved_bytes),
    )
    return _out(np.maximum(capacity - reserved, 0.0) / record.bytes_per_param)


# --- inference capacity: tokens that fit beside the weights ------------------------------


def tokens_that_fit(
    chip: Chip,
    weight_bytes: Number,
    kv_bytes_per_token: Number,
    usable_fraction: Number = assumptions.USABLE_HBM_FRACTION,
    n_chips: Number = 1,
) -> Number:
    """Tokens of KV cache (over all sequences) that fit beside the weights on ``n_chips`` chips.

    floor((n_chips x usable_fraction x capacity - weight_bytes) / kv_bytes_per_token), 0 when the
    weights alone do not fit. Explained in the chapter :ref:`ch-kv-cache`.
    """
    usable = np.asarray(usable_bytes(chip, usable_fraction, n_chips))
    weights, per_token, room = broadcast(
        weight_bytes=non_negative("weight_bytes", weight_bytes),
        kv_bytes_per_token=positive("kv_bytes_per_token", kv_bytes_per_token),
        usable=usable,
    )
    return _out(np.floor(np.maximum(room - weights, 0.0) / per_token))
