"""``hwlib serve``: a decode step and a prefill on n chips, or the fewest chips at latency targets.

Every answer leads with the forecast and its error band for the run's kind; the bound follows as the ceiling. A
batch that does not fit says so first and prints no time. Every number comes from hwlib; nothing is derived here.
"""

from __future__ import annotations

import argparse
import math

import hwlib as hw
from hwlib.cli.costing import add_token_cost
from hwlib.cli.options import load_efficiency, load_model
from hwlib.cli.report import Report, add_band, rate, seconds

DTYPE_ROLES = {
    "weight_dtype": "weights",
    "kv_dtype": "KV",
    "activation_dtype": "activations",
    "compute_dtype": "matmuls",
}


def _serve_report(
    args: argparse.Namespace, model: hw.ModelShape, chip: hw.Chip, batch: int, prompt: int, found: bool = False
) -> Report:
    options = dict(hw.PRECISIONS[args.precision])
    dtypes = ", ".join(f"{DTYPE_ROLES[k]} {v}" for k, v in options.items())
    where = f"{args.chips:,} x {chip.name}" if args.chips else chip.name
    experts = getattr(args, "expert_parallel", False)
    split = "experts by expert parallelism, the rest by tensor parallelism" if experts else "tensor parallel"
    where += f" ({split})" if (args.chips or 1) > 1 else ""
    searched = f" (the largest within the targets; at least {args.batch:,} asked)" if found else ""
    return Report(
        "serve",
        [
            f"{model.name} on {where}; precision {args.precision!r} ({dtypes})",
            f"decode: batch {batch:,}{searched} at context {args.context:,} tokens; prefill: one prompt of {prompt:,} "
            "tokens",
        ],
        {
            "model": model.key,
            "chip": chip.key,
            "n_chips": args.chips,
            "precision": args.precision,
            "context_len": args.context,
            "prompt_len": prompt,
            "batch": args.batch,
            "tpot_target_s": None if args.tpot_ms is None else args.tpot_ms / 1e3,
            "ttft_target_s": None if args.ttft_ms is None else args.ttft_ms / 1e3,
            "usable_fraction": args.usable,
            "expert_parallel": bool(getattr(args, "expert_parallel", False)),
        },
    )


def _no_room(args: argparse.Namespace, model: hw.ModelShape, chip: hw.Chip, largest: int) -> str:
    """Why the asked batch does not fit beside the weights on ``args.chips`` chips."""
    if largest:
        return f"batch {args.batch:,} > the {largest:,} sequences of {args.context:,} tokens that fit"
    weights = hw.format_bytes(model.weight_bytes(hw.PRECISIONS[args.precision]["weight_dtype"]))
    usable = hw.format_bytes(hw.usable_bytes(chip, args.usable))
    return (
        f"the weights ({weights}) leave no room for one sequence of {args.context:,} tokens in {args.chips:,} x "
        f"{usable} usable"
    )


def _fewest_chips(args: argparse.Namespace, model: hw.ModelShape, chip: hw.Chip, prompt: int, options: dict) -> Report:
    """``hwlib serve`` without ``--chips``: the fewest chips that meet the targets (``hw.serving_chips``)."""
    tpot = math.inf if args.tpot_ms is None else args.tpot_ms / 1e3
    ttft = math.inf if args.ttft_ms is None else args.ttft_ms / 1e3
    plan = hw.serving_chips(
        model,
        chip,
        args.context,
        args.batch,
        tpot,
        prompt_len=prompt,
        ttft_target_s=ttft,
        usable_fraction=args.usable,
        efficiency=load_efficiency(args),
        **options,
    )
    found = plan.n_chips > 0
    report = _serve_report(args, model, chip, int(plan.batch) if found else args.batch, prompt, found)
    fields = report.fields()
    if not found:
        sizes = ", ".join(map(str, hw.tensor_parallel_sizes(model, chip)))
        reason = f"no tensor-parallel size ({sizes} chips) holds batch {args.batch:,} within the targets"
        report.add_verdict(fields, "fewest chips", f"none: {reason}", reason, n_chips=0)
        return report
    report.add_verdict(
        fields,
        "fewest chips",
        f"{plan.n_chips:,} ({plan.deployment})",
        n_chips=plan.n_chips,
        deployment=str(plan.deployment),
    )
    fields.add(
        ("batch within the target", f"{plan.batch:,} sequences ({plan.max_batch:,} fit in HBM)"),
        {"batch_within_target": plan.batch, "max_batch": plan.max_batch},
    )
    fields.add(
        (
            "forecast",
            f"{seconds(plan.forecast_time_per_token_s)} per output token, {rate(plan.forecast_tokens_per_s)} "
            f"({rate(plan.forecast_tokens_per_s_per_chip)} per chip); first token in "
            f"{seconds(plan.forecast_time_to_first_token_s)}",
        ),
        {
            "forecast_time_per_output_token_s": plan.forecast_time_per_token_s,
            "forecast_tokens_per_s": plan.forecast_tokens_per_s,
            "forecast_tokens_per_s_per_chip": plan.forecast_tokens_per_s_per_chip,
            "forecast_time_to_first_token_s": plan.forecast_time_to_first_token_s,
        },
    )
    add_band(fields, hw.forecast_band("serving", model, chip))
    fields.add(
        (
            "bound, the ceiling",
            f"{seconds(plan.time_per_token_s)} per output token, {rate(plan.tokens_per_s)} "
            f"({rate(plan.tokens_per_s_per_chip)} per chip); first token in {seconds(plan.time_to_first_token_s)}",
        ),
        {
            "bound_time_per_output_token_s": plan.time_per_token_s,
            "bound_tokens_per_s": plan.tokens_per_s,
            "bound_tokens_per_s_per_chip": plan.tokens_per_s_per_chip,
            "bound_time_to_first_token_s": plan.time_to_first_token_s,
        },
    )
    rates = (plan.forecast_tokens_per_s_per_chip, plan.tokens_per_s_per_chip)
    first = (plan.forecast_time_to_first_token_s, plan.time_to_first_token_s)
    _add_costs(fields, args, chip, plan.n_chips, rates, first, prompt)
    report.note(
        f"(targets, met by the forecast at that batch: time per output token {seconds(tpot)}, time to first token "
        f"{seconds(ttft)}; the bound is every chip at its peak)"
    )
    return report


def _add_costs(fields: object, args: argparse.Namespace, chip: hw.Chip, n: int, rates, prefill, prompt: int) -> None:
    """The cost lines of output tokens (decoded at ``rates``, forecast and bound tokens/s per chip) and of input
    tokens (``prompt`` of them prefilled on ``n`` chips in ``prefill``: a step, or its forecast and bound times)."""
    forecast_s, bound_s = (prefill.forecast_time_s, prefill.time_s) if hasattr(prefill, "time_s") else prefill
    add_token_cost(
        fields, args, chip, lambda **o: hw.costs.serving_cost(rates[0], chip, bound_tokens_per_s_per_chip=rates[1], **o)
    )
    add_token_cost(
        fields,
        args,
        chip,
        lambda **o: hw.costs.cost(n * forecast_s, chip, bound_chip_seconds=n * bound_s, tokens=prompt, **o),
        "input",
    )


def run_serve(args: argparse.Namespace) -> Report:
    model, chip = load_model(args), hw.chip(args.chip)
    options = dict(hw.PRECISIONS[args.precision])
    prompt = args.prompt or args.context
    if args.chips is None:
        if args.expert_parallel:
            raise ValueError("--expert-parallel needs --chips: the fewest chips are searched with tensor parallelism")
        return _fewest_chips(args, model, chip, prompt, options)
    n = args.chips
    report = _serve_report(args, model, chip, args.batch, prompt)
    fields = report.fields()
    largest = hw.max_batch(
        model, chip, args.context, n, options["weight_dtype"], options["kv_dtype"], usable_fraction=args.usable
    )
    if args.batch > largest:
        reason = _no_room(args, model, chip, largest)
        report.add_verdict(fields, "fits in HBM", f"NO: {reason}", reason, max_batch=largest)
        report.note(
            "(no times: a batch that does not fit does not run; fewer or shorter sequences, or more chips, fit)"
        )
        return report
    options["efficiency"] = load_efficiency(args)
    split = {"expert_parallel": True} if args.expert_parallel else {}
    step = hw.inference_step(model, chip, args.batch, args.context, 1, n, **options, **split)
    prefill = hw.inference_step(model, chip, 1, 0, prompt, n, **options, **split)
    fields.add(
        (
            "forecast",
            f"{seconds(step.forecast_time_s)} per output token, {rate(step.forecast_tokens_per_s)}; first token in "
            f"{seconds(prefill.forecast_time_s)}",
        ),
        {
            "forecast_time_per_output_token_s": step.forecast_time_s,
            "forecast_tokens_per_s": step.forecast_tokens_per_s,
            "forecast_time_to_first_token_s": prefill.forecast_time_s,
        },
    )
    add_band(fields, hw.forecast_band("serving", model, chip))
    fields.add(
        (
            "bound, the ceiling",
            f"{seconds(step.time_s)} per output token, {rate(step.tokens_per_s)} ({rate(step.tokens_per_s_per_chip)} "
            f"per chip); first token in {seconds(prefill.time_s)}",
        ),
        {
            "bound_time_per_output_token_s": step.time_s,
            "bound_tokens_per_s": step.tokens_per_s,
            "bound_tokens_per_s_per_chip": step.tokens_per_s_per_chip,
            "bound_time_to_first_token_s": prefill.time_s,
        },
    )
    fields.add(
        (
            "bound by",
            f"{step.bound} (compute {seconds(step.compute_time_s)}, memory {seconds(step.memory_time_s)}, "
            f"communication {seconds(step.comm_time_s)}; {seconds(step.time_upper_s)} with no overlap)",
        ),
        {
            "bound_by": str(step.bound),
            "bound_compute_time_s": step.compute_time_s,
            "bound_memory_time_s": step.memory_time_s,
            "bound_comm_time_s": step.comm_time_s,
            "bound_no_overlap_time_per_output_token_s": step.time_upper_s,
        },
    )
    report.add_verdict(
        fields,
        "fits in HBM",
        f"yes: batch {args.batch:,} of at most {largest:,} sequences of {args.context:,} tokens",
        max_batch=largest,
    )
    turn = hw.compute_bound_batch(model, chip, args.context, n, **options)
    fields.add(
        ("compute-bound from batch", f"{turn:,.0f}" if math.isfinite(turn) else "never (memory-bound)"),
        {"compute_bound_batch": turn},
    )
    _add_costs(fields, args, chip, n, (step.forecast_tokens_per_s / n, step.tokens_per_s_per_chip), prefill, prompt)
    for name, key, target_ms, forecast in (
        ("time per output token", "tpot_target_met", args.tpot_ms, step.forecast_time_s),
        ("time to first token", "ttft_target_met", args.ttft_ms, prefill.forecast_time_s),
    ):
        if target_ms is not None:
            met = bool(forecast <= target_ms / 1e3)
            shown = f"{seconds(target_ms / 1e3)}: {'met' if met else 'MISSED'} by the forecast"
            fields.add((f"target {name}", shown), {key: met})
    report.note("(the forecast prices each part at what kernels reach; the bound puts every chip at its peak)")
    return report
