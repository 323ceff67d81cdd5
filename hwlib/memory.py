"""HBM budgets: training state, activations, KV cache, and how many chips hold them.

Every function returns plain bytes (or seconds, or a chip count); chapters convert to GiB
or GB only when printing. The formulas and their sources:

- **Training state** = parameters x bytes per parameter of a recipe (:data:`TRAINING_RECIPES`):
  weights + gradients + fp32 master copy + optimizer state. The mixed-precision Adam
  layout 2 + 2 + 12 = 16 bytes is Rajbhandari et al., "ZeRO: Memory Optimizations Toward
  Training Trillion Parameter Models", SC 2020 (arXiv:1910.02054), Sec. 3.1; each recipe
  cites its own source.
- **Activations per transformer layer** after Korthikanti et al., "Reducing Activation
  Recomputation in Large Transformer Models", MLSys 2023 (arXiv:2205.05198), Sec. 4 and
  Table 2: ``s b h (34 + 5 a s / h)`` bytes with 16-bit activations and 1-byte dropout masks,
  and its tensor-parallel, sequence-parallel and recomputation variants (see
  :func:`activation_bytes`).
- **KV cache** = 2 (K and V) x layers x tokens x KV heads x head size x bytes per element
  x batch (Vaswani et al. 2017 for the cached keys and values; Shazeer 2019,
  arXiv:1911.02150, for multi-query attention; Ainslie et al. 2023, arXiv:2305.13245, for
  grouped-query attention).
- **Chips needed** = ceil(bytes / (usable fraction x HBM per chip)); the smallest real
  deployment rounds that up to a slice shape or a whole node (:data:`DEPLOYMENTS`).
- **Decode step lower bound** = (weight bytes + batch x KV bytes per sequence) / HBM
  bandwidth: every weight and every cached key and value is read once per generated token
  (the bandwidth roof of Williams et al. 2009, applied as in Pope et al., "Efficiently
  Scaling Transformer Inference", MLSys 2023, arXiv:2211.05102, Sec. 2).

Explained in the chapters "HBM budgets for training" and "KV-cache precision".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from hwlib._checks import Number, as_real_array, broadcast, fraction, non_negative, one_of, positive
from hwlib.hardware import READ_ON, Chip, require_chip
from hwlib.units import dtype_bytes

# --- training-state recipes ------------------------------------------------------------

PARTS = ("weights", "gradients", "master", "optimizer")
"""The four parts of a training state, in the order tables and figures show them."""


@dataclass(frozen=True)
class TrainingRecipe:
    """Bytes per parameter of one way to hold a model for training, part by part.

    ``weights``: the copy the forward and backward passes read; ``gradients``: the
    gradient buffer; ``master``: a separate fp32 copy of the weights kept for the update
    (0 when the weights themselves are fp32); ``optimizer``: optimizer state (Adam's
    first and second moments, momentum, ...). ``parts`` describes each in words.
    Explained in the chapter "HBM budgets for training".
    """

    key: str
    label: str
    weights: float
    gradients: float
    master: float
    optimizer: float
    parts: Mapping[str, str]
    source: str
    note: str = ""

    def __post_init__(self) -> None:
        for name in PARTS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                raise ValueError(f"TrainingRecipe.{name} must be a number >= 0, got {value!r}")
        if set(self.parts) != set(PARTS):
            raise ValueError(f"TrainingRecipe.parts must describe exactly {PARTS}, got {sorted(self.parts)}")
        object.__setattr__(self, "parts", MappingProxyType(dict(self.parts)))

    @property
    def total(self) -> float:
        """Bytes per parameter, all four parts together."""
        return float(self.weights + self.gradients + self.master + self.optimizer)

    def breakdown(self) -> dict[str, float]:
        """Bytes per parameter of each part, in :data:`PARTS` order."""
        return {name: float(getattr(self, name)) for name in PARTS}

    def __str__(self) -> str:
        terms = " + ".join(f"{getattr(self, name):g}" for name in PARTS)
        return f"{self.label}: {terms} = {self.total:g} B/param [{self.source}]"


_ZERO = (
    "Rajbhandari, Rasley, Ruwase and He, 'ZeRO: Memory Optimizations Toward Training "
    "Trillion Parameter Models', SC 2020, arXiv:1910.02054, Sec. 3.1"
)
_ADAM = "Kingma and Ba, 'Adam: A Method for Stochastic Optimization', ICLR 2015, arXiv:1412.6980, Algorithm 1"
_MIXED = "Micikevicius et al., 'Mixed Precision Training', ICLR 2018, arXiv:1710.03740, Sec. 3.1"
_DOC000 = "000_dfa9af1fd73ea27d.txt (estimate_memory_gib)"
_ADAM8 = (
    "Dettmers, Lewis, Shleifer and Zettlemoyer, '8-bit Optimizers via Block-wise "
    "Quantization', ICLR 2022, arXiv:2110.02861, Sec. 2"
)
_ADAFACTOR = (
    "Shazeer and Stern, 'Adafactor: Adaptive Learning Rates with Sublinear Memory Cost', "
    "ICML 2018, arXiv:1804.04235, Sec. 3-4"
)
_FUSED = (
    "Lv et al., 'Full Parameter Fine-tuning for Large Language Models with Limited "
    "Resources' (LOMO), arXiv:2306.09782, Sec. 3: the update is applied inside the backward "
    "pass, so no full gradient buffer is kept"
)
_MOMENTUM = (
    "Sutskever, Martens, Dahl and Hinton, 'On the importance of initialization and momentum "
    f"in deep learning', ICML 2013, Sec. 2 (one velocity per parameter); mixed-precision "
    f"layout as in {_MIXED}"
)

ADAM8_BLOCK = 2048
"""Block size of 8-bit Adam's block-wise quantization (Dettmers et al. 2022, Sec. 2):
each block of 2048 values of each moment carries one fp32 scale."""

ADAFACTOR_MATRIX_SIDE = 4096
"""Side d of the square d x d weight matrix for which Adafactor's factored second moment
(one fp32 accumulator per row and per column: 2d values for d^2 parameters) is turned
into bytes per parameter, 4 x 2d / d^2 = 8 / d. Larger matrices need even less."""

_RECIPES = (
    TrainingRecipe(
        key="fp32_adam",
        label="fp32 Adam",
        weights=4,
        gradients=4,
        master=0,
        optimizer=8,
        parts={"weights": "fp32 weights (they are the master copy)", "gradients": "fp32 gradients",
               "master": "none: the weights are already fp32", "optimizer": "fp32 Adam m and v"},
        source=f"{_ADAM}; document 000's 'fp32_train_state' (16 B/param)",
    ),
    TrainingRecipe(
        key="doc000_mixed_bf16",
        label="document 000 'mixed bf16'",
        weights=2,
        gradients=4,
        master=4,
        optimizer=8,
        parts={"weights": "bf16 weights", "gradients": "fp32 gradients",
               "master": "fp32 master weights", "optimizer": "fp32 Adam m and v"},
        source=f"{_DOC000}: 'mixed_bf16_train_state' uses 18 bytes per parameter",
        note="The document's label; ZeRO's mixed-precision Adam keeps 16-bit gradients (16 B/param).",
    ),
    TrainingRecipe(
        key="zero_mixed_adam",
        label="ZeRO mixed-precision Adam",
        weights=2,
        gradients=2,
        master=4,
        optimizer=8,
        parts={"weights": "fp16/bf16 weights", "gradients": "fp16/bf16 gradients",
               "master": "fp32 master weights", "optimizer": "fp32 Adam m and v"},
        source=f"{_ZERO}: 2 + 2 + K with K = 12, '16 Psi bytes'",
        note="Document 002 labels this 16 B/param 'Adam mixed-precision state'.",
    ),
    TrainingRecipe(
        key="bf16_grads_fp32_moments",
        label="bf16 weights and gradients, fp32 moments",
        weights=2,
        gradients=2,
        master=0,
        optimizer=8,
        parts={"weights": "bf16 weights, updated in place (no master copy)",
               "gradients": "bf16 gradients", "master": "none",
               "optimizer": "fp32 Adam m and v"},
        source=f"{_ADAM}; ZeRO's layout (Sec. 3.1) without the fp32 master copy",
        note="Updating bf16 weights directly loses small updates unless stochastic rounding "
        "or compensated summation is used.",
    ),
    TrainingRecipe(
        key="bf16_fp32_moments",
        label="bf16 weights, fp32 moments, fused update",
        weights=2,
        gradients=0,
        master=0,
        optimizer=8,
        parts={"weights": "bf16 weights, updated in place", "gradients":
               "none held: each layer's gradient is applied as soon as it is computed",
               "master": "none", "optimizer": "fp32 Adam m and v"},
        source=f"{_FUSED}; Adam moments as in {_ADAM}",
        note="Counts persistent state only: one layer's gradient at a time is transient.",
    ),
    TrainingRecipe(
        key="adam_8bit",
        label="8-bit Adam (mixed precision)",
        weights=2,
        gradients=2,
        master=4,
        optimizer=2 + 2 * 4 / ADAM8_BLOCK,
        parts={"weights": "fp16/bf16 weights", "gradients": "fp16/bf16 gradients",
               "master": "fp32 master weights",
               "optimizer": "8-bit m and v, plus one fp32 scale per 2048-value block of each"},
        source=_ADAM8,
    ),
    TrainingRecipe(
        key="sgd_momentum",
        label="SGD with momentum (mixed precision)",
        weights=2,
        gradients=2,
        master=4,
        optimizer=4,
        parts={"weights": "fp16/bf16 weights", "gradients": "fp16/bf16 gradients",
               "master": "fp32 master weights", "optimizer": "one fp32 momentum buffer"},
        source=_MOMENTUM,
    ),
    TrainingRecipe(
        key="adafactor",
        label="Adafactor, no momentum (mixed precision)",
        weights=2,
        gradients=2,
        master=4,
        optimizer=4 * 2 * ADAFACTOR_MATRIX_SIDE / ADAFACTOR_MATRIX_SIDE**2,
        parts={"weights": "fp16/bf16 weights", "gradients": "fp16/bf16 gradients",
               "master": "fp32 master weights",
               "optimizer": "factored fp32 second moment: one value per row and per column, "
               "8/d B/param for a d x d matrix (d = 4096); no first moment (beta1 = 0)"},
        source=_ADAFACTOR,
        note="Vectors and biases keep a full second moment; they are a negligible share of a "
        "transformer's parameters and are not counted.",
    ),
)

TRAINING_RECIPES: Mapping[str, TrainingRecipe] = MappingProxyType({r.key: r for r in _RECIPES})
"""Every training-state recipe by key; see each record's ``source`` and ``parts``."""


def _recipe(recipe: object) -> TrainingRecipe:
    if isinstance(recipe, TrainingRecipe):
        return recipe
    if isinstance(recipe, str) and recipe not in TRAINING_RECIPES:
        raise KeyError(f"recipe must be one of {tuple(TRAINING_RECIPES)}, got {recipe!r}")
    if not isinstance(recipe, str):
        raise TypeError(f"recipe must be a recipe name from {tuple(TRAINING_RECIPES)} "
                        f"or a TrainingRecipe, got {recipe!r}")
    return TRAINING_RECIPES[recipe]


def _out(values: np.ndarray) -> Number:
    return float(values) if np.ndim(values) == 0 else values


def training_state_bytes(n_params: Number, recipe: str | TrainingRecipe) -> Number:
    """Bytes of weights, gradients, master copy and optimizer state for ``n_params`` parameters.

    ``recipe`` is a key of :data:`TRAINING_RECIPES` or a :class:`TrainingRecipe`.
    Activations are not included (see :func:`activation_bytes`).
    Explained in the chapter "HBM budgets for training".
    """
    record = _recipe(recipe)
    return _out(non_negative("n_params", n_params) * record.total)


def training_state_breakdown(n_params: Number, recipe: str | TrainingRecipe) -> dict[str, Number]:
    """Bytes of each part (:data:`PARTS`) of the training state of ``n_params`` parameters."""
    record = _recipe(recipe)
    params = non_negative("n_params", n_params)
    return {name: _out(params * per_param) for name, per_param in record.breakdown().items()}


# --- activations -------------------------------------------------------------------------

RECOMPUTE = ("none", "selective", "full")
"""Activation recomputation strategies of Korthikanti et al. 2022, Sec. 4-5."""


def activation_bytes(
    seq_len: Number,
    batch: Number,
    hidden: Number,
    heads: Number,
    tensor_parallel: Number = 1,
    sequence_parallel: bool = False,
    recompute: str = "none",
    flash_attention: bool = False,
) -> Number:
    """Bytes of activations one transformer layer keeps for the backward pass (per chip).

    Korthikanti et al. 2022 (arXiv:2205.05198), Sec. 4 and Table 2, with s = ``seq_len``,
    b = ``batch`` (micro-batch), h = ``hidden``, a = ``heads``, t = ``tensor_parallel``;
    16-bit activations and 1-byte dropout masks:

    - no parallelism: s b h (34 + 5 a s / h)
    - tensor parallel: s b h (10 + 24/t + 5 a s / (h t))
    - tensor + sequence parallel: s b h (34/t + 5 a s / (h t))
    - selective recompute drops the 5 a s / h term (the attention scores, softmax and its
      dropout are recomputed); with sequence parallelism s b h (34/t)
    - full recompute keeps only the layer input, 2 s b h (Table 2); with sequence
      parallelism that input is split too, 2 s b h / t (our extension of the table).

    ``flash_attention=True`` drops the 5 a s / h term as well: a FlashAttention-style kernel
    (Dao et al. 2022, arXiv:2205.14135, Sec. 3.1) never writes the s x s score matrix and
    recomputes it in the backward pass from the output and per-row softmax statistics;
    those statistics, O(a s b) values, are neglected beside the O(s b h) terms.
    Explained in the chapter "HBM budgets for training".
    """
    one_of("recompute", recompute, RECOMPUTE)
    for name, flag in (("sequence_parallel", sequence_parallel), ("flash_attention", flash_attention)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False, got {flag!r}")
    s, b, h, a, t = broadcast(
        seq_len=positive("seq_len", seq_len, integral=True),
        batch=positive("batch", batch, integral=True),
        hidden=positive("hidden", hidden, integral=True),
        heads=positive("heads", heads, integral=True),
        tensor_parallel=positive("tensor_parallel", tensor_parallel, integral=True),
    )
    if (h % a != 0).any():
        raise ValueError(f"hidden must be a multiple of heads, got hidden={hidden!r}, heads={heads!r}")
    sbh = s * b * h
    if recompute == "full":
        return _out(2.0 * sbh / (t if sequence_parallel else 1.0))
    linear = 34.0 / t if sequence_parallel else 10.0 + 24.0 / t
    scores = 0.0 if (recompute == "selective" or flash_attention) else 5.0 * a * s / (h * t)
    return _out(sbh * (linear + scores))


# --- KV cache ----------------------------------------------------------------------------

def kv_cache_bytes(
    tokens: Number,
    layers: Number,
    kv_heads: Number,
    head_dim: Number,
    dtype: str = "bf16",
    batch: Number = 1,
) -> Number:
    """Bytes of cached keys and values: 2 x layers x tokens x kv_heads x head_dim x size x batch.

    ``kv_heads`` equals the query heads for multi-head attention (MHA), is 1 for
    multi-query attention (MQA, Shazeer 2019, arXiv:1911.02150) and lies between for
    grouped-query attention (GQA, Ainslie et al. 2023, arXiv:2305.13245). ``dtype`` is the
    cache's element type: "fp32", "bf16", "fp16", "fp8", "int8" or "int4" (quantization
    scales are not counted). Explained in the chapter "KV-cache precision".
    """
    one_of("dtype", dtype, ("fp32", "bf16", "fp16", "fp8", "int8", "int4"))
    n, layer, kv, d, batches = broadcast(
        tokens=non_negative("tokens", tokens, integral=True),
        layers=positive("layers", layers, integral=True),
        kv_heads=positive("kv_heads", kv_heads, integral=True),
        head_dim=positive("head_dim", head_dim, integral=True),
        batch=positive("batch", batch, integral=True),
    )
    return _out(2.0 * layer * n * kv * d * dtype_bytes(dtype) * batches)


# --- capacity ----------------------------------------------------------------------------

_ROUNDING = 1e-12
"""Relative slack so that a total equal to a whole number of chips' usable HBM, up to
floating-point rounding (e.g. 51.2 GiB on 12.8 GiB chips), needs exactly that many."""


def usable_bytes(chip: Chip, usable_fraction: Number = 0.8, chips: Number = 1) -> Number:
    """Usable HBM of ``chips`` chips: chips x usable_fraction x HBM per chip, in bytes.

    The rest is left for the runtime, compiler scratch space and fragmentation.
    Explained in the chapter "HBM budgets for training".
    """
    record = require_chip(chip)
    share, count = broadcast(usable_fraction=fraction("usable_fraction", usable_fraction),
                             chips=positive("chips", chips, integral=True))
    return _out(count * share * record.hbm_bytes)


def chips_needed(total_bytes: Number, chip: Chip, usable_fraction: Number = 0.8) -> int | np.ndarray:
    """Fewest chips whose usable HBM holds ``total_bytes``: ceil(bytes / (fraction x HBM)).

    At least 1. Returns an int, or an int array when an argument is an array. The count
    is not necessarily a real deployment size: see :func:`deployment_chips`.
    Explained in the chapter "HBM budgets for training".
    """
    record = require_chip(chip)
    total, share = broadcast(total_bytes=non_negative("total_bytes", total_bytes),
                             usable_fraction=fraction("usable_fraction", usable_fraction))
    ratio = total / (share * record.hbm_bytes)
    count = np.maximum(np.ceil(ratio * (1.0 - _ROUNDING)), 1.0).astype(np.int64)
    return int(count) if count.ndim == 0 else count


@dataclass(frozen=True)
class Deployment:
    """The sizes (in chips) in which a chip can be rented or bought as one unit.

    ``sizes`` ascend; ``names`` and ``topologies`` go with them. Beyond the largest size,
    whole multiples of it are used (several slices joined by the data-centre network,
    or several nodes). Explained in the chapter "HBM budgets for training".
    """

    kind: str
    sizes: tuple[int, ...]
    names: tuple[str, ...]
    topologies: tuple[str, ...]
    beyond: str
    source: str
    read_on: str
    quoted: str
    note: str = ""
    _sizes: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if list(self.sizes) != sorted(set(self.sizes)) or len(self.names) != len(self.sizes) \
                or len(self.topologies) != len(self.sizes):
            raise ValueError("Deployment sizes must ascend, with one name and topology each")
        object.__setattr__(self, "_sizes", np.array(self.sizes, dtype=np.int64))

    @property
    def largest(self) -> int:
        return self.sizes[-1]


_V5E_PAGE = "https://docs.cloud.google.com/tpu/docs/v5e"
_V6E_PAGE = "https://cloud.google.com/tpu/docs/v6e"
_V5P_PAGE = "https://docs.cloud.google.com/tpu/docs/v5p-training"
_MULTISLICE = "https://cloud.google.com/tpu/docs/multislice-introduction"
_HGX = "https://www.nvidia.com/en-us/data-center/hgx/"
_DGX_B200 = "https://www.nvidia.com/en-us/data-center/dgx-b200/"
_MI300X_PLATFORM = "https://www.amd.com/en/products/accelerators/instinct/mi300/platform.html"

_POD2D = (1, 4, 8, 16, 32, 64, 128, 256)
_TOPO2D = ("1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16")
_V5P = (4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 6144)
_V5P_TOPO = ("2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8", "8x8x16",
             "8x16x16", "16x16x16", "16x16x24")


def _nodes(source: str, quoted: str) -> Deployment:
    return Deployment(
        kind="node", sizes=(8,), names=("1 x 8-GPU node",), topologies=("8 GPUs, NVLink/Infinity Fabric",),
        beyond="8-GPU nodes joined by the cluster network", source=source, read_on=READ_ON, quoted=quoted,
        note="Single GPUs and smaller VMs are also rented; a training job of several GPUs is "
        "normally planned in whole 8-GPU nodes.",
    )


_V5E_SLICES = Deployment(
    kind="slice", sizes=_POD2D, names=tuple(f"v5litepod-{n}" for n in _POD2D), topologies=_TOPO2D,
    beyond="256-chip slices joined by Multislice (" + _MULTISLICE + ")", source=_V5E_PAGE, read_on=READ_ON,
    quoted="v5e supports the following 2D slice shapes: 1x1 (1 chip), 2x2 (4), 2x4 (8), 4x4 (16), "
    "4x8 (32), 8x8 (64), 8x16 (128), 16x16 (256)",
)
_V6E_SLICES = Deployment(
    kind="slice", sizes=_POD2D, names=tuple(f"v6e-{n}" for n in _POD2D), topologies=_TOPO2D,
    beyond="256-chip slices joined by Multislice (" + _MULTISLICE + ")", source=_V6E_PAGE, read_on=READ_ON,
    quoted="2D slice shapes supported for v6e: 1x1 (v6e-1), 2x2 (v6e-4), 2x4 (v6e-8), ... 16x16 (v6e-256)",
    note="The stored copy shows the first rows verbatim; the 16- to 256-chip rows follow the "
    "same 2D shapes as v5e (256-chip pod).",
)
_V5P_SLICES = Deployment(
    kind="slice", sizes=_V5P, names=tuple(f"v5p-{2 * n}" for n in _V5P), topologies=_V5P_TOPO,
    beyond="6144-chip slices joined by Multislice (" + _MULTISLICE + ")", source=_V5P_PAGE, read_on=READ_ON,
    quoted="accelerator types v5p-8, v5p-16, v5p-32, v5p-64, v5p-128 (one full cube), v5p-256, "
    "... (cores = 2 x chips); slice shapes 2x2x1 (4 chips) ... 16x16x24 (6144 chips)",
    note="The page lists the most common shapes; other multiples of 4 chips (3D tori) also "
    "exist between them. The names count TensorCores, two per v5p chip.",
)

DEPLOYMENTS: Mapping[str, Deployment] = MappingProxyType({
    "v5e": _V5E_SLICES,
    "v6e": _V6E_SLICES,
    "v5p": _V5P_SLICES,
    "a100-40gb": _nodes(_HGX, "HGX A100: 8 GPUs per baseboard"),
    "a100-80gb": _nodes(_HGX, "HGX A100: 8 GPUs per baseboard"),
    "h100-sxm": _nodes(_HGX, "HGX H100: 8 GPUs per baseboard"),
    "h200": _nodes(_HGX, "HGX H200: 8 GPUs per baseboard"),
    "b200": _nodes(_DGX_B200, "DGX B200: 8 B200 GPUs"),
    "mi300x": _nodes(_MI300X_PLATFORM, "AMD Instinct MI300X Platform: 8 MI300X GPUs"),
})
"""Real deployment sizes by chip key (TPU slice shapes, 8-GPU nodes), each with its source."""


def deployment(chip: Chip) -> Deployment:
    """The :class:`Deployment` sizes of ``chip`` (vendor or document record, by its key).

    Explained in the chapter "HBM budgets for training".
    """
    record = require_chip(chip)
    if record.key not in DEPLOYMENTS:
        raise KeyError(f"no deployment sizes for chip {record.label!r}; known for {sorted(DEPLOYMENTS)}")
    return DEPLOYMENTS[record.key]


def deployment_chips(total_bytes: Number, chip: Chip, usable_fraction: Number = 0.8) -> int | np.ndarray:
    """Chips in the smallest real deployment (slice shape or whole nodes) that holds ``total_bytes``.

    :func:`chips_needed` rounded up to the next size of :func:`deployment`; beyond the
    largest single size, to a whole multiple of it. Explained in "HBM budgets for training".
    """
    needed = np.asarray(chips_needed(total_bytes, chip, usable_fraction))
    sizes = deployment(chip)._sizes
    index = np.searchsorted(sizes, needed, side="left")
    largest = sizes[-1]
    within = sizes[np.minimum(index, len(sizes) - 1)]
    result = np.where(index < len(sizes), within, -(-needed // largest) * largest).astype(np.int64)
    return int(result) if result.ndim == 0 else result


def deployment_name(n_chips: Number, chip: Chip) -> str | np.ndarray:
    """Name of the deployment of ``n_chips`` chips, e.g. 'v5litepod-16 (4x4)' or '2 x 8-GPU node'.

    ``n_chips`` must be one of the sizes :func:`deployment_chips` returns. Explained in
    the chapter "HBM budgets for training".
    """
    plan = deployment(chip)
    counts = as_real_array("n_chips", n_chips, minimum=1, integral=True).astype(np.int64)
    sizes = plan._sizes
    index = np.minimum(np.searchsorted(sizes, counts), len(sizes) - 1)
    listed = sizes[index] == counts
    multiple = (counts > sizes[-1]) & (counts % sizes[-1] == 0)
    if plan.kind == "node":
        multiple = counts % 8 == 0
        listed = np.zeros_like(listed)
    if not (listed | multiple).all():
        raise ValueError(f"n_chips must be a deployment size of {chip.label} {plan.sizes} "
                         f"or a multiple of {plan.largest}, got {n_chips!r}")
    names = np.array([f"{n} ({t})" for n, t in zip(plan.names, plan.topologies)])
    base = names[-1] if plan.kind == "slice" else np.array("8-GPU node")
    groups = np.char.add(np.char.add((counts // sizes[-1]).astype(str), " x "), base)
    result = np.where(listed, names[index], groups)
    return str(result) if result.ndim == 0 else result


def max_params(
    capacity_bytes: Number,
    recipe: str | TrainingRecipe,
    reserved_bytes: Number = 0.0,
) -> Number:
    """Largest parameter count whose training state fits ``capacity_bytes`` (usable bytes).

    (capacity - reserved) / bytes per parameter, 0 where nothing fits; ``reserved_bytes``
    holds activations or anything else kept beside the state. Explained in "HBM budgets
    for training".
    """
    record = _recipe(recipe)
    capacity, reserved = broadcast(capacity_bytes=non_negative("capacity_bytes", capacity_bytes),
                                   reserved_bytes=non_negative("reserved_bytes", reserved_bytes))
    return _out(np.maximum(capacity - reserved, 0.0) / record.total)


# --- inference: tokens that fit, and the decode-step bound ------------------------------

def tokens_that_fit(
    chip: Chip,
    weight_bytes: Number,
    kv_bytes_per_token: Number,
    usable_fraction: Number = 0.8,
    chips: Number = 1,
) -> Number:
    """Tokens of KV cache (over all sequences) that fit beside the weights on ``chips`` chips.

    floor((chips x usable_fraction x HBM - weight_bytes) / kv_bytes_per_token), 0 when the
    weights alone do not fit. Explained in the chapter "KV-cache precision".
    """
    usable = np.asarray(usable_bytes(chip, usable_fraction, chips))
    weights, per_token, room = broadcast(
        weight_bytes=non_negative("weight_bytes", weight_bytes),
        kv_bytes_per_token=positive("kv_bytes_per_token", kv_bytes_per_token),
        usable=usable,
    )
    return _out(np.floor(np.maximum(room - weights, 0.0) / per_token))


def decode_step_time_s(
    weight_bytes: Number,
    kv_bytes_per_sequence: Number,
    batch: Number,
    chip: Chip,
    chips: Number = 1,
) -> Number:
    """Lower bound on one decode step: (weight bytes + batch x KV bytes) / HBM bandwidth, in s.

    Each generated token reads every weight once (shared by the batch) and each
    sequence's whole KV cache once; with the model sharded over ``chips`` chips their
    bandwidths add. Compute time and communication are ignored: this is the bandwidth
    roof (Williams et al. 2009; Pope et al. 2023, arXiv:2211.05102, Sec. 2).
    Explained in the chapter "KV-cache precision".
    """
    record = require_chip(chip)
    weights, kv, batches, count = broadcast(
        weight_bytes=non_negative("weight_bytes", weight_bytes),
        kv_bytes_per_sequence=non_negative("kv_bytes_per_sequence", kv_bytes_per_sequence),
        batch=positive("batch", batch, integral=True),
        chips=positive("chips", chips, integral=True),
    )
    return _out((weights + batches * kv) / (count * record.hbm_bytes_per_s))
