"""The engine a serving simulation runs: its scheduler's state and its steps' prices.

``hw.simulate_serving`` (``hwlib.serving.simulate``) says what the engine does; here is how it does it, step by
step, fast: the running requests' state in one array, decode-only stretches priced together; it returns a
``SimulatedServing`` (``hwlib.serving.served``). Chapter :ref:`ch-serving-many`.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from hwlib.data import assumptions
from hwlib.efficiency import resolve
from hwlib.memory import usable_bytes
from hwlib.placement import serving_place
from hwlib.serving.priced import Priced
from hwlib.serving.pricing import held_weight_bytes
from hwlib.serving.served import SimulatedServing, line_ends, steps_to_reach

SPECULATIVE_STRETCH = 1024
"""The most speculative decode steps drawn and priced together."""


def front_end_waits(rng, mean_s: float, count: int) -> np.ndarray:
    """Each of ``count`` requests' time in the server's front end (s), drawn with mean ``mean_s`` as
    ``assumptions.FRONT_END_SPREAD`` says, from a stream of its own (the run's other draws stay as they were)."""
    if not mean_s:
        return np.zeros(count)
    if assumptions.FRONT_END_SPREAD == "exponential":
        return rng.spawn(1)[0].exponential(mean_s, count)
    return np.full(count, float(mean_s))


class Engine:
    """One engine: the model's prices (``Priced``) and its drafter's, its cache room and its scheduler's
    limits."""

    def __init__(
        self, model, where, n_chips, precision, options, budget, max_sequences, block_tokens, chunked, spec, reserve
    ):
        self.model, self.spec = model, spec
        chip, topology = serving_place(where, model, n_chips)
        per_decode = spec.draft_tokens + 1 if spec else 1
        self.target = Priced(
            model, chip, topology, n_chips, precision, options, max(budget, max_sequences * per_decode)
        )
        self.target.graphed_new = per_decode  # a speculative decode verifies its drafts in a captured graph
        self.drafter = None
        if spec is not None:
            drafting = {**options, "expert_parallel": False, "attention_dp": False}
            self.drafter = Priced(spec.drafter(model), chip, topology, n_chips, precision, drafting, max_sequences)
        self.count, self.table = n_chips, self.target.table
        self.kv_per_token = self.target.kv_per_token
        self.budget, self.block, self.chunked = budget, block_tokens, chunked
        self.max_sequences = min(max_sequences, max(budget // per_decode, 1))  # a step verifies every decode's drafts
        self.reserve = reserve  # admit only while the cache holds each request's prompt and whole answer
        free = float(usable_bytes(chip, 1.0, n_chips)) - held_weight_bytes(
            model, precision.weight_dtype, n_chips, options.get("attention_dp", False)
        )
        self.room = resolve(chip, precision.compute_dtype, options["efficiency"]).kv_fraction * free
        if self.room <= 0:
            raise ValueError(f"{model.name}'s weights do not fit on {n_chips} x {chip.label}")

    def held_bytes(self, tokens: np.ndarray) -> np.ndarray:
        """KV bytes each of sequences of ``tokens`` tokens holds, in whole blocks."""
        blocks = -(-np.asarray(tokens) // self.block) * self.block
        if self.kv_per_token is not None:
            return blocks * self.kv_per_token
        return np.asarray(self.table.kv_bytes(blocks, self.target.kv_dtype)) * self.target.copies

    def one_held_bytes(self, tokens: int) -> float:
        """``held_bytes`` of one sequence of ``tokens`` tokens, as a number."""
        if self.kv_per_token is not None:
            return -(-tokens // self.block) * self.block * self.kv_per_token
        return float(self.held_bytes(np.array([tokens]))[0])

    def step_s(self, tokens: int, sequences: int, new: np.ndarray, context: np.ndarray, verifying=None) -> float:
        """Seconds of one step whose sequences each take ``new`` tokens after ``context``, with the drafter's k
        single-token steps over the sequences that verify drafts: ``verifying`` (a mask over the sequences), else
        those that take k + 1 tokens. A prompt or a prompt chunk drafts nothing."""
        seconds = float(self.target.step_s(tokens, sequences, new, context))
        if self.drafter is not None:
            verifying = np.asarray(new) == self.spec.draft_tokens + 1 if verifying is None else verifying
            drafting = context[verifying]
            if drafting.size:
                ahead = np.arange(self.spec.draft_tokens)[:, None]
                seconds += float(np.sum(self.drafter.step_s(drafting.size, drafting.size, 1.0, drafting + ahead)))
        return seconds

    def decode_s(self, context: np.ndarray, steps: int) -> np.ndarray:
        """Seconds of ``steps`` consecutive decode steps of the model alone, the first at ``context``."""
        return self.target.decode_s(context, steps)

    def speculative_steps(self, context: np.ndarray, steps: int, rng) -> tuple[np.ndarray, np.ndarray]:
        """Seconds of ``steps`` consecutive speculative decode steps from ``context`` (each sequence verifying
        k + 1 tokens after the drafter's k single-token steps), and the tokens each sequence gains in each (1 and
        its accepted drafts, drawn), as arrays over (steps, sequences)."""
        k, acceptance = self.spec.draft_tokens, self.spec.acceptance
        shape = (steps, context.size)
        accepted = rng.geometric(1.0 - acceptance, shape) - 1 if acceptance < 1 else np.full(shape, k)
        gains = 1 + np.minimum(accepted, k)
        contexts = context + np.cumsum(gains, axis=0) - gains  # each step's, before its gains
        b = context.size
        seconds = self.target.step_s(b * (k + 1), b, np.full(b, k + 1.0), contexts)
        for ahead in range(k):
            seconds = seconds + self.drafter.step_s(b, b, 1.0, contexts + ahead)
        return np.atleast_1d(seconds), gains

    def decode_line(self, context: np.ndarray) -> tuple[float, float, int] | None:
        """``Priced.decode_line`` of the model alone."""
        return self.target.decode_line(context)


def run(
    engine: Engine,
    arrival,
    prompts,
    answers,
    cached,
    rng,
    prefilled=False,
    concurrency=None,
    delay_s=0.0,
    recv_interval=1,
):
    """The engine's steps until every request has finished (see the module docstring).

    The running requests' state is one array, a column each in admission order: the request, its tokens to
    prefill (the prompt; after a preemption what it had generated too), its tokens prefilled (a prefix hit starts
    past the shared prefix), its tokens generated, and those a preemption folded into its prompt. ``prefilled``
    requests arrive with their prompt's cache and first token (a decode pool's). With ``concurrency`` C the clients
    are a benchmark's closed loop: the first C requests arrive at once and each that finishes sends the next. Each
    request reaches the scheduler after the server's work before it schedules it, drawn for each request with mean
    ``delay_s`` (``assumptions.FRONT_END_SPREAD``), and in the order sent; the result's arrivals are the sends. The
    scheduler takes in the requests that have reached it after every step that took prompt tokens, after every
    ``recv_interval``-th decode step since, and whenever it runs nothing (SGLang's ``SchedulerRecvSkipper``)."""
    count = len(arrival)
    sends = np.asarray(arrival, dtype=float).copy()
    if concurrency is not None:
        sends = np.where(np.arange(count) < concurrency, 0.0, np.inf)
    waits = front_end_waits(rng, delay_s, count)
    arrival = np.maximum.accumulate(sends + waits)
    issued = count if concurrency is None else min(concurrency, count)
    first, finish = np.full(count, np.nan), np.full(count, np.nan)
    waiting: deque[int] = deque()
    state = np.zeros((5, engine.max_sequences + 1), dtype=np.int64)
    n = 0  # running requests
    carried: dict[int, int] = {}  # a preempted request's generated tokens while it waits
    t, next_arrival, preemptions = 0.0, 0, 0
    decodes, receive_now = 0, True  # decode steps since the last that took prompts; whether to take in arrivals now

    def received(steps: int) -> int:
        """The fewest decode steps from ``steps`` on after which the scheduler takes in new requests."""
        return steps + (-(decodes + steps)) % recv_interval

    ends: list[np.ndarray] = []
    lines: list[tuple[float, int, float, float]] = []  # decode stretches as (start, steps, first, growth)
    logged: list[tuple[int, int, int]] = []  # (steps, tokens, sequences) per priced stretch
    spec, room, per_step, cap = engine.spec, engine.room, engine.budget, engine.max_sequences
    per_decode = spec.draft_tokens + 1 if spec else 1
    held_bytes, one_held_bytes, block = engine.held_bytes, engine.one_held_bytes, engine.block
    # below this many tokens held (with a block of slack per sequence) the cache cannot be full: skip the exact count
    safe_tokens = room / engine.kv_per_token if engine.kv_per_token else 0.0

    def fits(held: np.ndarray, extra: object) -> bool:
        """Whether the cache holds every sequence after ``extra`` more tokens each (a number, or one per sequence)."""
        extra = np.broadcast_to(extra, held.shape)
        if float(held.sum()) + float(np.sum(extra + block)) < safe_tokens:
            return True
        return float(held_bytes(held + extra).sum()) <= room

    def admit(i: int, n: int) -> int:
        gen = carried.pop(i, 0)
        if prefilled and not gen:
            state[:, n] = (i, prompts[i], prompts[i], 1, 0)
        else:
            state[:, n] = (i, prompts[i] + gen, cached[i], gen, gen)
        return n + 1

    while next_arrival < count or waiting or n:
        while (
            next_arrival < count
            and arrival[next_arrival] <= t
            and (n == 0 or receive_now or not decodes % recv_interval)
        ):
            waiting.append(next_arrival)
            next_arrival += 1
        receive_now = False
        if not waiting and not n:
            t = float(arrival[next_arrival])
            continue
        ids, target, done, generated, folded = state[:, :n]
        held = done + generated - folded
        decoding = done >= target
        chunk = None
        if waiting and n < cap:  # admission: prompts join while the cache has room for them
            whole = prompts[ids] + answers[ids] if engine.reserve else held
            used = float(held_bytes(whole).sum()) if n else 0.0
            budget = per_step if not engine.chunked else per_step - int(decoding.sum()) * per_decode
            if engine.chunked and n and budget > 0:
                left = np.where(decoding, 0, target - done)
                chunk = np.minimum(np.maximum(budget - (np.cumsum(left) - left), 0), left)
                budget -= int(chunk.sum())
            start = n
            while waiting and n < cap and budget > 0:
                i = waiting[0]
                need = 0 if prefilled and i not in carried else int(prompts[i] + carried.get(i, 0) - cached[i])
                grow = one_held_bytes(int(prompts[i] + (answers[i] if engine.reserve else carried.get(i, 0) + 1)))
                # without chunking a step takes whole prompts up to its budget, and any one prompt alone (a
                # preempted request recomputes its prompt and what it generated, which may exceed the budget)
                too_long = need > budget and not engine.chunked and n > start
                if too_long or used + grow > room:
                    break
                waiting.popleft()
                n = admit(i, n)
                used += grow
                budget -= min(need, budget)
            if n > start:
                ids, target, done, generated, folded = state[:, :n]
                fresh = np.minimum(target[start:] - done[start:], np.maximum(per_step, 0))
                if engine.chunked:  # the budget left, in admission order
                    room_left = (
                        per_step - int(decoding.sum()) * per_decode - (int(chunk.sum()) if chunk is not None else 0)
                    )
                    fresh = np.minimum(np.maximum(room_left - (np.cumsum(fresh) - fresh), 0), fresh)
                    chunk = np.concatenate([chunk if chunk is not None else np.zeros(start, dtype=np.int64), fresh])
                    decoding = np.concatenate([decoding, np.zeros(n - start, dtype=bool)])
                elif (target[start:] > done[start:]).any():  # prefill-first: prefill the prompts, decode nothing
                    chunk = np.concatenate([np.zeros(start, dtype=np.int64), target[start:] - done[start:]])
                    decoding = np.zeros(n, dtype=bool)
                else:  # prefilled requests (a decode pool's) join the decoding ones
                    decoding = done >= target
                held = done + generated - folded
        elif engine.chunked and n and not decoding.all():
            budget = per_step - int(decoding.sum()) * per_decode
            left = np.where(decoding, 0, target - done)
            chunk = np.minimum(np.maximum(budget - (np.cumsum(left) - left), 0), left)
        if chunk is not None and not chunk.any():
            chunk = None
        if chunk is None:  # the cache must take every decode's new tokens: preempt the latest admitted until it does
            while n > 1 and not fits(held, np.where(decoding, per_decode, 0)):  # a stalled prompt's blocks too
                n -= 1
                victim = int(ids[n])
                carried[victim] = int(generated[n])
                waiting.appendleft(victim)
                preemptions += 1
                ids, target, done, generated, folded = state[:, :n]
                held, decoding = held[:n], decoding[:n]
        if chunk is None and decoding.all() and n and (answers[ids] <= generated).any():
            over = answers[ids] <= generated  # arrived with its answer complete (a one-token answer, decode pool)
        elif chunk is None and decoding.all() and n and spec is not None:
            # speculative decode-only steps, priced together with their drawn gains until a sequence finishes
            left = answers[ids] - generated
            steps = min(int(left.min()), SPECULATIVE_STRETCH)
            if steps > 1 and not fits(held, per_decode * steps):
                steps = 1
            seconds, gains = engine.speculative_steps(held - 1, steps, rng)
            times = np.cumsum(seconds)
            finishing = (np.cumsum(gains, axis=0) >= left).any(axis=1)
            steps = int(np.argmax(finishing)) + 1 if finishing.any() else steps
            if next_arrival < count and not waiting:
                steps = min(steps, received(int(np.searchsorted(times, arrival[next_arrival] - t)) + 1))
            ends.append(t + times[:steps])
            t += float(times[steps - 1])
            logged.append((steps, n * per_decode, n))
            decodes += steps
            generated += gains[:steps].sum(axis=0)
            over = generated >= answers[ids]
        elif chunk is None and decoding.all() and n:
            # decode-only steps: admission is blocked (or no request waits) until a sequence finishes or, with none
            # waiting, the next request arrives; price those steps together
            left = answers[ids] - generated
            steps = int(left.min())
            if steps > 1 and not fits(held, steps):
                steps = 1
            line = engine.decode_line(held - 1)
            if line is None:
                times = np.cumsum(engine.decode_s(held - 1, steps))
                if next_arrival < count and not waiting:
                    steps = min(steps, received(int(np.searchsorted(times, arrival[next_arrival] - t)) + 1))
                ends.append(t + times[:steps])
                t += float(times[steps - 1])
            else:  # steps of first + growth x i seconds: the stretch to the next arrival in closed form
                first_s, growth_s, straight = line
                steps = int(min(steps, straight))
                if next_arrival < count and not waiting and np.isfinite(arrival[next_arrival]):
                    steps = min(steps, received(steps_to_reach(first_s, growth_s, float(arrival[next_arrival]) - t)))
                lines.append((t, steps, first_s, growth_s))
                t += steps * first_s + growth_s * steps * (steps - 1) / 2
            logged.append((steps, n, n))
            decodes += steps
            generated += steps
            over = left <= steps
        else:
            chunk = np.zeros(n, dtype=np.int64) if chunk is None else chunk
            new = np.where(decoding, per_decode, chunk)
            tokens = int(new.sum())
            if tokens == 0:  # nothing fits: wait for the next arrival
                if next_arrival >= count or not np.isfinite(arrival[next_arrival]):
                    raise RuntimeError("the engine can take no waiting request and runs none")
                t, receive_now = float(arrival[next_arrival]), True
                continue
            # a decoding sequence feeds its last token, whose keys and values its cache does not hold yet
            context = np.where(decoding, held - 1, done)
            stepping = new > 0
            t += float(engine.step_s(tokens, int(stepping.sum()), new[stepping], context[stepping], decoding[stepping]))
            ends.append(np.array([t]))
            logged.append((1, tokens, int(stepping.sum())))
            prompted = bool(chunk.any())  # a step that took prompt tokens makes the scheduler receive next
            decodes, receive_now = (0, True) if prompted else (decodes + 1, False)
            done += chunk
            complete = (chunk > 0) & (done >= target)
            first[ids[complete & (generated == 0)]] = t
            generated += complete  # the step that finishes a prompt samples a token
            if decoding.any():
                gained = decoding.astype(np.int64)
                if spec is not None:
                    accepted = (
                        rng.geometric(1.0 - spec.acceptance, n) - 1
                        if spec.acceptance < 1
                        else np.full(n, spec.draft_tokens)
                    )
                    gained += decoding * np.minimum(accepted, spec.draft_tokens)
                generated += gained
            over = (generated >= answers[ids]) & (done >= target)
        if over.any():
            finish[ids[over]] = t
            sent = min(int(over.sum()), count - issued)  # each finished client's next request, now
            if sent:
                sends[issued : issued + sent] = t
                after = arrival[issued - 1] if issued else 0.0
                arrival[issued : issued + sent] = np.maximum.accumulate(
                    np.maximum(t + waits[issued : issued + sent], after)
                )
                issued += sent
            kept = state[:, :n][:, ~over]
            n = kept.shape[1]
            state[:, :n] = kept
    counts = np.array(logged, dtype=np.int64).reshape(-1, 3)
    return SimulatedServing(
        arrival_s=sends,
        first_token_s=first,
        finish_s=finish,
        prompt_tokens=prompts,
        output_tokens=answers,
        step_end_s=np.sort(np.concatenate([*ends, line_ends(lines)])),
        step_tokens=np.repeat(counts[:, 1], counts[:, 0]),
        step_sequences=np.repeat(counts[:, 2], counts[:, 0]),
        preemptions=preemptions,
        n_chips=engine.count,
    )
