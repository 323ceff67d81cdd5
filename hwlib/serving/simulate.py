"""Serving many users: a request-level simulation of iteration-level batching over a paged KV cache.

Requests arrive (Poisson at ``arrival_rate_per_s``, all at once, or at given times) with their prompt and answer
lengths. An engine runs one step after another (Yu et al., "Orca", OSDI 2022; Kwon et al., "vLLM", SOSP 2023):

* **admission**: a waiting request joins the running batch, first come first served, while the batch holds fewer
  than ``max_sequences`` and the KV cache has room for its prompt; the cache is the engine's share of the memory
  the weights leave (``Efficiency.kv_fraction``), held in blocks of ``block_tokens`` per sequence and per layer
  as much as the layer's window keeps; a request whose prompt and answer the cache cannot hold alone is refused
  (a ValueError), as an engine refuses it;
* **a step**: without ``chunked_prefill`` a step that admits prompts prefills them whole (up to
  ``max_batch_tokens`` together) and decodes nothing, as vLLM's first scheduler did; with it every running
  sequence decodes one token and the step's leftover budget of ``max_batch_tokens`` goes to prefill chunks
  (Agrawal et al., "Sarathi-Serve", OSDI 2024);
* **preemption**: when a decode needs a block and none is free, the latest admitted request gives its blocks back
  and waits at the head of the queue to recompute its prompt and what it had generated;
* **prefix caching**: the first ``prefix_tokens`` of every prompt are shared; a request finds them cached with
  probability ``prefix_hit_rate`` and prefills only the rest (the shared blocks are stored once);
* **speculative decoding** (``speculation``): each decode verifies k + 1 tokens and its drafter proposes k,
  and a sequence gains 1 + the accepted draft tokens, drawn per step; the engine runs at most
  ``max_batch_tokens`` / (k + 1) sequences, so that a step verifies every decode's drafts within its budget.

Each step is priced by ``hwlib.serving.pricing`` (the forecast, or ``estimate="bound"`` for the best case) from
the tokens and the sequences in it. The first token comes at the end of the step that finishes the prompt. A
Python loop runs over steps, numpy over the sequences of a step. Chapters :ref:`ch-serving-many` and
:ref:`ch-serving-techniques` (prefix caching, speculation, disaggregation).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from hwlib._checks import Number, as_real_array, non_negative, one_of, positive, seed_value, whole_count
from hwlib.data import assumptions, clusters
from hwlib.data.records import Chip, Cluster, ModelShape, require
from hwlib.data.serving_engines import ENGINE_PROFILES
from hwlib.efficiency import Efficiency, require_efficiency, resolve
from hwlib.precision import Precision, as_precision
from hwlib.serving.engine import Engine, run
from hwlib.serving.pricing import held_weight_bytes
from hwlib.serving.served import SimulatedServing
from hwlib.serving.speculative import Speculation
from hwlib.units import format_bytes

ESTIMATES = ("forecast", "bound")
"""What prices a simulated step: the forecast (what engines reach) or the bound (every chip at its peak)."""


def _lengths(name: str, value: Number, count: int) -> np.ndarray:
    lengths = np.asarray(positive(name, value, integral=True), dtype=np.int64)
    if lengths.ndim and lengths.shape != (count,):
        raise ValueError(f"{name} must be one length or n_requests={count:,} of them, got shape {lengths.shape}")
    return np.broadcast_to(lengths, (count,)).copy()


def _arrivals(arrival_rate_per_s: float, arrivals_s: Number | None, count: int, rng: np.random.Generator):
    if arrivals_s is not None:
        times = np.asarray(as_real_array("arrivals_s", arrivals_s, minimum=0.0), dtype=float)
        if times.shape != (count,) or (np.diff(times) < 0).any():
            raise ValueError(f"arrivals_s must be n_requests={count} times in increasing order")
        return times
    rate = float(positive("arrival_rate_per_s", arrival_rate_per_s, allow_inf=True))
    if np.isinf(rate):
        return np.zeros(count)
    if count / rate > assumptions.LONGEST_SIMULATED_SPAN_S:
        raise ValueError(
            f"arrival_rate_per_s={rate:g} spreads {count:,} requests over {count / rate:.3g} s, beyond the "
            f"{assumptions.LONGEST_SIMULATED_SPAN_S:g} s whose steps a float64 time still resolves: raise the rate"
        )
    return np.cumsum(rng.exponential(1.0 / rate, count))


def simulate_serving(
    model: ModelShape,
    where: Chip | Cluster,
    n_chips: int = 1,
    *,
    arrival_rate_per_s: float = np.inf,
    prompt_len: Number = 1024,
    output_len: Number = 256,
    n_requests: int = 1000,
    arrivals_s: Number | None = None,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    activation_dtype: str = "bf16",
    compute_dtype: str = "bf16",
    max_batch_tokens: int | None = None,
    max_sequences: int | None = None,
    chunked_prefill: bool | None = None,
    block_tokens: int = 16,
    prefix_tokens: int = 0,
    prefix_hit_rate: float = 0.0,
    speculation: Speculation | None = None,
    prefill_chips: int | None = None,
    expert_parallel: bool = False,
    attention_dp: bool = False,
    efficiency: Efficiency | None = None,
    estimate: str = "forecast",
    seed: int = 0,
    precision: Precision | str | None = None,
    concurrency: int | None = None,
    reserve_output: bool | None = None,
    engine: str = "hwlib",
    recv_interval: int = 1,
) -> SimulatedServing:
    """Serve ``n_requests`` requests of ``model`` on ``n_chips`` tensor-parallel chips of ``where`` and return what
    each request saw (see the module docstring for the engine). ``prompt_len`` and ``output_len`` are one length
    or one per request (``hw.request_trace`` gives a public trace's); ``arrivals_s`` gives the arrival times
    instead of Poisson arrivals. ``seed`` fixes the arrivals, the prefix hits and the accepted draft tokens.

    ``prefill_chips`` splits the chips into a prefill pool of that many and a decode pool of the rest (Zhong et al.,
    "DistServe", OSDI 2024; Patel et al., "Splitwise", ISCA 2024): the prefill pool runs prefill-only steps (in chunks
    with ``chunked_prefill``) and gives each request its first token; its KV cache then crosses to the decode pool over
    the cluster's fabric (the node's links within a node, else the NICs, each chip of the smaller pool sending its
    share), and the decode pool decodes the rest. ``expert_parallel`` and ``attention_dp`` split the model as
    ``hw.inference_step`` does. ``precision`` (an ``hw.Precision`` or a key of ``hw.PRECISIONS``) replaces the four
    dtypes at once. ``concurrency`` C replaces the arrivals with a benchmark's closed loop of C clients, each sending
    its next request when its last one ends (vLLM's and SGLang's ``--max-concurrency`` with every request ready at
    once): C arrive together, and each finish brings the next. ``reserve_output`` admits a request only while the cache
    holds its prompt and its whole answer, so that none is ever preempted (TensorRT-LLM's default capacity scheduler,
    ``GUARANTEED_NO_EVICT``: tensorrt_llm/llmapi/llm_args.py, ``SchedulerConfig``, commit fcd3f316).
    ``recv_interval`` k has the scheduler take in newly arrived requests only every k-th step, and whenever it runs
    none (SGLang's ``--scheduler-recv-interval``, 1 by default, which some published recipes raise to 10 or 30).

    ``engine`` (a key of ``hwlib.data.serving_engines.ENGINE_PROFILES``: "vllm", "sglang", "trtllm", or "hwlib", the
    generic engine) sets what ``max_batch_tokens``, ``max_sequences``, ``chunked_prefill`` and ``reserve_output``
    default to, and the KV cache's share of memory where ``efficiency.kv_fraction`` is unset, to that engine's
    documented defaults on the chip (``EngineProfile``); but for the generic engine, which is the engine alone, the
    forecast adds a server front end's time per request before the engine sees it (``Efficiency.request_overhead_s``).
    The result names the profile, and each of those four settings given that differs from it
    (``SimulatedServing.engine``). Chapter :ref:`ch-serving-many`."""
    model = require(ModelShape, "model", model, "hw.model('llama-3-8b')")
    count = whole_count("n_requests", n_requests)
    if count > assumptions.MOST_SIMULATED_REQUESTS:
        raise ValueError(
            f"n_requests={count:,} is more than the {assumptions.MOST_SIMULATED_REQUESTS:,} one simulation takes"
        )
    one_of("estimate", estimate, ESTIMATES)
    profile = ENGINE_PROFILES[one_of("engine", engine, ENGINE_PROFILES)]
    chip = where.chip if isinstance(where, Cluster) else require(Chip, "where", where, "hw.chip('H100-SXM')")
    tier = profile.tier(chip)
    asked = dict(
        max_batch_tokens=max_batch_tokens,
        max_sequences=max_sequences,
        chunked_prefill=chunked_prefill,
        reserve_output=reserve_output,
        recv_interval=recv_interval,
    )
    recv_interval = whole_count("recv_interval", recv_interval)
    max_batch_tokens = tier.max_batch_tokens if max_batch_tokens is None else max_batch_tokens
    max_sequences = tier.max_sequences if max_sequences is None else max_sequences
    chunked_prefill = profile.chunked_prefill if chunked_prefill is None else chunked_prefill
    reserve_output = profile.reserve_output if reserve_output is None else reserve_output
    for name, flag in (
        ("chunked_prefill", chunked_prefill),
        ("expert_parallel", expert_parallel),
        ("attention_dp", attention_dp),
        ("reserve_output", reserve_output),
    ):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be True or False, got {flag!r}")
    if speculation is not None and not isinstance(speculation, Speculation):
        raise TypeError(f"speculation must be an hw.Speculation(...) or None, got {speculation!r}")
    rng = np.random.default_rng(seed_value("seed", seed))
    prompts, answers = _lengths("prompt_len", prompt_len, count), _lengths("output_len", output_len, count)
    if concurrency is not None:
        concurrency = whole_count("concurrency", concurrency)
        if arrivals_s is not None or not np.isinf(arrival_rate_per_s) or prefill_chips is not None:
            raise ValueError(
                "concurrency sets the arrivals itself: give no arrivals_s, arrival_rate_per_s or prefill_chips with it"
            )
    arrival = _arrivals(arrival_rate_per_s, arrivals_s, count, rng)
    budget = whole_count("max_batch_tokens", max_batch_tokens)
    if not chunked_prefill and prompts.max() > budget:
        raise ValueError(f"a prompt of {prompts.max():,} tokens exceeds max_batch_tokens={budget:,} without chunking")
    drafted = 1 + (speculation.draft_tokens if speculation is not None else 0)
    budget = min(budget, int(prompts.sum() + answers.sum()) + count * drafted)  # more never binds
    hit = float(np.asarray(as_real_array("prefix_hit_rate", prefix_hit_rate, minimum=0.0)))
    if hit > 1:
        raise ValueError(f"prefix_hit_rate must be in [0, 1], got {prefix_hit_rate!r}")
    prefix = int(non_negative("prefix_tokens", prefix_tokens, integral=True))
    if prefix >= prompts.min():
        raise ValueError(
            f"prefix_tokens={prefix:,} must be shorter than every prompt (the shortest: {prompts.min():,})"
        )
    if hit > 0 and prefix == 0:
        raise ValueError(f"prefix_hit_rate={hit:g} finds nothing to reuse: give prefix_tokens, the shared prefix")
    shared = np.full(count, prefix)
    cached = np.where(rng.random(count) < hit, shared, 0)
    precision = as_precision(
        precision,
        weight_dtype=weight_dtype,
        kv_dtype=kv_dtype,
        activation_dtype=activation_dtype,
        compute_dtype=compute_dtype,
    )
    chips = whole_count("n_chips", n_chips)
    # a limit above what the requests could ever fill never binds: the engine's tables are sized to what can
    limits = (min(whole_count("max_sequences", max_sequences), count), whole_count("block_tokens", block_tokens))
    label = _engine_label(profile, tier, asked)
    given = require_efficiency(efficiency)
    front_end = given.request_overhead_s is not None or profile.front_end
    overhead = float(resolve(chip, precision.compute_dtype, given).request_overhead_s)
    delay = overhead if estimate == "forecast" and front_end else 0.0

    def engine(size: int, chunked: bool, spec: Speculation | None, held: np.ndarray) -> Engine:
        share = given.kv_fraction
        if share is None:
            share = profile.kv_fraction(
                chip, size, held_weight_bytes(model, precision.weight_dtype, size, attention_dp)
            )
            if share <= 0:
                raise ValueError(
                    f"{model.name}'s weights do not fit on {size} x {chip.label} with room for a KV cache "
                    f"({profile.label})"
                )
        options = dict(
            expert_parallel=expert_parallel,
            attention_dp=attention_dp,
            efficiency=replace(given, kv_fraction=share),
            estimate=estimate,
            splits_attention=profile.splits_attention,
            eager_prefill=profile.eager_prefill,
        )
        built = Engine(model, where, size, precision, options, budget, *limits, chunked, spec, reserve_output)
        longest = int(np.argmax(prompts + held))  # the most tokens a request holds in this pool
        need = built.one_held_bytes(int(prompts[longest] + held[longest]))
        if need > built.room:  # an engine refuses a request its cache cannot hold alone
            raise ValueError(
                f"a request of {prompts[longest]:,} prompt and {held[longest]:,} answer tokens needs "
                f"{format_bytes(need)} of KV cache; {model.name}'s cache on {size} x {chip.label} holds "
                f"{format_bytes(built.room)} ({profile.label})"
            )
        return built

    if prefill_chips is None:
        served = run(
            engine(chips, chunked_prefill, speculation, answers),
            arrival,
            prompts,
            answers,
            cached,
            rng,
            False,
            concurrency,
            delay,
            recv_interval,
        )
        return replace(served, engine=label)
    prefill = whole_count("prefill_chips", prefill_chips)
    if prefill >= chips:
        raise ValueError(f"prefill_chips={prefill} must leave decode chips out of n_chips={chips}")
    for name, size in (("prefill_chips", prefill), ("n_chips - prefill_chips", chips - prefill)):
        if model.n_heads is not None and model.n_heads % size:
            raise ValueError(f"{name}={size} must divide the {model.n_heads} attention heads of {model.name}")
    first = run(
        engine(prefill, chunked_prefill, None, np.ones(count, dtype=np.int64)),
        arrival,
        prompts,
        np.ones(count, dtype=np.int64),
        cached,
        rng,
        False,
        None,
        delay,
        recv_interval,
    )
    moved = model.kv_bytes(prompts, precision.kv_dtype)
    transfer = _transfer_s(where, chips, min(prefill, chips - prefill), moved)
    ready = first.first_token_s + transfer
    order = np.argsort(ready, kind="stable")
    then = run(
        engine(chips - prefill, False, speculation, answers),
        ready[order],
        prompts[order],
        answers[order],
        cached[order],
        rng,
        prefilled=True,
    )
    back = np.argsort(order)
    return SimulatedServing(
        arrival_s=arrival,
        first_token_s=first.first_token_s,
        finish_s=np.where(answers > 1, then.finish_s[back], first.first_token_s),
        prompt_tokens=prompts,
        output_tokens=answers,
        step_end_s=np.concatenate([first.step_end_s, then.step_end_s]),
        step_tokens=np.concatenate([first.step_tokens, then.step_tokens]),
        step_sequences=np.concatenate([first.step_sequences, then.step_sequences]),
        preemptions=first.preemptions + then.preemptions,
        n_chips=chips,
        kv_transfer_s=transfer,
        engine=label,
    )


def _engine_label(profile, tier, asked: dict) -> str:
    """The profile's name, and each of ``asked``'s settings that differs from the profile's on this chip."""
    defaults = dict(
        max_batch_tokens=tier.max_batch_tokens,
        max_sequences=tier.max_sequences,
        chunked_prefill=profile.chunked_prefill,
        reserve_output=profile.reserve_output,
        recv_interval=1,
    )
    changed = [
        f"{name}={value}" if isinstance(value, bool) else f"{name}={int(value):,}"
        for name, value in asked.items()
        if value is not None and value != defaults[name]
    ]
    return ", ".join([profile.label, *changed])


def _transfer_s(where: Chip | Cluster, n_chips: int, senders: int, n_bytes: np.ndarray) -> np.ndarray:
    """Seconds to move each request's KV cache from the prefill pool to the decode pool: ``senders`` chips each
    sending its share over the node's links (both pools within one node) or over its NIC."""
    found = (where,) if isinstance(where, Cluster) else clusters(chip=where)
    if not found:
        raise ValueError("prefill_chips needs a cluster to move the KV cache over; give a hw.cluster(...)")
    cluster = found[0]
    inside = cluster.network is None or (cluster.node_size is not None and n_chips <= cluster.node_size)
    link = cluster.node_fabric if inside else cluster.network
    return link.latency_s + np.asarray(n_bytes, dtype=float) / (senders * link.bytes_per_s)


def queue_wait_s(arrival_rate_per_s: Number, service_s: Number, service_cv: Number = 0.0) -> Number:
    """Mean time a request waits for one server busy with others (s): Pollaczek-Khinchine's M/G/1 formula,
    W = S rho (1 + c^2) / (2 (1 - rho)) with the load rho = lambda S < 1 (inf at or past 1); ``service_cv`` c is
    the service time's coefficient of variation (0: every request the same, 1: exponential). Vectorised.
    Chapter :ref:`ch-serving-many`."""
    rate = np.asarray(positive("arrival_rate_per_s", arrival_rate_per_s), dtype=float)
    service = np.asarray(positive("service_s", service_s), dtype=float)
    spread = np.asarray(as_real_array("service_cv", service_cv, minimum=0.0), dtype=float)
    load = rate * service
    safe = np.where(load < 1, load, 0.5)
    wait = service * safe * (1 + spread**2) / (2 * (1 - safe))
    result = np.where(load < 1, wait, np.inf)
    return float(result) if result.ndim == 0 else result
