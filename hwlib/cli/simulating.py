"""``hwlib simulate``: many users served by one engine (``hw.simulate_serving``), in percentiles and goodput."""

from __future__ import annotations

import argparse
import math

import hwlib as hw
from hwlib.cli.costing import add_token_cost
from hwlib.cli.options import load_efficiency, load_model
from hwlib.cli.report import Report, Table, add_simulation_bands, percent, rate, seconds
from hwlib.data.request_traces import TRACES
from hwlib.data.serving_engines import ENGINE_PROFILES
from hwlib.serving.max_rate import MaxArrivalRate, MaxConcurrency, max_arrival_rate, max_concurrency

PERCENTILES = (50, 90, 99)
"""The percentiles ``hwlib simulate`` prints."""
CLI_DRAFTS = ("mtp", "one-layer")
"""``--draft`` values naming a drafter made from the model itself (``hw.Speculation``'s draft)."""


def _where(args: argparse.Namespace) -> hw.Chip | hw.Cluster:
    return hw.cluster(args.cluster) if args.cluster else hw.chip(args.chip)


def _speculation(args: argparse.Namespace) -> hw.Speculation | None:
    if args.draft_tokens is None:
        if args.acceptance is not None or args.draft is not None:
            raise ValueError("--acceptance and --draft need --draft-tokens")
        return None
    if args.acceptance is None:
        raise ValueError("--draft-tokens needs --acceptance (the chance each draft token is accepted)")
    draft = args.draft or "mtp"
    draft = draft.replace("-", " ") if draft in (*CLI_DRAFTS, "mtp") else hw.model(draft)
    return hw.Speculation(args.draft_tokens, args.acceptance, draft)


def _workload(args: argparse.Namespace) -> tuple[dict[str, object], str]:
    """What ``simulate_serving`` takes about the requests (their count, lengths and arrivals), and it in words."""
    rate = math.inf if args.rate is None else args.rate
    if not args.trace:
        count = args.requests or 1000
        workload = dict(n_requests=count, arrival_rate_per_s=rate, prompt_len=args.prompt, output_len=args.output)
        return workload, f"{count:,} requests of {args.prompt:,} prompt and {args.output:,} answer tokens"
    trace = hw.request_trace(args.trace)
    timed = trace.arrival_s is not None
    total = len(trace.prompt_tokens)
    count = min(args.requests, total) if args.requests else total if timed else 1000
    workload = dict(n_requests=count, prompt_len=trace.prompt_tokens[:count], output_len=trace.output_tokens[:count])
    if timed and args.rate is None and not args.max_rate:
        workload["arrivals_s"] = trace.arrival_s[:count]
    else:
        workload["arrival_rate_per_s"] = rate
    return workload, f"the {args.trace} trace's first {count:,} requests"


def _engine(args: argparse.Namespace, speculation: hw.Speculation | None) -> tuple[str, dict[str, object]]:
    """The engine's settings in words and as JSON ``inputs``."""
    drafter = (args.draft or "mtp") if speculation else None
    profile = ENGINE_PROFILES[args.engine]
    words = [
        f"engine: {profile.label}, up to {args.max_sequences:,} sequences and {args.max_batch_tokens:,} tokens a step",
        "prompts prefilled in chunks that fill each step's leftover tokens"
        if args.chunked_prefill
        else "prompts prefilled whole",
        f"speculating {args.draft_tokens} draft tokens a step with {drafter}, each accepted with probability "
        f"{args.acceptance:g}"
        if speculation
        else "no speculation",
        f"a shared prefix of {args.prefix_tokens:,} tokens, cached for {100 * args.prefix_hit_rate:g} % of requests"
        if args.prefix_tokens
        else "no shared prefix",
        "admitting a request only with room for its whole answer" if args.reserve_output else "admitting on its prompt",
        *(["each decode's attention walked by one block per KV head"] * (not profile.splits_attention)),
        *(["a prompt's step launched from the host, each MoE layer waiting on its router"] * profile.eager_prefill),
        *(
            [f"taking in requests every {args.recv_interval} decode steps, and after prompts"]
            * (args.recv_interval > 1)
        ),
        *(
            ["experts whole on each chip" + (", attention data-parallel" if args.attention_dp else "")]
            * args.expert_parallel
        ),
    ]
    settings = {
        "engine": args.engine,
        "max_sequences": args.max_sequences,
        "max_batch_tokens": args.max_batch_tokens,
        "chunked_prefill": args.chunked_prefill,
        "draft_tokens": args.draft_tokens,
        "acceptance": args.acceptance,
        "draft": drafter,
        "prefix_tokens": args.prefix_tokens,
        "prefix_hit_rate": args.prefix_hit_rate,
        "reserve_output": args.reserve_output,
        "expert_parallel": args.expert_parallel,
        "attention_dp": args.attention_dp,
        "recv_interval": args.recv_interval,
    }
    return "; ".join(words), settings


def _requests_per_s(value: float) -> str:
    """Requests per second for people: three significant figures, never '0' for a non-zero rate."""
    return f"{hw.format_number(value, 3)} requests/s"


def _engine_defaults(args: argparse.Namespace, where: hw.Chip | hw.Cluster) -> None:
    """Fill the engine options the user left open with ``--engine``'s defaults on the chip."""
    profile = ENGINE_PROFILES[args.engine]
    tier = profile.tier(where.chip if isinstance(where, hw.Cluster) else where)
    for name, value in (
        ("max_batch_tokens", tier.max_batch_tokens),
        ("max_sequences", tier.max_sequences),
        ("chunked_prefill", profile.chunked_prefill),
        ("reserve_output", profile.reserve_output),
    ):
        if getattr(args, name) is None:
            setattr(args, name, value)


def run_simulate(args: argparse.Namespace) -> Report:
    model, where = load_model(args), _where(args)
    _engine_defaults(args, where)
    speculation = _speculation(args)
    workload, lengths = _workload(args)
    engine_words, engine_settings = _engine(args, speculation)
    ttft = math.inf if args.ttft_ms is None else args.ttft_ms / 1e3
    tpot = math.inf if args.tpot_ms is None else args.tpot_ms / 1e3
    common = dict(
        **hw.PRECISIONS[args.precision],
        max_batch_tokens=args.max_batch_tokens,
        max_sequences=args.max_sequences,
        chunked_prefill=args.chunked_prefill,
        prefix_tokens=args.prefix_tokens,
        prefix_hit_rate=args.prefix_hit_rate,
        reserve_output=args.reserve_output,
        engine=args.engine,
        expert_parallel=args.expert_parallel,
        attention_dp=args.attention_dp,
        recv_interval=args.recv_interval,
        speculation=speculation,
        prefill_chips=args.prefill_chips,
        efficiency=load_efficiency(args),
        estimate=args.estimate,
        seed=args.seed,
    )
    found = report_most = None
    if args.concurrency is not None:
        if args.rate is not None or args.max_rate:
            raise ValueError("--concurrency sets the arrivals itself: drop --rate and --max-rate")
        workload["concurrency"] = args.concurrency
    if args.max_rate:
        if args.ttft_ms is None or args.tpot_ms is None:
            raise ValueError("--max-rate needs --ttft-ms and --tpot-ms, the targets the rate must meet")
        if args.rate is not None:
            raise ValueError("--max-rate searches the arrival rate itself: drop --rate")
        searched = {name: value for name, value in workload.items() if name != "arrival_rate_per_s"}
        given = {} if args.percentile is None else {"percentile": args.percentile}
        found = max_arrival_rate(model, where, args.chips, ttft_s=ttft, tpot_s=tpot, **given, **searched, **common)
        workload["arrival_rate_per_s"] = found.arrival_rate_per_s
    elif args.max_concurrency:
        if args.ttft_ms is None or args.tpot_ms is None:
            raise ValueError("--max-concurrency needs --ttft-ms and --tpot-ms, the targets the clients must meet")
        if args.rate is not None or args.concurrency is not None or args.trace:
            raise ValueError("--max-concurrency searches the clients itself: drop --rate, --concurrency and --trace")
        searched = {name: value for name, value in workload.items() if name in ("prompt_len", "output_len")}
        given = {} if args.percentile is None else {"percentile": args.percentile}
        most = max_concurrency(model, where, args.chips, ttft_s=ttft, tpot_s=tpot, **given, **searched, **common)
        args.concurrency = workload["concurrency"] = most.concurrency or None
        report_most = most
    elif args.percentile is not None:
        raise ValueError("--percentile is the percentile --max-rate or --max-concurrency meets the targets at")
    arrival_rate = workload.get("arrival_rate_per_s")
    arrivals = (
        "from as many closed-loop clients as meet the targets: not even one does"
        if report_most is not None and not report_most.concurrency
        else f"from {args.concurrency:,} closed-loop clients, each sending its next request when its last one ends"
        if args.concurrency is not None
        else "at the highest Poisson rate that meets the targets"
        if found is not None
        else "at the trace's own times"
        if arrival_rate is None
        else "all at once"
        if arrival_rate == math.inf
        else f"at {_requests_per_s(arrival_rate)} (Poisson)"
    )
    pools = f", {args.prefill_chips} of them prefilling" if args.prefill_chips else ""
    report = Report(
        "simulate",
        [
            f"{model.name} on {args.chips:,} x {hw.chip(args.chip).name if args.chip else where.name}{pools}; "
            f"precision {args.precision!r}",
            f"{lengths}, arriving {arrivals}; steps priced at the {args.estimate}",
            engine_words,
        ],
        {
            "model": model.key,
            "chip": args.chip,
            "cluster": args.cluster,
            "n_chips": args.chips,
            "precision": args.precision,
            "n_requests": workload["n_requests"],
            "prompt_len": None if args.trace else args.prompt,
            "output_len": None if args.trace else args.output,
            "arrival_rate_per_s": args.rate,
            "concurrency": args.concurrency,
            "trace": args.trace,
            "estimate": args.estimate,
            "prefill_chips": args.prefill_chips,
            **engine_settings,
            "ttft_target_s": None if args.ttft_ms is None else ttft,
            "tpot_target_s": None if args.tpot_ms is None else tpot,
            "max_rate": args.max_rate,
            "max_concurrency": args.max_concurrency,
            "percentile": None if found is None else found.percentile,
            "seed": args.seed,
        },
        csv_table="percentiles",
    )
    if found is not None:
        _max_rate_fields(report.fields(), found, ttft, tpot, workload["n_requests"], args.seed)
    if report_most is not None:
        _max_concurrency_fields(report.fields(), report_most, ttft, tpot)
        if not report_most.concurrency:
            return report
    table = report.table("percentiles", ("", *(f"p{q}" for q in PERCENTILES)))
    if found is not None and not found.arrival_rate_per_s:
        return report
    result = hw.simulate_serving(model, where, args.chips, **workload, **common)
    for label, metric in (("time to first token", "ttft"), ("time per output token", "tpot"), ("latency", "latency")):
        values = [result.percentile(metric, q) for q in PERCENTILES]
        table.add(
            (label, *map(seconds, values)), {"metric": metric, **{f"p{q}_s": v for q, v in zip(PERCENTILES, values)}}
        )
    fields, chip = report.fields(), hw.chip(args.chip) if args.chip else where.chip
    if args.estimate == "forecast":  # each step's error for the run's kind, and the simulation's under load
        add_simulation_bands(fields, hw.forecast_band("serving", model, chip))
    fields.add(
        ("output tokens/s", rate(result.output_tokens_per_s)), {"output_tokens_per_s": result.output_tokens_per_s}
    )
    fields.add(("requests/s", _requests_per_s(result.requests_per_s)), {"requests_per_s": result.requests_per_s})
    if math.isfinite(ttft) or math.isfinite(tpot):
        good = result.goodput_per_s(ttft, tpot)
        share = float(result.within(ttft, tpot).mean())
        fields.add(
            ("goodput", f"{_requests_per_s(good)} within the targets ({percent(share)} of requests)"),
            {"goodput_per_s": good, "within_targets": share},
        )
    fields.add(("steps", f"{len(result.step_end_s):,}"), {"steps": len(result.step_end_s)})
    fields.add(("preemptions", f"{result.preemptions:,}"), {"preemptions": result.preemptions})
    add_token_cost(fields, args, chip, lambda **options: hw.costs.simulated_cost(result, chip, **options))
    report.note(
        "(each step priced by hwlib's step model; the forecast is what engines reach, the bound every chip at its "
        "peak; queueing, batching, the paged cache and preemption are the simulation's; goodput is the requests "
        "within the targets over the run's span, first arrival to last finish, as requests/s counts them)"
    )
    return report


def _max_concurrency_fields(fields: Table, most: MaxConcurrency, ttft_s: float, tpot_s: float) -> None:
    """The most closed-loop clients that meet the targets and how the search found them."""
    reached = (
        f"p{most.percentile:g} time to first token {seconds(most.ttft_percentile_s)} (target {seconds(ttft_s)}), "
        f"per output token {seconds(most.tpot_percentile_s)} (target {seconds(tpot_s)})"
    )
    shown = f"none: even one alone, {reached}" if not most.concurrency else f"{most.concurrency:,}: {reached}"
    fields.add(
        ("most clients", shown),
        {
            "max_concurrency": most.concurrency,
            "ttft_at_max_concurrency_s": most.ttft_percentile_s,
            "tpot_at_max_concurrency_s": most.tpot_percentile_s,
        },
    )
    fields.add(("search", f"{most.n_simulations} simulations"), {"n_simulations": most.n_simulations})


def _max_rate_fields(
    fields: Table, found: MaxArrivalRate, ttft_s: float, tpot_s: float, n_requests: int, seed: int
) -> None:
    """The highest rate that meets the targets and how the search found it."""
    q = f"p{found.percentile:g}"
    reached = (
        f"{q} time to first token {seconds(found.ttft_percentile_s)} (target {seconds(ttft_s)}), "
        f"per output token {seconds(found.tpot_percentile_s)} (target {seconds(tpot_s)})"
    )
    highest = found.arrival_rate_per_s
    shown = (
        f"none: even nearly idle, {reached}"
        if highest == 0
        else f"any, even all at once: {reached}"
        if highest == math.inf
        else f"{_requests_per_s(highest)}: {reached}"
    )
    fields.add(
        ("highest arrival rate", shown),
        {
            "max_arrival_rate_per_s": highest,
            "ttft_at_max_rate_s": found.ttft_percentile_s,
            "tpot_at_max_rate_s": found.tpot_percentile_s,
        },
    )
    fields.add(
        (
            "search",
            f"{found.n_simulations} simulation{'s' if found.n_simulations > 1 else ''} of {n_requests:,} requests "
            f"(seed {seed}), to within {100 * found.rel_tol:g} %",
        ),
        {"n_simulations": found.n_simulations, "rel_tol": found.rel_tol},
    )


def add_simulate(subparsers: argparse._SubParsersAction, command, model_options, options) -> None:
    """The ``simulate`` subcommand and its options (``command`` and ``model_options`` build the common ones)."""
    parser = command(
        subparsers,
        "simulate",
        "many users: percentiles of time to first token and per token, throughput and goodput",
        "hwlib simulate --model llama-3-8b --chip H100-SXM --rate 20 --requests 2000 --ttft-ms 500 --tpot-ms 50",
        run_simulate,
        table=True,
    )
    model_options(parser, chip=False)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--chip", metavar="CHIP", help="chip, e.g. H100-SXM (hwlib list chips)")
    where.add_argument("--cluster", metavar="KEY", help="cluster, e.g. hgx-h100-ndr (needed with --prefill-chips)")
    parser.add_argument("--chips", type=options.count, metavar="N", default=1, help="chips (default: %(default)s)")
    parser.add_argument(
        "--precision", type=options.precision, metavar="NAME", default="bf16", help="dtypes (default: %(default)s)"
    )
    parser.add_argument(
        "--rate", type=options.per_second, metavar="R", help="Poisson arrivals per second (default: all at once)"
    )
    parser.add_argument(
        "--concurrency",
        type=options.count,
        metavar="C",
        help="C closed-loop clients, each sending its next request when its last ends (benchmarks' --max-concurrency)",
    )
    parser.add_argument("--requests", type=options.count, metavar="N", help="requests (default: 1000, or the trace)")
    parser.add_argument("--prompt", type=options.count, metavar="N", default=1024, help="prompt tokens (default: 1024)")
    parser.add_argument("--output", type=options.count, metavar="N", default=256, help="answer tokens (default: 256)")
    parser.add_argument(
        "--trace",
        choices=tuple(TRACES),
        metavar="NAME",
        help="a public trace's arrivals and lengths, or a dataset's lengths: " + "|".join(TRACES),
    )
    parser.add_argument(
        "--engine",
        choices=tuple(ENGINE_PROFILES),
        default="hwlib",
        help="whose documented defaults set the four options below and the KV cache's memory (default: %(default)s)",
    )
    parser.add_argument("--max-batch-tokens", type=options.count, metavar="N", help="tokens a step takes")
    parser.add_argument("--max-sequences", type=options.count, metavar="N", help="sequences a step takes")
    parser.add_argument(
        "--chunked-prefill", action=argparse.BooleanOptionalAction, help="decode first, prefill chunks fill the step"
    )
    parser.add_argument(
        "--reserve-output",
        action=argparse.BooleanOptionalAction,
        help="admit a request only with cache room for its whole answer (TensorRT-LLM's GUARANTEED_NO_EVICT)",
    )
    parser.add_argument(
        "--recv-interval",
        type=options.count,
        metavar="K",
        default=1,
        help="take in new requests after every K-th decode step (SGLang's --scheduler-recv-interval; default: 1)",
    )
    parser.add_argument("--prefix-tokens", type=options.whole, metavar="N", default=0, help="shared prompt prefix")
    parser.add_argument("--prefix-hit-rate", type=options.share, metavar="F", default=0.0, help="prefix cache hits")
    parser.add_argument("--draft-tokens", type=options.count, metavar="K", help="speculative draft tokens a step")
    parser.add_argument("--acceptance", type=options.share, metavar="A", help="chance a draft token is accepted")
    parser.add_argument(
        "--draft", metavar="MODEL", help="draft model key, or mtp or one-layer (the model's own; default: mtp)"
    )
    parser.add_argument("--prefill-chips", type=options.count, metavar="P", help="a prefill pool of P chips")
    parser.add_argument("--expert-parallel", action="store_true", help="an MoE's experts whole on each chip")
    parser.add_argument("--attention-dp", action="store_true", help="with --expert-parallel: attention data-parallel")
    parser.add_argument("--ttft-ms", type=options.milliseconds, metavar="X", help="target time to first token, ms")
    parser.add_argument("--tpot-ms", type=options.milliseconds, metavar="X", help="target time per output token, ms")
    parser.add_argument(
        "--max-rate",
        action="store_true",
        help="find the highest Poisson rate whose percentiles meet --ttft-ms and --tpot-ms, and run it",
    )
    parser.add_argument(
        "--max-concurrency",
        action="store_true",
        help="find the most closed-loop clients whose percentiles meet --ttft-ms and --tpot-ms, and run them",
    )
    parser.add_argument(
        "--percentile", type=float, metavar="P", help="the percentile the search holds to the targets (default: 99)"
    )
    parser.add_argument("--estimate", choices=("forecast", "bound"), default="forecast", help="price steps at")
    parser.add_argument("--seed", type=options.whole, metavar="N", default=0, help="random seed (default: 0)")
    parser.add_argument("--efficiency", type=options.efficiency, metavar="NAME=X,...", help="forecast overrides")
