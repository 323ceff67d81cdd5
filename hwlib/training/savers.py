"""How fine-tuning and the memory savers enter a training step: optimizer and activation offload to the host
(``hw.train_step(..., offload=hw.Offload(...))``, below), and the memory, work and collectives that LoRA and QLoRA
(``hwlib.training.finetune``) and FP8 training (``hwlib.training.fp8``) change.

* **optimizer** (ZeRO-Offload, Ren et al. 2021, arXiv:2101.06840, Secs. 4-5): the gradients, the fp32 master copy
  and the optimizer state of the parameters a chip updates leave HBM for host memory, and the host's CPU runs the
  update. Each micro-batch's gradients of those parameters cross the host link in bf16 during the backward pass
  (DeepSpeed copies them every micro-batch and accumulates on the host), overlapping it; the updated bf16
  weights come back once a step, exposed, or behind the next step's passes with ZeRO-Offload's one-step delayed
  parameter update (``delayed_update``). 2 B a parameter each way (ZeRO-Offload's 2M). The host's own update time
  is not modelled: it depends on the host's CPU.
* **activations**: the activations each layer keeps for the backward pass go to the host in the forward pass and
  come back in the backward pass, once per micro-batch each way; all but
  ``assumptions.ACTIVATION_OFFLOAD_LAYERS_ON_CHIP`` layers' leave HBM. The copies overlap compute.

The link is the chip's to its host (``hwlib.data.vendor_host_links``: PCIe, or NVLink-C2C), per direction; a copy
takes bytes / rate and is priced as a collective of the step (the part ``host transfers``) by the one pricer, which
lets it hide behind the compute it overlaps but takes it as sharing that compute's time with the step's other
overlapped collectives (conservative: a host link is not the scale-up links). The forecast reaches the link at the
network collectives' measured share, a stand-in: no offloaded run is measured. Host memory is reported
(``TrainStep.host_memory_bytes``), not checked. Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hwlib._checks import describe
from hwlib.collectives import Switch
from hwlib.data import assumptions
from hwlib.data import recipe as require_recipe
from hwlib.data.vendor_host_links import HOST_LINKS
from hwlib.pricing import Collective, Part
from hwlib.training.finetune import (
    LoRA,
    dequantize_bytes,
    gathered_bytes_per_param,
    lora_state,
    require_adapter,
    rescale_collectives,
    trained_share,
)
from hwlib.training.fp8 import BF16_BYTES, FP8Scaling, cached_weight_bytes, fp8_scaling, linear_params, scaling_bytes
from hwlib.training.mesh import fsdp_shards, local_params
from hwlib.training.zero import chip_bytes

OFFLOADED_STATE = ("gradients", "master", "optimizer")
"""The training-state parts optimizer offload keeps in host memory (ZeRO-Offload's)."""
HOST_PART = "host transfers"
"""The step part the host link's copies are reported under."""


@dataclass(frozen=True)
class Offload:
    """What a step keeps in host memory: the ``optimizer`` (with the gradients and fp32 master copy) and/or the
    kept ``activations``; ``delayed_update`` hides the updated weights' copy back behind the next step
    (ZeRO-Offload's DPU); ``host_bytes_per_s`` the host link's rate per direction (B/s; None: the cluster's or
    chip's in ``hwlib.data.vendor_host_links``). Chapter :ref:`ch-sharding`."""

    optimizer: bool = True
    activations: bool = False
    delayed_update: bool = False
    host_bytes_per_s: float | None = None

    def __post_init__(self) -> None:
        for name in ("optimizer", "activations", "delayed_update"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"Offload.{name} must be True or False, got {describe(getattr(self, name))}")
        rate = self.host_bytes_per_s
        if rate is not None and (
            isinstance(rate, bool) or not isinstance(rate, (int, float)) or not (0 < rate < math.inf)
        ):
            raise ValueError(f"Offload.host_bytes_per_s must be a rate > 0 in B/s or None, got {describe(rate)}")
        if not (self.optimizer or self.activations):
            raise ValueError("Offload offloads nothing: set optimizer=True, activations=True or both")


def require_offload(offload: object) -> Offload | None:
    """``offload`` itself if it is an ``Offload`` (or None), else a TypeError naming the parameter."""
    if offload is not None and not isinstance(offload, Offload):
        raise TypeError(f"offload must be an hw.Offload(...) or None, got {describe(offload)}")
    return offload


def host_link_bytes_per_s(cluster: object, offload: Offload) -> float:
    """The host link's rate per direction (B/s): ``offload.host_bytes_per_s``, else the cluster's, else its
    chip's (``HOST_LINKS``); a ValueError naming ``offload`` where none is known. Chapter :ref:`ch-sharding`."""
    if offload.host_bytes_per_s is not None:
        return float(offload.host_bytes_per_s)
    for key in (cluster.key, cluster.chip.key):
        if key in HOST_LINKS:
            return float(HOST_LINKS[key].value)
    raise ValueError(
        f"offload: no host link is known for {cluster.name} ({cluster.chip.name}); give "
        "hw.Offload(host_bytes_per_s=...) in B/s per direction"
    )


def offload_memory(parts: dict, offload: Offload | None, layers_held: float) -> tuple[dict, float]:
    """(bytes per chip by part left in HBM, bytes moved to host memory) of ``parts`` under ``offload``, the
    activations of ``layers_held`` layers (a stage's, times its micro-batches in flight) kept but for
    ``assumptions.ACTIVATION_OFFLOAD_LAYERS_ON_CHIP``. Chapter :ref:`ch-hbm-budgets`."""
    if offload is None:
        return parts, 0.0
    parts, host = dict(parts), 0.0
    if offload.optimizer:
        for name in OFFLOADED_STATE:
            host, parts[name] = host + parts[name], 0.0
    if offload.activations:
        kept = min(1.0, assumptions.ACTIVATION_OFFLOAD_LAYERS_ON_CHIP / layers_held)
        host += parts["activations"] * (1.0 - kept)
        parts["activations"] = parts["activations"] * kept
    return parts, float(host)


def host_transfers(
    offload: Offload | None, cluster: object, updated_params: float, micro_batches: int, activation_bytes: float
) -> list:
    """The step's copies over the host link (``hwlib.pricing.Collective``, part ``HOST_PART``): the gradients of
    the ``updated_params`` a chip updates out each micro-batch behind the backward pass and their updated bf16
    weights back once; each micro-batch's ``activation_bytes`` out and back behind compute. Chapter
    :ref:`ch-sharding`."""
    if offload is None:
        return []
    link = Switch(2, host_link_bytes_per_s(cluster, offload), 0.0, where="host")
    found = []
    if offload.optimizer:
        state = updated_params * BF16_BYTES
        found.append(Collective(HOST_PART, "send", state, link, micro_batches, "backward"))
        found.append(Collective(HOST_PART, "send", state, link, 1, "compute" if offload.delayed_update else None))
    if offload.activations:
        found.append(Collective(HOST_PART, "send", activation_bytes, link, 2 * micro_batches, "compute"))
    return found


# --- the savers in a step -----------------------------------------------------------------------


@dataclass(frozen=True)
class Savers:
    """A step's fine-tuning and memory savers, each None where not asked for: its LoRA ``adapter``, its
    ``offload`` and its ``fp8`` recipe. Chapter :ref:`ch-sharding`."""

    adapter: LoRA | None = None
    offload: Offload | None = None
    fp8: FP8Scaling | None = None


NO_SAVERS = Savers()
"""A step without fine-tuning, offload or FP8 recipe: full training's."""


def savers_of(model: object, adapter: object, offload: object, fp8: object, dtype: str) -> Savers:
    """The step's ``Savers`` from ``hw.train_step``'s arguments, validated (a ValueError or TypeError naming the
    parameter): a quantized base computes in bf16, and LoRA covers the model. Chapter :ref:`ch-sharding`."""
    saved = Savers(require_adapter(adapter), require_offload(offload), fp8_scaling(fp8, dtype))
    if saved.adapter is not None and saved.adapter.quantized and dtype != "bf16":
        raise ValueError(
            f"adapter: a {saved.adapter.base_dtype} base is dequantized for bf16 matmuls; got dtype={dtype!r}"
        )
    trained_share(model, saved.adapter)  # a model LoRA does not cover raises here
    return saved


def saved_state(parts: dict, model: object, mesh: object, recipe: object, saved: Savers) -> dict:
    """``parts`` (bytes per chip, ``hwlib.training.zero.chip_bytes``) with a LoRA step's state in place of full
    training's, split over the chip's tp x pp share and FSDP as the full state is, and the fp8 weight copies a
    recipe caches. Chapter :ref:`ch-hbm-budgets`."""
    if saved.adapter is None and saved.fp8 is None:
        return parts
    parts, share = dict(parts), local_params(model, mesh) / model.params()
    if saved.adapter is not None:
        state = lora_state(model, saved.adapter, recipe)
        parts.update({name: value * share / fsdp_shards(mesh) for name, value in state.items()})
    if saved.fp8 is not None:
        parts["weights"] += cached_weight_bytes(saved.fp8, linear_params(model) * share)
    return parts


def gathered_bytes(model: object, mesh: object, saved: Savers) -> float:
    """Bytes of the weights FSDP gathers to one chip beside its own shard (B). Chapter :ref:`ch-sharding`."""
    per_param = gathered_bytes_per_param(model, saved.adapter, saved.fp8)
    return local_params(model, mesh) * per_param * (1 - 1 / fsdp_shards(mesh))


def saver_work(model, cluster, mesh, batch, recipe, recompute, zero, saved, found, names) -> tuple[dict, list]:
    """The work parts (``hwlib.pricing.Part``) the savers add to a step (a quantized base's ``dequantize``, FP8's
    ``fp8 scaling``) and its collectives ``found`` as the savers change them: ``names`` (the gradient parts, the
    FSDP part) carry the adapters' gradients alone and the base gathered at its dtype; the host link's copies
    join them. Chapter :ref:`ch-sharding`."""
    adapter, offload, fp8 = saved.adapter, saved.offload, saved.fp8
    if saved == NO_SAVERS:
        return {}, found
    share, parts = local_params(model, mesh) / model.params(), {}
    if adapter is not None or fp8 is not None:
        gathered = gathered_bytes_per_param(model, adapter, fp8) / BF16_BYTES
        found = rescale_collectives(found, names[0], names[1], trained_share(model, adapter), gathered)
    if adapter is not None and adapter.quantized:
        parts["dequantize"] = Part(0.0, dequantize_bytes(model, adapter, share, batch.micro_batches, recompute))
    if fp8 is not None:
        linear = linear_params(model) * share
        cast = scaling_bytes(model, fp8, batch.tokens, batch.micro_batches, linear, recompute, mesh.n_chips)
        parts["fp8 scaling"] = Part(0.0, cast)
    if offload is not None:  # the parameters this chip updates; one micro-batch's kept activations
        updated = updated_params(model, mesh, zero, adapter)
        sequences = batch.micro_tokens / batch.seq_len
        options = dict(tp=mesh.tp, pp=mesh.pp, cp=mesh.cp, ep=mesh.ep, recompute=recompute)
        kept = chip_bytes(model, recipe, batch.seq_len, sequences, **options)["activations"]
        found = [*found, *host_transfers(offload, cluster, updated, batch.micro_batches, kept)]
    return parts, list(found)


def updated_params(model: object, mesh: object, zero: int, adapter: LoRA | None) -> float:
    """Parameters one chip updates each step: its tp x pp share of those trained, split over the FSDP ranks and,
    under ZeRO 1 or 2, over the dp ranks. Chapter :ref:`ch-sharding`."""
    updated = trained_share(model, adapter) * local_params(model, mesh) / fsdp_shards(mesh)
    return updated / (mesh.dp if zero else 1)


def update_bytes(model: object, mesh: object, recipe: object, zero: int, saved: Savers) -> float:
    """HBM bytes one chip's optimizer update moves each step (B): for each parameter it updates, the gradient read,
    the fp32 master copy and the optimizer state read and written, the new weight written (the weight read and
    written where there is no master copy); only the weights where the host runs the update (optimizer offload).
    Mixed-precision Adam: 2 + 2 (4 + 8) + 2 = 28 B a parameter, as a fused optimizer kernel streams them once.
    Chapter :ref:`ch-sharding`."""
    updated = updated_params(model, mesh, zero, saved.adapter)
    state = require_recipe(recipe)
    if saved.offload is not None and saved.offload.optimizer:
        return updated * state.weights
    weights = state.weights if state.master else 2 * state.weights  # written, or read and written in place
    return updated * (state.gradients + 2 * (state.master + state.optimizer) + weights)
