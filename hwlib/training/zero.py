"""Training memory per chip under a named sharding of the training state, and the fewest chips that hold it.

Each chip holds its own micro-batch's activations; the training state is split as the sharding
says (Rajbhandari et al., "ZeRO", SC 2020, Sec. 5; FSDP is ZeRO stage 3, Zhao et al., "PyTorch
FSDP", VLDB 2023):

* ``replicated`` (plain data parallelism): every chip holds every part;
* ``zero-1``: the fp32 master copy and the optimizer state are split over the N chips;
* ``zero-2``: the gradients too;
* ``zero-3`` / ``fsdp``: the weights too.

So a chip holds A + S / N bytes, A its unsplit parts and activations, S the split parts, and the
fewest chips is ceil(S / (u M - A)) where u M > A, and none where one chip's activations and
unsplit state alone overflow it: then tensor, sequence or context parallelism (not modelled
here) must split the activations, and the result says so. Memory is never pooled across chips.
Explained in the chapter :ref:`ch-hbm-budgets`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hwlib._checks import one_of, positive
from hwlib.data import assumptions
from hwlib.data.records import Chip, ModelShape, TrainingRecipe, require, require_chip
from hwlib.memory import RECOMPUTE, activation_bytes, logits_bytes, training_state_breakdown, usable_bytes

SHARDINGS = {
    "replicated": (),
    "zero-1": ("master", "optimizer"),
    "zero-2": ("master", "optimizer", "gradients"),
    "zero-3": ("master", "optimizer", "gradients", "weights"),
    "fsdp": ("master", "optimizer", "gradients", "weights"),
}
"""Which parts of the training state each sharding splits over the chips."""


@dataclass(frozen=True)
class TrainingMemory:
    """Bytes one chip holds: each state part after sharding, the activations of its micro-batch, the logits.

    ``n_chips`` is the fewest chips under the sharding whose usable HBM holds it (``None`` where no
    number does, ``reason`` says why). Chapter :ref:`ch-hbm-budgets`.
    """

    sharding: str
    parts: dict
    n_chips: int | None
    per_chip_bytes: float
    usable_bytes: float
    reason: str

    @property
    def total_bytes(self) -> float:
        return sum(self.parts.values())


def chip_bytes(
    model: ModelShape,
    recipe: str | TrainingRecipe,
    seq_len: int,
    sequences: float,
    *,
    sharded: tuple[str, ...] = (),
    shards: int = 1,
    tp: int = 1,
    pp: int = 1,
    cp: int = 1,
    ep: int = 1,
    in_flight: int = 1,
    recompute: str = "none",
    flash_attention: bool = True,
) -> dict[str, float]:
    """Bytes one chip holds in training, by part: the training state of its share of the parameters (over tp x pp
    ranks, the experts over ep as well), the ``sharded`` parts of it split again over ``shards`` data-parallel
    ranks (ZeRO), the activations its pipeline stage keeps for ``in_flight`` micro-batches of ``sequences``
    sequences of ``seq_len`` tokens (``seq_len / cp`` per context-parallel rank; tensor and sequence parallel over
    ``tp`` where tp > 1) and, once, what recomputation dropped of the layer whose backward runs (it holds all of
    its own activations meanwhile), and the logits (split over tp). The one memory count of ``training_memory`` and
    ``hw.train_step``. Chapters :ref:`ch-hbm-budgets` and :ref:`ch-sharding`."""
    params = model.params()
    experts = model.param_breakdown().get("experts", 0.0)
    local = (params - experts + experts / ep) / (tp * pp)
    state = training_state_breakdown(local, recipe)
    parts = {name: value / (shards if name in sharded else 1) for name, value in state.items()}
    per_layer = activation_bytes(
        seq_len // cp,
        sequences,
        model,
        tensor_parallel=tp,
        sequence_parallel=tp > 1,
        recompute=recompute,
        flash_attention=flash_attention,
    )
    # the layer whose backward runs holds its whole activations meanwhile, once: recomputed where they were dropped
    working = activation_bytes(
        seq_len // cp, sequences, model, tensor_parallel=tp, sequence_parallel=tp > 1, flash_attention=flash_attention
    )
    parts["activations"] = float(per_layer) * model.n_layers / pp * in_flight + float(working - per_layer)
    parts["logits"] = float(logits_bytes(seq_len // cp, sequences, model)) / tp
    return parts


def training_memory(
    model: ModelShape,
    recipe: str | TrainingRecipe,
    chip: Chip,
    seq_len: int,
    batch: int = 1,
    *,
    sharding: str = "zero-3",
    n_chips: int | None = None,
    recompute: str = "none",
    flash_attention: bool = True,
    usable_fraction: float = assumptions.USABLE_HBM_FRACTION,
) -> TrainingMemory:
    """Bytes per chip of training ``model`` with ``recipe`` on ``chip`` under ``sharding``, a micro-batch of
    ``batch`` sequences of ``seq_len`` tokens per chip, and the fewest chips that hold it.

    With ``n_chips`` the parts are those of that many chips; otherwise of the fewest that fit (or of one chip
    where none does). Activations follow ``hw.activation_bytes`` for the model's own structure.
    Chapter :ref:`ch-hbm-budgets`.
    """
    model = require(ModelShape, "model", model, "hw.model('llama-3-8b')")
    chip = require_chip(chip)
    one_of("sharding", sharding, SHARDINGS)
    one_of("recompute", recompute, RECOMPUTE)
    tokens, sequences = int(positive("seq_len", seq_len, integral=True)), int(positive("batch", batch, integral=True))
    options = dict(recompute=recompute, flash_attention=flash_attention)
    one = chip_bytes(model, recipe, tokens, sequences, **options)  # nothing sharded yet
    activations, logits = one["activations"], one["logits"]
    split = sum(one[name] for name in SHARDINGS[sharding])
    whole = sum(one.values()) - split
    room = float(usable_bytes(chip, usable_fraction))
    unsplit_state = whole - activations - logits
    if unsplit_state >= room:
        fewest, reason = (
            None,
            (
                f"the state {sharding} leaves whole ({unsplit_state / 2**30:,.1f} GiB) exceeds one "
                f"chip's usable {room / 2**30:,.1f} GiB: no number of chips holds it; shard more of it"
            ),
        )
    elif whole >= room:
        fewest, reason = (
            None,
            (
                f"one chip's activations and unsplit state ({whole / 2**30:,.1f} GiB) exceed its "
                f"usable {room / 2**30:,.1f} GiB: no number of chips holds it under {sharding}; "
                "tensor, sequence or context parallelism must split the activations"
            ),
        )
    elif split == 0:
        fewest, reason = 1, "replicated: every chip holds everything, so one chip must"
    else:
        fewest, reason = (
            max(1, math.ceil(split / (room - whole) * (1 - 1e-12))),
            f"{sharding} splits {split / 2**30:,.1f} GiB",
        )
    count = int(positive("n_chips", n_chips, integral=True)) if n_chips is not None else (fewest or 1)
    parts = chip_bytes(model, recipe, tokens, sequences, sharded=SHARDINGS[sharding], shards=count, **options)
    return TrainingMemory(
        sharding=sharding,
        parts=parts,
        n_chips=fewest,
        per_chip_bytes=sum(parts.values()),
        usable_bytes=room,
        reason=reason,
    )


ZERO_STAGES = (0, 1, 2)
"""ZeRO stages over the data-parallel (dp) ranks: 0 keeps the training state whole on each; 1 splits the fp32 master
copy and the optimizer state over them (Megatron-LM's distributed optimizer); 2 the gradients too (Rajbhandari et
al., "ZeRO", SC 2020, Sec. 5). Stage 3 over dp is FSDP: the mesh's ``fsdp`` axis."""
ZERO_SHARDED = {0: (), 1: ("master", "optimizer"), 2: ("master", "optimizer", "gradients")}
"""The parts of the training state each ZeRO stage splits over the dp ranks."""


def zero_stage(zero: object) -> int:
    """``zero``, validated: one of ``ZERO_STAGES`` (3 over the dp ranks is FSDP, the mesh's fsdp axis)."""
    if zero == 3:
        raise ValueError("zero=3 over the dp ranks is FSDP: put those ranks on the mesh's fsdp axis")
    if isinstance(zero, bool) or zero not in ZERO_STAGES:
        raise ValueError(f"zero must be one of {ZERO_STAGES}, got {zero!r}")
    return int(zero)
