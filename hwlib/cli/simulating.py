"""``hwlib simulate``: many users served by one engine (``hw.simulate_serving``), in percentiles and goodput."""

from __future__ import annotations

import argparse
import math

import hwlib as hw
from hwlib.cli.options import load_efficiency, load_model
from hwlib.cli.report import Report, rate, seconds
from hwlib.data.request_traces import TRACES

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
    draft = (
        "mtp"
        if args.draft is None
        else args.draft.replace("-", " ")
        if args.draft in CLI_DRAFTS
        else hw.model(args.draft)
    )
    return hw.Speculation(args.draft_tokens, args.acceptance, draft)


def run_simulate(args: argparse.Namespace) -> Report:
    model, where = load_model(args), _where(args)
    options = dict(hw.PRECISIONS[args.precision])
    if args.trace:
        trace = hw.request_trace(args.trace)
        timed = trace.arrival_s is not None
        total = len(trace.prompt_tokens)
        count = min(args.requests, total) if args.requests else total if timed else 1000
        workload = dict(
            n_requests=count, prompt_len=trace.prompt_tokens[:count], output_len=trace.output_tokens[:count]
        )
        if timed and args.rate is None:
            workload["arrivals_s"] = trace.arrival_s[:count]
        else:
            workload["arrival_rate_per_s"] = math.inf if args.rate is None else args.rate
        lengths = f"the {args.trace} trace's first {count:,} requests"
    else:
        count = args.requests or 1000
        workload = dict(
            n_requests=count,
            arrival_rate_per_s=math.inf if args.rate is None else args.rate,
            prompt_len=args.prompt,
            output_len=args.output,
        )
        lengths = f"{count:,} requests of {args.prompt:,} prompt and {args.output:,} answer tokens"
    result = hw.simulate_serving(
        model,
        where,
        args.chips,
        **workload,
        **options,
        max_batch_tokens=args.max_batch_tokens,
        max_sequences=args.max_sequences,
        chunked_prefill=args.chunked_prefill,
        prefix_tokens=args.prefix_tokens,
        prefix_hit_rate=args.prefix_hit_rate,
        speculation=_speculation(args),
        prefill_chips=args.prefill_chips,
        efficiency=load_efficiency(args),
        estimate=args.estimate,
        seed=args.seed,
    )
    arrivals = (
        "at the trace's own times"
        if "arrivals_s" in workload
        else ("all at once" if args.rate is None else f"at {args.rate:g} requests/s (Poisson)")
    )
    pools = f", {args.prefill_chips} of them prefilling" if args.prefill_chips else ""
    report = Report(
        "simulate",
        [
            f"{model.name} on {args.chips:,} x {hw.chip(args.chip).name if args.chip else where.name}{pools}; "
            f"precision {args.precision!r}",
            f"{lengths}, arriving {arrivals}; steps priced at the {args.estimate}",
        ],
        {
            "model": model.key,
            "chip": args.chip,
            "cluster": args.cluster,
            "n_chips": args.chips,
            "precision": args.precision,
            "n_requests": count,
            "arrival_rate_per_s": args.rate,
            "trace": args.trace,
            "estimate": args.estimate,
            "chunked_prefill": args.chunked_prefill,
            "prefill_chips": args.prefill_chips,
        },
        csv_table="percentiles",
    )
    table = report.table("percentiles", ("", *(f"p{q}" for q in PERCENTILES)))
    for label, metric in (("time to first token", "ttft"), ("time per output token", "tpot"), ("latency", "latency")):
        values = [result.percentile(metric, q) for q in PERCENTILES]
        table.add(
            (label, *map(seconds, values)), {"metric": metric, **{f"p{q}_s": v for q, v in zip(PERCENTILES, values)}}
        )
    fields = report.fields()
    fields.add(
        ("output tokens/s", rate(result.output_tokens_per_s)), {"output_tokens_per_s": result.output_tokens_per_s}
    )
    fields.add(("requests/s", f"{result.requests_per_s:,.3g}"), {"requests_per_s": result.requests_per_s})
    ttft = math.inf if args.ttft_ms is None else args.ttft_ms / 1e3
    tpot = math.inf if args.tpot_ms is None else args.tpot_ms / 1e3
    if math.isfinite(ttft) or math.isfinite(tpot):
        good = result.goodput_per_s(ttft, tpot)
        share = float(result.within(ttft, tpot).mean())
        fields.add(
            ("goodput", f"{good:,.3g} requests/s within the targets ({100 * share:.0f} % of requests)"),
            {"goodput_per_s": good, "within_targets": share},
        )
    fields.add(("steps", f"{len(result.step_end_s):,}"), {"steps": len(result.step_end_s)})
    fields.add(("preemptions", f"{result.preemptions:,}"), {"preemptions": result.preemptions})
    report.note(
        "(each step priced by hwlib's step model; the forecast is what engines reach, the bound every chip at its "
        "peak; queueing, batching, the paged cache and preemption are the simulation's)"
    )
    return report


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
    parser.add_argument("--requests", type=options.count, metavar="N", help="requests (default: 1000, or the trace)")
    parser.add_argument("--prompt", type=options.count, metavar="N", default=1024, help="prompt tokens (default: 1024)")
    parser.add_argument("--output", type=options.count, metavar="N", default=256, help="answer tokens (default: 256)")
    parser.add_argument(
        "--trace",
        choices=tuple(TRACES),
        metavar="NAME",
        help="a public trace's arrivals and lengths, or a dataset's lengths: " + "|".join(TRACES),
    )
    parser.add_argument("--max-batch-tokens", type=options.count, metavar="N", default=8192, help="tokens a step takes")
    parser.add_argument("--max-sequences", type=options.count, metavar="N", default=256, help="sequences a step takes")
    parser.add_argument("--chunked-prefill", action="store_true", help="decode first, prefill chunks fill the step")
    parser.add_argument("--prefix-tokens", type=options.whole, metavar="N", default=0, help="shared prompt prefix")
    parser.add_argument("--prefix-hit-rate", type=options.share, metavar="F", default=0.0, help="prefix cache hits")
    parser.add_argument("--draft-tokens", type=options.count, metavar="K", help="speculative draft tokens a step")
    parser.add_argument("--acceptance", type=options.share, metavar="A", help="chance a draft token is accepted")
    parser.add_argument(
        "--draft", metavar="MODEL", help="draft model key, or mtp or one-layer (the model's own; default: mtp)"
    )
    parser.add_argument("--prefill-chips", type=options.count, metavar="P", help="a prefill pool of P chips")
    parser.add_argument("--ttft-ms", type=options.milliseconds, metavar="X", help="target time to first token, ms")
    parser.add_argument("--tpot-ms", type=options.milliseconds, metavar="X", help="target time per output token, ms")
    parser.add_argument("--estimate", choices=("forecast", "bound"), default="forecast", help="price steps at")
    parser.add_argument("--seed", type=options.whole, metavar="N", default=0, help="random seed (default: 0)")
    parser.add_argument("--efficiency", type=options.efficiency, metavar="NAME=X,...", help="forecast overrides")
