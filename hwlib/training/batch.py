"""How a training step's global batch splits over a mesh: sequences per data-parallel rank, micro-batches, and the
pipeline schedule's cost for them (``hwlib.training.schedules``), its bubble stretched by the slowest chunk of whole
layers (``chunk_pace``). Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

from hwlib._checks import one_of, positive
from hwlib.training.schedules import (
    EMBEDDING_AND_LOSS_CHUNKS,
    SCHEDULES,
    PipelineCost,
    default_schedule,
    pipeline_schedule,
)


@dataclass(frozen=True)
class Batch:
    """How one step's global batch splits: sequences of ``seq_len`` tokens, the tokens each data-parallel rank
    takes, its micro-batches of ``micro_tokens``, the interleaved chunks per pipeline stage and, under a pipeline,
    what its schedule costs (``hwlib.training.schedules.PipelineCost``; None without one)."""

    seq_len: int
    tokens: float
    rank_tokens: float
    micro_tokens: float
    micro_batches: int
    chunks: int
    pipeline: PipelineCost | None = None


def split_batch(
    model, cluster, mesh, global_batch_tokens, seq_len, micro_batch_tokens, interleave, schedule=None
) -> Batch:
    """The batch's split over the mesh, or a ValueError naming what does not divide. Chapter :ref:`ch-sharding`."""
    sequence = int(positive("seq_len", seq_len, integral=True))
    batch_sequences = float(positive("global_batch_tokens", global_batch_tokens)) / sequence
    rank_tokens = batch_sequences * sequence / mesh.data_parallel
    if micro_batch_tokens is None:  # without a pipeline a rank runs its whole batch at once; with one, a sequence
        micro = rank_tokens if mesh.pp == 1 else float(sequence)
    else:
        micro = float(positive("micro_batch_tokens", micro_batch_tokens))
    chunks = int(positive("interleave", interleave, integral=True))
    if cluster.max_chips is not None and mesh.n_chips > cluster.max_chips:
        raise ValueError(f"mesh needs {mesh.n_chips} chips; {cluster.name} holds at most {cluster.max_chips}")
    problems = [
        (model.n_heads % mesh.tp != 0, f"tp={mesh.tp} does not divide the {model.n_heads} attention heads"),
        (
            mesh.pp * chunks > most_chunks(model, mesh),
            f"pp x interleave = {mesh.pp * chunks} exceeds the {model.n_layers} layers"
            + (" with the embedding and the loss" if mesh.pp > 1 else ""),
        ),
        (sequence % mesh.cp != 0, f"cp={mesh.cp} does not divide the {sequence}-token sequences"),
        (
            batch_sequences != round(batch_sequences) or round(batch_sequences) % mesh.data_parallel != 0,
            f"the global batch of {batch_sequences:g} sequences does not split over dp x fsdp = {mesh.data_parallel}",
        ),
        (
            model.is_moe and model.n_experts % mesh.ep != 0,
            f"ep={mesh.ep} does not divide the {model.n_experts} experts",
        ),
        (not model.is_moe and mesh.ep > 1, "ep > 1 needs a mixture-of-experts model"),
    ]
    for bad, why in problems:
        if bad:
            raise ValueError(f"mesh {mesh}: {why}")
    if micro % sequence or micro > rank_tokens or (rank_tokens / micro) != round(rank_tokens / micro):
        raise ValueError(
            f"mesh {mesh}: micro_batch_tokens={micro:g} must be whole sequences of {sequence} tokens "
            f"dividing the {rank_tokens:g} tokens each data-parallel rank takes per step"
        )
    micro_batches = int(round(rank_tokens / micro))
    if schedule is not None:
        one_of("schedule", schedule, SCHEDULES)
    pipeline = None
    if mesh.pp > 1:
        name = schedule or default_schedule(cluster.chip.family, chunks)
        try:
            pipeline = _schedule(name, mesh.pp, micro_batches, chunks)
        except ValueError as error:
            raise ValueError(f"mesh {mesh}: {error}") from error
        if pipeline.model_chunks > most_chunks(model, mesh):
            raise ValueError(
                f"mesh {mesh}: {name} cuts the {model.n_layers} layers, the embedding and the loss into "
                f"{pipeline.model_chunks}"
            )
        pace = chunk_pace(model.n_layers, pipeline.model_chunks)
        pipeline = replace(pipeline, bubble_share=pace * (1.0 + pipeline.bubble_share) - 1.0)
    return Batch(sequence, batch_sequences * sequence, rank_tokens, micro, micro_batches, chunks, pipeline)


def chunk_pace(n_layers: int, chunks: int) -> float:
    """The slowest pipeline chunk's layers over the mean when ``n_layers`` whole layers are cut into ``chunks``:
    ceil(L / c) c / L, or with the embedding and the loss in a layer's place each, ceil((L + 2) / c) c / (L + 2),
    whichever is evener. Every slot of the schedule waits for the slowest chunk, so a step takes the even
    schedule's time times this pace (``hwlib.training.schedules.uneven_stages``): DeepSeek-V3's 61 layers on 16
    stages run at 64/63. Chapter :ref:`ch-sharding`."""
    return min(math.ceil(units / chunks) * chunks / units for units in (n_layers, n_layers + EMBEDDING_AND_LOSS_CHUNKS))


def most_chunks(model, mesh) -> int:
    """The most pieces a pipeline may cut ``model`` into: its layers, and the embedding and the loss each in a
    chunk's place (``EMBEDDING_AND_LOSS_CHUNKS``); the layers alone without a pipeline."""
    return model.n_layers + (EMBEDDING_AND_LOSS_CHUNKS if mesh.pp > 1 else 0)


@functools.lru_cache(maxsize=4096)
def _schedule(name: str, pp: int, micro_batches: int, chunks: int) -> PipelineCost:
    """``pipeline_schedule`` of one pipeline, worked out once (a planner asks for the same ones over and over)."""
    return pipeline_schedule(name, pp, micro_batches, chunks)
