"""``hwlib memory`` (training memory and the chips that hold it), ``hwlib train`` (one training step on a mesh)
and ``hwlib plan`` (the best meshes of a cluster).

Each answer says first whether it fits; a step leads with its forecast and the error band for the run's kind, and the
bound follows as the ceiling. A mesh that does not fit prints no step time. Every number comes from hwlib; nothing is
derived here.
"""

from __future__ import annotations

import argparse

import hwlib as hw
from hwlib.cli.costing import add_run_cost
from hwlib.cli.options import MESH_AXES, load_efficiency, load_model
from hwlib.cli.report import Report, add_band, rate, seconds
from hwlib.data.prices import DEFAULT_PRICES as PRICED_CHIPS
from hwlib.training.plan import best_step
from hwlib.training.run import plan_run


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
    if held.n_chips:
        shown = f"yes: on {held.n_chips:,} chips under {args.sharding}, each holding its micro-batch's activations"
        report.add_verdict(report.fields(), "fits", shown, n_chips=held.n_chips)
    else:
        report.add_verdict(report.fields(), "fits", f"NO: {held.reason}", held.reason, n_chips=None)
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
    return report


def _mesh_sizes(mesh: hw.Mesh) -> dict[str, int]:
    return {axis: getattr(mesh, axis) for axis in MESH_AXES}


def _million_tokens_usd(args: argparse.Namespace, chip: hw.Chip, step: object) -> float:
    """The forecast dollars of a million training tokens at ``step``'s pace, at the cost options' price."""
    cost = hw.costs.training_cost(step, chip, tokens=1e6, price=args.price_per_chip_hour)
    return float(cost.usd)


def _whole_run(fields: object, step: object, args: argparse.Namespace, run: object, chip: hw.Chip) -> None:
    """A whole run's line: its tokens (a target's, with a critical batch), steps, days and chip-hours."""
    tokens = run.tokens if run is not None else float(args.tokens)
    steps = tokens / args.global_batch_tokens
    forecast, bound = steps * float(step.forecast_time_s), steps * step.time_s
    hours = {name: seconds_ * step.n_chips / 3600 for name, seconds_ in (("forecast", forecast), ("bound", bound))}
    target = f" (to the target; the batch reaching it soonest, of {len(run.tried)} tried)" if run is not None else ""
    fields.add(
        (
            "whole run",
            f"{tokens:,.0f} tokens in {steps:,.0f} steps{target}: forecast {forecast / 86400:,.1f} days, "
            f"{hours['forecast']:,.0f} chip-hours; bound {bound / 86400:,.1f} days",
        ),
        {
            "run_tokens": tokens,
            "run_steps": steps,
            "forecast_run_time_s": forecast,
            "forecast_chip_hours": hours["forecast"],
            "bound_run_time_s": bound,
            "bound_chip_hours": hours["bound"],
        },
    )
    add_run_cost(fields, args, chip, lambda **options: hw.costs.training_cost(step, chip, tokens=tokens, **options))


def _tuning(args: argparse.Namespace) -> str:
    """The fine-tuning and offload options in words ("" for neither)."""
    words = ""
    if args.lora or args.qlora:
        base = "bf16" if args.lora else "NF4 (QLoRA)"
        words += f", LoRA adapters of rank {args.lora or args.qlora} on a frozen {base} base"
    if args.offload:
        words += f", {args.offload.replace('both', 'optimizer and activations')} offloaded to the host"
    if args.fp8_recipe:
        words += f", FP8 recipe {args.fp8_recipe}"
    if args.ep_overlap:
        words += ", expert all-to-alls overlapped"
    return words


def _micro_batch(sequences: float) -> str:
    return f"micro-batches of {sequences:g} sequence" + ("s" if sequences != 1 else "")


def _chunks(step: object) -> str:
    if step.mesh.pp == 1:
        return "no pipeline"
    return f"{step.schedule}, {step.interleave} chunk{'s' if step.interleave > 1 else ''} per pipeline stage"


def _schedule(step: object) -> str:
    """A plan row's pipeline schedule: "-" without a pipeline, the chunks per stage where interleaved."""
    if step.mesh.pp == 1:
        return "-"
    return step.schedule + (f" x{step.interleave}" if step.interleave > 1 else "")


def _step_options(args: argparse.Namespace) -> dict[str, object]:
    """The step options ``train`` and ``plan`` take: the forecast's overrides, the matmuls' dtype, the interleave,
    and each choice the caller fixes (the planner picks the others)."""
    options = {"efficiency": load_efficiency(args), "dtype": args.precision}
    if args.interleave:
        options["interleave"] = args.interleave
    if args.schedule:
        options["schedule"] = args.schedule
    if args.fp8_recipe:
        if args.precision != "fp8":
            raise ValueError(f"--fp8-recipe {args.fp8_recipe} needs --precision fp8, got --precision {args.precision}")
        options["fp8"] = args.fp8_recipe
    if args.ep_overlap:
        options["ep_overlap"] = True
    if args.lora or args.qlora:
        options["adapter"] = hw.LoRA(rank=args.lora or args.qlora, base_dtype="bf16" if args.lora else "nf4")
    if args.offload:
        options["offload"] = hw.Offload(
            optimizer=args.offload in ("optimizer", "both"), activations=args.offload in ("activations", "both")
        )
    if args.micro_batch:
        options["micro_batch_tokens"] = args.micro_batch * args.seq_len
    if args.recompute:
        options["recompute"] = args.recompute
    if args.zero is not None:
        options["zero"] = args.zero
    return options


def _train_inputs(args: argparse.Namespace, model: hw.ModelShape, cluster: hw.Cluster) -> dict[str, object]:
    return {
        "model": model.key,
        "cluster": cluster.key,
        "global_batch_tokens": args.global_batch_tokens,
        "seq_len": args.seq_len,
    }


def run_train(args: argparse.Namespace) -> Report:
    model, cluster = load_model(args), hw.cluster(args.cluster)
    options = _step_options(args)
    batch = (args.global_batch_tokens, args.seq_len)
    run = None
    if args.critical_batch_tokens and not args.tokens:
        raise ValueError("--critical-batch-tokens is a whole run's: add --tokens (the run's E_min)")
    if args.critical_batch_tokens:  # the batch that reaches the target soonest, and its best mesh
        if args.mesh:
            raise ValueError("--critical-batch-tokens chooses the global batch and the mesh: drop --mesh")
        run = plan_run(
            model,
            cluster,
            args.chips or 1,
            args.tokens,
            args.seq_len,
            critical_batch_tokens=args.critical_batch_tokens,
            **options,
        )
        step, chosen, mesh = run.step, "the planner's best", run.step.mesh
        args.global_batch_tokens = int(run.global_batch_tokens)
    elif args.mesh:
        mesh = hw.Mesh(**args.mesh)
        if args.chips and mesh.n_chips != args.chips:
            raise ValueError(f"--mesh {args.mesh} has {mesh.n_chips:,} chips, --chips says {args.chips:,}")
        step, chosen = best_step(model, cluster, mesh, *batch, **options), "given"
    if run is None and not args.mesh:
        plan = hw.plan_training(model, cluster, *batch, args.chips or 1, **options)
        step, chosen = (plan.feasible or plan.meshes)[0].step, "the planner's best"
        if step is None:
            raise ValueError(f"no mesh of {args.chips or 1:,} chips divides the model and the batch")
        mesh = step.mesh
    report = Report(
        "train",
        [
            f"{model.name} on {cluster.name}, mesh {mesh} ({chosen}, {mesh.n_chips:,} chips); global batch "
            f"{args.global_batch_tokens:,} tokens of sequences of {args.seq_len:,}",
            f"{_micro_batch(step.micro_batch_tokens / args.seq_len)}, "
            f"{step.recompute.replace('none', 'no')} recomputation, ZeRO-{step.zero} over dp, {_chunks(step)}, "
            f"{args.precision} matmuls{_tuning(args)}",
        ],
        {
            **_train_inputs(args, model, cluster),
            "mesh": _mesh_sizes(mesh),
            "micro_batch_sequences": step.micro_batch_tokens / args.seq_len,
            "recompute": step.recompute,
            "zero": step.zero,
            "interleave": step.interleave,
            "schedule": step.schedule,
            "precision": args.precision,
        },
    )
    fields = report.fields()
    memory = hw.format_bytes(step.memory_per_chip_bytes)
    if not step.fits:
        report.add_verdict(
            fields, "fits", f"NO: {step.reason}", step.reason, memory_per_chip_bytes=step.memory_per_chip_bytes
        )
        report.note("(no step time: a mesh that does not fit does not run; hwlib plan lists the meshes that fit)")
        return report
    fields.add(
        (
            "forecast",
            f"MFU {100 * step.forecast_mfu:.1f} %, {seconds(step.forecast_time_s)} per step, "
            f"{rate(step.forecast_tokens_per_s)}",
        ),
        {
            "forecast_mfu": step.forecast_mfu,
            "forecast_time_s": step.forecast_time_s,
            "forecast_tokens_per_s": step.forecast_tokens_per_s,
        },
    )
    add_band(fields, hw.forecast_band("training", model, cluster.chip, step.micro_batches))
    fields.add(
        (
            "bound, the ceiling",
            f"MFU {100 * step.mfu:.1f} %, {seconds(step.time_s)} per step, {rate(step.tokens_per_s)}",
        ),
        {"bound_mfu": step.mfu, "bound_time_s": step.time_s, "bound_tokens_per_s": step.tokens_per_s},
    )
    if args.tokens:
        _whole_run(fields, step, args, run, cluster.chip)
    report.add_verdict(fields, "fits", f"yes: {memory} per chip", memory_per_chip_bytes=step.memory_per_chip_bytes)
    comm = report.table("communication", ("communication (bound)", "time", "not hidden"), align="lrr")
    for name, time in step.comm_time_s.items():
        exposed = step.exposed_comm_time_s.get(name, 0.0)
        comm.add(
            (name, seconds(time), seconds(exposed)),
            {"collective": name, "bound_time_s": time, "bound_exposed_time_s": exposed},
        )
    report.note(
        "(the forecast prices each term at what kernels reach; the bound, every chip at its peak FLOP/s and every link "
        "at its rate)"
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
            model, cluster, args.global_batch_tokens, args.seq_len, n_chips, **_step_options(args)
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
    if not feasible:
        reason = f"none of the {len(results):,} meshes fits" + ("" if args.all else " (--all gives each one's reason)")
        report.add_verdict(report.fields(), "fits", f"NO: {reason}", reason)
    header = ("#", "mesh", *(("fits",) * args.all), "micro", "recompute", "ZeRO", "schedule", "forecast step")
    header += ("forecast MFU", "$ per M tokens")
    priced = args.price_per_chip_hour is not None or cluster.chip.key in PRICED_CHIPS
    header += ("step (bound)", "tokens/s (bound)", "MFU (bound)", "memory per chip", *(("why not",) * args.all))
    table = report.table("meshes", header, "rl" + "l" * args.all + "rlrlrrrrrrr" + "l" * args.all)
    shown = results if args.all else [(mesh, step, "") for mesh, step in feasible[: args.top]]
    for rank, (mesh, step, reason) in enumerate(shown, 1):
        fits = step is not None and step.fits
        ran = step if fits else None  # a mesh that does not fit shows no time
        usd = _million_tokens_usd(args, cluster.chip, ran) if ran and priced else None
        cells = [
            rank,
            str(mesh),
            *(("yes" if fits else "no",) * args.all),
            f"{step.micro_batch_tokens / args.seq_len:g}" if step else "-",
            step.recompute if step else "-",
            step.zero if step else "-",
            _schedule(step) if step else "-",
            seconds(ran.forecast_time_s) if ran else "-",
            f"{100 * ran.forecast_mfu:.1f} %" if ran else "-",
            f"{usd:,.2f}" if usd is not None else "-",
            seconds(ran.time_s) if ran else "-",
            rate(ran.tokens_per_s).removesuffix(" tokens/s") if ran else "-",
            f"{100 * ran.mfu:.1f} %" if ran else "-",
            hw.format_bytes(step.memory_per_chip_bytes) if step else "-",
            *((reason or "-",) * args.all),
        ]
        table.add(
            cells,
            {
                "rank": rank,
                "mesh": str(mesh),
                **_mesh_sizes(mesh),
                "fits": fits,
                "reason": reason,
                "micro_batch_sequences": step.micro_batch_tokens / args.seq_len if step else None,
                "recompute": step.recompute if step else None,
                "zero": step.zero if step else None,
                "schedule": step.schedule if step else None,
                "interleave": step.interleave if step else None,
                "forecast_time_s": ran.forecast_time_s if ran else None,
                "forecast_tokens_per_s": ran.forecast_tokens_per_s if ran else None,
                "forecast_mfu": ran.forecast_mfu if ran else None,
                "usd_per_million_tokens": usd,
                "bound_time_s": ran.time_s if ran else None,
                "bound_tokens_per_s": ran.tokens_per_s if ran else None,
                "bound_mfu": ran.mfu if ran else None,
                "memory_per_chip_bytes": step.memory_per_chip_bytes if step else None,
            },
        )
    shown_best = (
        f"the best {min(args.top, len(feasible)):,} by forecast step time (on a fixed count of chips, by cost too)"
    )
    best = "every mesh, feasible ones first by forecast step time" if args.all else shown_best
    band = hw.forecast_band("training", model, cluster.chip, feasible[0][1].micro_batches if feasible else None)
    report.note(
        f"{len(feasible):,} of {len(results):,} meshes fit; showing {best} (--top N, --all for every mesh with the "
        "reason it fails; a mesh that does not fit shows no time). The forecast prices each term at what kernels "
        f"reach, error band (for the best mesh's micro-batches) {band.text}; the bound, the ceiling, puts every chip "
        "at its peak and every link at its rate."
    )
    return report
