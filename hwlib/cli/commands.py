"""The ``hwlib`` commands: each reads its options, calls hwlib's public functions and returns a ``Report``.

``memory`` (training memory and the chips that hold it), ``serve`` (a decode step and a prefill on n chips, or
the fewest chips at latency targets), ``train`` (one training step on a mesh) and ``plan`` (the best meshes of a
cluster); ``list`` is in ``listing``. Every number comes from hwlib; nothing is derived here.
"""

from __future__ import annotations

import argparse
import math

import hwlib as hw
from hwlib.cli.options import MESH_AXES, load_efficiency, load_model
from hwlib.cli.report import Report, rate, seconds

DTYPE_ROLES = {
    "weight_dtype": "weights",
    "kv_dtype": "KV",
    "activation_dtype": "activations",
    "compute_dtype": "matmuls",
}


def _deployment(n_chips: int, chip: hw.Chip, usable: float) -> tuple[int | None, str]:
    """The smallest real deployment of at least ``n_chips`` chips: (its chips, its name), or (None, why not)."""
    try:  # the deployment that holds n_chips chips' usable HBM is the smallest with at least n_chips chips
        size = hw.deployment_chips(n_chips * hw.usable_bytes(chip, usable), chip, usable)
    except KeyError:
        return None, f"no deployment sizes known for {chip.name}"
    return size, hw.deployment_name(size, chip)


def run_memory(args: argparse.Namespace) -> Report:
    model, chip, recipe, size = load_model(args), hw.chip(args.chip), hw.recipe(args.recipe), hw.format_bytes
    n_params = model.params()
    state, total = hw.training_state_breakdown(n_params, recipe), hw.training_state_bytes(n_params, recipe)
    held = hw.training_memory(
        model,
        recipe,
        chip,
        args.seq_len,
        args.batch,
        sharding=args.sharding,
        recompute=args.recompute,
        usable_fraction=args.usable,
    )
    report = Report(
        "memory",
        [
            f"{model.name}: {n_params / 1e9:,.2f}B parameters; recipe {recipe.key} ({recipe.label}, "
            f"{recipe.bytes_per_param:g} B/param)",
            f"{chip.name}: {size(chip.capacity_bytes)} HBM, {args.usable:.0%} usable = {size(held.usable_bytes)} per "
            f"chip; micro-batch per chip {args.batch:,} x {args.seq_len:,} tokens, recompute {args.recompute}",
        ],
        {
            "model": model.key,
            "chip": chip.key,
            "recipe": recipe.key,
            "seq_len": args.seq_len,
            "batch": args.batch,
            "sharding": args.sharding,
            "recompute": args.recompute,
            "usable_fraction": args.usable,
        },
        csv_table="parts",
    )
    where = f"{held.n_chips:,} chips" if held.n_chips else "one chip"
    parts = report.table("parts", ("part", "B/param", "whole model", f"per chip ({args.sharding}, {where})"))
    per_param = recipe.breakdown()
    for part in (*state, "activations", "logits", "total"):
        whole = total if part == "total" else state.get(part)
        bytes_per_param = recipe.bytes_per_param if part == "total" else per_param.get(part)
        chip_bytes = held.per_chip_bytes if part == "total" else held.parts[part]
        parts.add(
            (
                part,
                "-" if bytes_per_param is None else f"{bytes_per_param:g}",
                "-" if whole is None else size(whole),
                size(chip_bytes),
            ),
            {
                "part": part,
                "bytes_per_param": bytes_per_param,
                "whole_model_bytes": whole,
                "per_chip_bytes": chip_bytes,
            },
        )
    fewest = report.table("fewest_chips", ("holds the training", "chips", "smallest deployment"), align="lrl")
    pooled = hw.chips_needed(total, chip, args.usable)
    for label, n_chips in (("state pooled", pooled), (f"{args.sharding} + activations", held.n_chips)):
        chips, name = _deployment(n_chips, chip, args.usable) if n_chips else (None, "-")
        shown = f"{chips:,} chips ({name})" if chips else name
        fewest.add(
            (f"fewest chips, {label}", f"{n_chips:,}" if n_chips else "none", shown),
            {"case": label, "n_chips": n_chips or None, "deployment_chips": chips, "deployment": name},
        )
    report.note(
        f"(pooled: ceil(state / usable HBM), activations left out; {args.sharding}: each chip also holds its own "
        "micro-batch's activations and logits)"
    )
    if not held.n_chips:
        report.note(f"{args.sharding}: {held.reason}")
    return report


def _serve_report(args: argparse.Namespace, model: hw.ModelShape, chip: hw.Chip, batch: int, prompt: int) -> Report:
    options = hw.PRECISIONS[args.precision]
    dtypes = ", ".join(f"{DTYPE_ROLES[k]} {v}" for k, v in options.items())
    where = f"{args.chips:,} x {chip.name}" if args.chips else chip.name
    where += " (tensor parallel)" if (args.chips or 1) > 1 else ""
    found = "" if args.chips else f" (the largest within the targets; at least {args.batch:,} asked)"
    return Report(
        "serve",
        [
            f"{model.name} on {where}; precision {args.precision!r} ({dtypes})",
            f"decode: batch {batch:,}{found} at context {args.context:,} tokens; prefill: one prompt of {prompt:,} "
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
        },
    )


def run_serve(args: argparse.Namespace) -> Report:
    model, chip = load_model(args), hw.chip(args.chip)
    options = dict(hw.PRECISIONS[args.precision])
    prompt = args.prompt or args.context
    tpot = math.inf if args.tpot_ms is None else args.tpot_ms / 1e3
    ttft = math.inf if args.ttft_ms is None else args.ttft_ms / 1e3
    if args.chips is None:
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
        report = _serve_report(args, model, chip, int(plan.batch) if plan.n_chips else args.batch, prompt)
        fields = report.fields()
        if plan.n_chips == 0:
            sizes = ", ".join(map(str, hw.tensor_parallel_sizes(model, chip)))
            fields.add(
                (
                    "fewest chips",
                    f"none: no tensor-parallel size ({sizes} chips) holds batch {args.batch:,} within the targets",
                ),
                {"n_chips": 0},
            )
            return report
        fields.add(
            ("fewest chips", f"{plan.n_chips:,} ({plan.deployment})"),
            {"n_chips": plan.n_chips, "deployment": str(plan.deployment)},
        )
        fields.add(
            ("batch within the target", f"{plan.batch:,} sequences ({plan.max_batch:,} fit in HBM)"),
            {"batch_within_target": plan.batch, "max_batch": plan.max_batch},
        )
        fields.add(
            (
                "time per output token",
                f"{seconds(plan.forecast_time_per_token_s)} forecast at that batch (bound "
                f"{seconds(plan.time_per_token_s)})",
            ),
            {
                "forecast_time_per_output_token_s": plan.forecast_time_per_token_s,
                "time_per_output_token_s": plan.time_per_token_s,
            },
        )
        fields.add(
            (
                "time to first token",
                f"{seconds(plan.forecast_time_to_first_token_s)} forecast "
                f"(bound {seconds(plan.time_to_first_token_s)})",
            ),
            {
                "forecast_time_to_first_token_s": plan.forecast_time_to_first_token_s,
                "time_to_first_token_s": plan.time_to_first_token_s,
            },
        )
        fields.add(
            ("tokens/s, system", f"{rate(plan.forecast_tokens_per_s)} forecast (bound {rate(plan.tokens_per_s)})"),
            {"forecast_tokens_per_s": plan.forecast_tokens_per_s, "tokens_per_s": plan.tokens_per_s},
        )
        fields.add(
            (
                "tokens/s per chip",
                f"{rate(plan.forecast_tokens_per_s_per_chip)} forecast (bound {rate(plan.tokens_per_s_per_chip)})",
            ),
            {
                "forecast_tokens_per_s_per_chip": plan.forecast_tokens_per_s_per_chip,
                "tokens_per_s_per_chip": plan.tokens_per_s_per_chip,
            },
        )
        band = 100 * hw.data.calibrated.SERVING_ERROR.value
        report.note(
            f"(targets, met by the forecast: time per output token {seconds(tpot)}, time to first token "
            f"{seconds(ttft)}; the forecast is ±{band:.0f} % on runs outside the fit, the bound is every chip at "
            "its peak)"
        )
        return report
    n = args.chips
    options["efficiency"] = load_efficiency(args)
    step = hw.inference_step(model, chip, args.batch, args.context, 1, n, **options)
    per_token = hw.time_per_output_token_s(model, chip, args.context, args.batch, n, **options)
    first = hw.time_to_first_token_s(model, chip, prompt, 1, n, **options)
    largest = hw.max_batch(
        model, chip, args.context, n, options["weight_dtype"], options["kv_dtype"], usable_fraction=args.usable
    )
    turn = hw.compute_bound_batch(model, chip, args.context, n, **options)
    report = _serve_report(args, model, chip, args.batch, prompt)
    fields = report.fields()
    fields.add(
        ("time per output token", f"{seconds(per_token)} (no overlap: {seconds(step.time_upper_s)})"),
        {"time_per_output_token_s": per_token, "time_upper_s": step.time_upper_s},
    )
    fields.add(
        (
            "bound",
            f"{step.bound} (compute {seconds(step.compute_time_s)}, memory {seconds(step.memory_time_s)}, "
            f"communication {seconds(step.comm_time_s)})",
        ),
        {
            "bound": str(step.bound),
            "compute_time_s": step.compute_time_s,
            "memory_time_s": step.memory_time_s,
            "comm_time_s": step.comm_time_s,
        },
    )
    fields.add(("tokens/s, system", rate(step.tokens_per_s)), {"tokens_per_s": step.tokens_per_s})
    fields.add(
        ("tokens/s per chip", rate(step.tokens_per_s_per_chip)), {"tokens_per_s_per_chip": step.tokens_per_s_per_chip}
    )
    band = f"±{100 * hw.data.calibrated.SERVING_ERROR.value:.0f} % on runs outside the fit"
    fields.add(
        ("forecast", f"{seconds(step.forecast_time_s)} per output token, {rate(step.forecast_tokens_per_s)} ({band})"),
        {"forecast_time_s": step.forecast_time_s, "forecast_tokens_per_s": step.forecast_tokens_per_s},
    )
    fields.add(("time to first token", seconds(first)), {"time_to_first_token_s": first})
    fields.add(("largest batch that fits", f"{largest:,} sequences of {args.context:,} tokens"), {"max_batch": largest})
    fits = args.batch <= largest
    fields.add(
        ("batch fits in HBM", "yes" if fits else f"NO: batch {args.batch:,} > {largest:,}"), {"batch_fits": fits}
    )
    fields.add(
        ("compute-bound from batch", f"{turn:,.0f}" if math.isfinite(turn) else "never (memory-bound)"),
        {"compute_bound_batch": turn},
    )
    for name, key, target, value in (
        ("time per output token", "tpot_target_met", tpot, per_token),
        ("time to first token", "ttft_target_met", ttft, first),
    ):
        if math.isfinite(target):
            met = bool(value <= target)
            fields.add((f"target {name}", f"{seconds(target)}: {'met' if met else 'MISSED'}"), {key: met})
    return report


def _mesh_sizes(mesh: hw.Mesh) -> dict[str, int]:
    return {axis: getattr(mesh, axis) for axis in MESH_AXES}


def _train_inputs(args: argparse.Namespace, model: hw.ModelShape, cluster: hw.Cluster) -> dict[str, object]:
    return {
        "model": model.key,
        "cluster": cluster.key,
        "global_batch_tokens": args.global_batch_tokens,
        "seq_len": args.seq_len,
    }


def run_train(args: argparse.Namespace) -> Report:
    model, cluster = load_model(args), hw.cluster(args.cluster)
    sizes = args.mesh or {"dp": args.chips or 1}
    mesh = hw.Mesh(**sizes)
    if args.chips and mesh.n_chips != args.chips:
        raise ValueError(f"--mesh {sizes} has {mesh.n_chips:,} chips, --chips says {args.chips:,}")
    step = hw.train_step(model, cluster, mesh, args.global_batch_tokens, args.seq_len, efficiency=load_efficiency(args))
    report = Report(
        "train",
        [
            f"{model.name} on {cluster.name}, mesh {mesh} ({mesh.n_chips:,} chips); global batch "
            f"{args.global_batch_tokens:,} tokens of sequences of {args.seq_len:,}"
        ],
        {**_train_inputs(args, model, cluster), "mesh": _mesh_sizes(mesh)},
    )
    fields = report.fields()
    fields.add(("step time", seconds(step.time_s)), {"time_s": step.time_s})
    fields.add(("tokens/s", rate(step.tokens_per_s)), {"tokens_per_s": step.tokens_per_s})
    fields.add(("MFU", f"{100 * step.mfu:.1f} %"), {"mfu": step.mfu})
    band = f"±{100 * hw.data.calibrated.TRAINING_ERROR.value:.0f} % on runs outside the fit"
    fields.add(
        (
            "forecast",
            f"{seconds(step.forecast_time_s)} per step, {rate(step.forecast_tokens_per_s)}, "
            f"MFU {100 * step.forecast_mfu:.1f} % ({band})",
        ),
        {
            "forecast_time_s": step.forecast_time_s,
            "forecast_tokens_per_s": step.forecast_tokens_per_s,
            "forecast_mfu": step.forecast_mfu,
        },
    )
    fields.add(
        ("memory per chip", hw.format_bytes(step.memory_per_chip_bytes)),
        {"memory_per_chip_bytes": step.memory_per_chip_bytes},
    )
    fields.add(("fits", "yes" if step.fits else f"NO: {step.reason}"), {"fits": step.fits, "reason": step.reason})
    comm = report.table("communication", ("communication", "time", "not hidden"), align="lrr")
    for name, time in step.comm_time_s.items():
        exposed = step.exposed_comm_time_s.get(name, 0.0)
        comm.add(
            (name, seconds(time), seconds(exposed)), {"collective": name, "time_s": time, "exposed_time_s": exposed}
        )
    report.note(
        "(bounds: every chip at its peak FLOP/s and every link at its rate; the forecast: at what kernels reach)"
    )
    return report


def run_plan(args: argparse.Namespace) -> Report:
    model, cluster = load_model(args), hw.cluster(args.cluster)
    n_chips = args.chips or cluster.max_chips
    if n_chips is None:
        raise ValueError(f"--chips is needed: {cluster.name} has no largest size")
    results = [
        (p.mesh, p.step, p.reason)
        for p in hw.plan_training(
            model, cluster, args.global_batch_tokens, args.seq_len, n_chips, efficiency=load_efficiency(args)
        ).meshes
    ]
    feasible = [(mesh, step) for mesh, step, _ in results if step is not None and step.fits]
    report = Report(
        "plan",
        [
            f"{model.name} on {n_chips:,} chips of {cluster.name}; global batch {args.global_batch_tokens:,} tokens, "
            f"sequences of {args.seq_len:,}"
        ],
        {**_train_inputs(args, model, cluster), "n_chips": n_chips, "top": None if args.all else args.top},
        csv_table="meshes",
    )
    header = ("#", "mesh", "forecast step", "forecast MFU", "step (bound)", "tokens/s (bound)", "MFU (bound)")
    header += ("memory per chip",)
    table = report.table("meshes", (*header, "fits", "why not") if args.all else header, "rlrrrrrr" + "ll" * args.all)
    shown = results if args.all else [(mesh, step, "") for mesh, step in feasible[: args.top]]
    for rank, (mesh, step, reason) in enumerate(shown, 1):
        fits = step is not None and step.fits
        cells = [
            rank,
            str(mesh),
            seconds(step.forecast_time_s) if step else "-",
            f"{100 * step.forecast_mfu:.1f} %" if step else "-",
            seconds(step.time_s) if step else "-",
            rate(step.tokens_per_s).removesuffix(" tokens/s") if step else "-",
            f"{100 * step.mfu:.1f} %" if step else "-",
            hw.format_bytes(step.memory_per_chip_bytes) if step else "-",
        ]
        if args.all:
            cells += ["yes" if fits else "no", reason or "-"]
        table.add(
            cells,
            {
                "rank": rank,
                "mesh": str(mesh),
                **_mesh_sizes(mesh),
                "forecast_time_s": step.forecast_time_s if step else None,
                "forecast_mfu": step.forecast_mfu if step else None,
                "time_s": step.time_s if step else None,
                "tokens_per_s": step.tokens_per_s if step else None,
                "mfu": step.mfu if step else None,
                "memory_per_chip_bytes": step.memory_per_chip_bytes if step else None,
                "fits": fits,
                "reason": reason,
            },
        )
    shown_best = f"the best {min(args.top, len(feasible)):,} by forecast step time"
    best = "every mesh, feasible ones first by forecast step time" if args.all else shown_best
    band = 100 * hw.data.calibrated.TRAINING_ERROR.value
    report.note(
        f"{len(feasible):,} of {len(results):,} meshes fit; showing {best} (--top N, --all for every mesh with the "
        "reason it fails). The forecast prices each term at what kernels reach "
        f"(±{band:.0f} % on runs outside the fit); the bound puts every chip at its peak, every link at its rate."
    )
    return report
