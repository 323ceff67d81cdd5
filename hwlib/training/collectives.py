"""A training step's collectives (``hwlib.pricing.Collective``) on the groups of its mesh, and what each hides behind:
``hwlib.training.step`` prices them. Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from hwlib.data.records.layer_rules import EP_ALL_TO_ALLS_PER_LAYER
from hwlib.placement import group_topology
from hwlib.pricing import Collective, collective_s
from hwlib.training.mesh import WIRE_BYTES, fsdp_shards, local_params, stride_groups

TP_PASSES = 2
"""Passes over a micro-batch that run the tensor-parallel all-reduces: forward and backward."""
TP_PASSES_FULL_RECOMPUTE = 3
"""With full recomputation the forward runs again in the backward pass, its all-reduces too."""


def step_collectives(
    model, cluster, mesh, batch, recompute, keep_gathered, zero, imbalance=1.0, ep_overlap=False, dispatch=1.0
) -> list:
    """The step's collectives (``hwlib.pricing.Collective``) on their groups, those that overlap compute first in
    the order they take the links: context parallelism's behind attention, the gradient all-reduce behind the
    backward pass, FSDP's behind all of it; tensor parallelism's and pipeline sends exposed. The expert all-to-alls
    are exposed unless a schedule hides them (DualPipe) or ``ep_overlap`` runs one micro-batch's forward beside
    another's backward so that each one's all-to-alls hide behind the other's compute (Megatron-Core's
    ``--overlap-moe-expert-parallel-comm``, "EP A2A Overlap" in its MoE README); a dispatch that leaves the node goes
    once to each node and is forwarded on NVLink as it arrives, so the two transfers take the time of the slower
    ("communications via IB and NVLink are fully overlapped", DeepSeek-V3, arXiv:2412.19437, Sec. 3.2.2). ``dispatch``
    is the share of bf16's bytes the all-to-alls move (``hwlib.training.fp8.dispatch_share``)."""
    table, count = model.table(), mesh.n_chips
    topology = {
        name: group_topology(cluster, size, stride, count) for name, (size, stride) in stride_groups(mesh).items()
    }
    layers = model.n_layers / mesh.pp
    per_pass = layers * batch.micro_batches  # each layer once per micro-batch
    micro = batch.micro_tokens / mesh.cp  # tokens of one micro-batch on one context-parallel rank
    passes = TP_PASSES_FULL_RECOMPUTE if recompute == "full" else TP_PASSES  # forward, backward (and recompute)
    found = []
    if mesh.cp > 1:  # keys and values gathered forward, their gradients reduce-scattered backward
        kv = batch.micro_tokens * table.cp_elements_per_token() * WIRE_BYTES / mesh.tp  # the whole sequence's K, V
        for kind in ("all-gather", "reduce-scatter"):
            found.append(Collective("cp all-gather", kind, kv, topology["cp"], per_pass, "attention"))
    shards = fsdp_shards(mesh)
    if mesh.dp > 1:  # gradients all-reduced, bucket by bucket during the backward pass (over cp too without FSDP)
        grads = local_params(model, mesh) * WIRE_BYTES / shards
        group = (
            topology["dp"] if shards > 1 or mesh.cp == 1 else group_topology(cluster, mesh.dp * mesh.cp, mesh.tp, count)
        )
        if zero == 2 and batch.micro_batches > 1:  # sharded gradients: each micro-batch's reduce-scattered
            found.append(Collective("dp all-reduce", "reduce-scatter", grads, group, batch.micro_batches, "backward"))
            found.append(Collective("dp all-reduce", "all-gather", grads, group, 1, "compute"))  # updated weights
        else:  # an all-reduce, or ZeRO-1's reduce-scatter and all-gather of the same bytes, in the last backward
            found.append(Collective("dp all-reduce", "all-reduce", grads, group, 1, "last backward"))
    if shards > 1:  # weights gathered for the passes, gradients reduce-scattered
        shard_group = group_topology(cluster, shards, mesh.tp, count)
        shard = local_params(model, mesh) * WIRE_BYTES
        gathers, reduces = (1, 1) if keep_gathered else (2 * batch.micro_batches, batch.micro_batches)
        name = "fsdp all-gather + reduce-scatter"
        found.append(Collective(name, "all-gather", shard, shard_group, gathers, "compute"))
        found.append(Collective(name, "reduce-scatter", shard, shard_group, reduces, "compute"))
    if mesh.tp > 1:  # per layer per pass, the micro-batch's hidden state; not overlapped
        tp_bytes = micro * table.tp_elements_per_token() * WIRE_BYTES
        calls = passes * table.tp_allreduces_per_layer * per_pass
        found.append(Collective("tp all-reduce", "all-reduce", tp_bytes, topology["tp"], calls, None, "compute"))
    if mesh.pp > 1:  # activations forward and their gradients back, per micro-batch, on the critical path
        send = micro * table.pp_elements_per_token() * WIRE_BYTES / mesh.tp  # Megatron scatters over tp ranks
        pipeline = batch.pipeline
        fill, steady = 2 * (mesh.pp - 1) * pipeline.p2p_factor, 2 * batch.micro_batches * pipeline.p2p_factor
        if "pp send/recv" in pipeline.hidden_comm:  # DualPipe overlaps them all
            found.append(Collective("pp send/recv", "send", send, topology["pp"], fill + steady, "compute"))
        elif pipeline.schedule == "interleaved-1f1b":  # Megatron overlaps the steady phase's (overlap_p2p_comm)
            found.append(Collective("pp send/recv", "send", send, topology["pp"], fill))
            found.append(Collective("pp send/recv", "send", send, topology["pp"], steady, "compute"))
        else:
            found.append(Collective("pp send/recv", "send", send, topology["pp"], fill + steady))
    if mesh.ep > 1:  # dispatch and combine per MoE layer per pass, each tensor-parallel rank 1/tp of the tokens
        ep_group = group_topology(cluster, mesh.ep, mesh.tp * mesh.cp, count)
        tokens = micro / mesh.tp * WIRE_BYTES * imbalance * dispatch  # the busiest rank's bytes per element
        calls = passes * EP_ALL_TO_ALLS_PER_LAYER * per_pass
        hidden = "ep all-to-all" in (batch.pipeline.hidden_comm if batch.pipeline else ())
        overlaps = "compute" if hidden or (ep_overlap and batch.micro_batches > 1) else None
        routed = tokens * table.ep_elements_per_token()
        dispatch = Collective("ep all-to-all", "all-to-all", routed, ep_group, calls, overlaps, "compute")
        if ep_group.where == "hierarchy":  # once to each node across the NICs, forwarded on NVLink as it arrives
            domains = mesh.ep // ep_group.inner.n_chips
            across = tokens * table.ep_remote_elements_per_token(domains) * domains / (domains - 1)
            phases = (
                replace(dispatch, n_bytes=across, topology=ep_group.outer),
                replace(dispatch, topology=ep_group.inner),
            )
            dispatch = max(phases, key=lambda phase: float(np.max(collective_s(phase))))  # the two overlap
        found.append(dispatch)
    return found
