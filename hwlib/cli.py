"""A command-line calculator on hwlib: ``python -m hwlib`` or the ``hwlib`` console script.

``hwlib memory`` (training memory and the chips that hold it), ``hwlib serve`` (a decode step and a
prefill on n chips, or the fewest chips at latency targets), ``hwlib train`` and ``hwlib plan`` (a
training step and a training plan, where this version of hwlib has them) and ``hwlib list`` (the
names each option accepts). Every number comes from hwlib's public functions; this module parses
and prints. Bad input prints one line ``hwlib <command>: error: ...`` on stderr and exits with 2.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import hwlib as hw
from hwlib.sharding import SHARDINGS

USAGE_ERROR = 2
LISTS = ("models", "chips", "clusters", "precisions", "recipes")
MESH_AXES = ("dp", "fsdp", "tp", "pp", "ep", "cp")
DTYPE_ROLES = {"weight_dtype": "weights", "kv_dtype": "KV", "activation_dtype": "activations",
               "compute_dtype": "matmuls"}
NAMES = "names each option accepts: hwlib list models|chips|recipes|precisions|clusters"
GLOBAL_BATCH_TOKENS = 2**20
"""Default tokens per step of ``train``/``plan``: about document 002's critical batch (1e6) in whole sequences."""
SERVE_CONTEXT = 4096
"""Default context of ``hwlib serve``, tokens (the serving explorer's default)."""


class Unavailable(Exception):
    """A command whose library function this version of hwlib does not have."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr (no usage block), exit status 2."""

    def error(self, message: str) -> None:
        self.exit(USAGE_ERROR, f"{self.prog}: error: {_one_line(message)} (see {self.prog} --help)\n")


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


# --- option values ------------------------------------------------------------------------------

def _real(text: str, ok: Callable[[float], bool], what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and ok(value)):
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
    return value


def count(text: str) -> int:
    """A whole number >= 1; '1,024', '1_024' and '1e6' are accepted."""
    return int(_real(text.replace(",", "").replace("_", ""), lambda value: value.is_integer() and value >= 1,
                     "a whole number >= 1"))


def milliseconds(text: str) -> float:
    """A duration in ms, > 0."""
    return _real(text, lambda value: value > 0, "a number of milliseconds > 0")


def fraction(text: str) -> float:
    """A share in (0, 1]."""
    return _real(text, lambda value: 0 < value <= 1, "a fraction in (0, 1], e.g. 0.8")


def precision(text: str) -> str:
    """A key of ``hw.PRECISIONS``, matched ignoring case, spaces and punctuation ('int8-weights')."""
    squash = lambda name: re.sub(r"[^a-z0-9]", "", name.lower())  # noqa: E731
    for key in hw.PRECISIONS:
        if squash(key) == squash(text):
            return key
    raise argparse.ArgumentTypeError(f"unknown precision {text!r}; one of {', '.join(map(repr, hw.PRECISIONS))}")


def mesh(text: str) -> dict[str, int]:
    """'dp=8,tp=4' -> {'dp': 8, 'tp': 4}; axes are MESH_AXES, sizes whole numbers >= 1."""
    sizes = {}
    for item in filter(None, text.replace(" ", "").split(",")):
        axis, _, size = item.partition("=")
        if axis not in MESH_AXES or not size:
            raise argparse.ArgumentTypeError(f"must be axis=size pairs over {', '.join(MESH_AXES)}, got {text!r}")
        sizes[axis] = count(size)
    if not sizes:
        raise argparse.ArgumentTypeError(f"must name at least one axis, e.g. dp=8,tp=4, got {text!r}")
    return sizes


# --- output -------------------------------------------------------------------------------------

def table(rows: Sequence[Sequence[object]], header: Sequence[str] | None = None, align: str = "") -> str:
    """Rows as aligned plain text: column i left-aligned where ``align[i]`` is 'l' (default: first column left,
    others right), a rule under the header."""
    cells = [[str(cell) for cell in row] for row in ([header] if header else []) + [list(r) for r in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    align = align or "l" + "r" * (len(widths) - 1)
    lines = []
    for row in cells:
        lines.append("  " + "  ".join(cell.ljust(w) if a == "l" else cell.rjust(w)
                                      for cell, w, a in zip(row, widths, align)).rstrip())
        if header and len(lines) == 1:
            lines.append("  " + "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def seconds(value: float) -> str:
    return hw.format_seconds(value) if math.isfinite(value) else "none"


def rate(tokens_per_s: float) -> str:
    return f"{tokens_per_s:,.0f} tokens/s"


# --- records from options -----------------------------------------------------------------------

def load_model(args: argparse.Namespace) -> hw.ModelShape:
    """The model of ``--model`` (``hw.model``) or of ``--config`` (a Hugging Face config.json)."""
    if args.config is None:
        return hw.model(args.model)
    path = Path(args.config)
    try:
        with path.open(encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, ValueError) as error:  # no such file, or not JSON
        raise ValueError(f"--config {args.config}: {getattr(error, 'strerror', None) or error}") from None
    return hw.ModelShape.from_hf_config(config, key=path.stem)


def smallest_deployment(n_chips: int, chip: hw.Chip, usable: float) -> str:
    """'56 chips (7 x 8-GPU node)': the smallest real deployment of at least ``n_chips`` chips."""
    try:  # the deployment that holds n_chips chips' usable HBM is the smallest with at least n_chips chips
        size = hw.deployment_chips(n_chips * hw.usable_bytes(chip, usable), chip, usable)
    except KeyError:
        return f"no deployment sizes known for {chip.name}"
    return f"{size:,} chips ({hw.deployment_name(size, chip)})"


# --- commands -----------------------------------------------------------------------------------

def run_memory(args: argparse.Namespace) -> None:
    model, chip, recipe, size = load_model(args), hw.chip(args.chip), hw.recipe(args.recipe), hw.format_bytes
    n_params = model.params()
    state, total = hw.training_state_breakdown(n_params, recipe), hw.training_state_bytes(n_params, recipe)
    held = hw.training_memory(model, recipe, chip, args.seq_len, args.batch, sharding=args.sharding,
                              recompute=args.recompute, usable_fraction=args.usable)
    print(f"{model.name}: {n_params / 1e9:,.2f}B parameters; recipe {recipe.key} ({recipe.label}, "
          f"{recipe.bytes_per_param:g} B/param)")
    print(f"{chip.name}: {size(chip.capacity_bytes)} HBM, {args.usable:.0%} usable = {size(held.usable_bytes)} per "
          f"chip; micro-batch per chip {args.batch:,} x {args.seq_len:,} tokens, recompute {args.recompute}\n")
    per_param = recipe.breakdown()
    rows = [(part, f"{per_param[part]:g}", size(state[part]), size(held.parts[part])) for part in state]
    rows += [(part, "-", "-", size(held.parts[part])) for part in ("activations", "logits")]
    rows.append(("total", f"{recipe.bytes_per_param:g}", size(total), size(held.per_chip_bytes)))
    where = f"{held.n_chips:,} chips" if held.n_chips else "one chip"
    print(table(rows, ("part", "B/param", "whole model", f"per chip ({args.sharding}, {where})")))
    pooled = hw.chips_needed(total, chip, args.usable)
    lines = [("fewest chips, state pooled", f"{pooled:,}", smallest_deployment(pooled, chip, args.usable)),
             (f"fewest chips, {args.sharding} + activations", f"{held.n_chips:,}" if held.n_chips else "none",
              smallest_deployment(held.n_chips, chip, args.usable) if held.n_chips else "-")]
    print("\n" + table(lines, ("holds the training", "chips", "smallest deployment"), align="lrl"))
    print("  (pooled: ceil(state / usable HBM), activations left out; "
          f"{args.sharding}: each chip also holds its own micro-batch's activations and logits)")
    if not held.n_chips:
        print(f"  {args.sharding}: {held.reason}")


def run_serve(args: argparse.Namespace) -> None:
    model, chip = load_model(args), hw.chip(args.chip)
    options = dict(hw.PRECISIONS[args.precision])
    prompt = args.prompt or args.context
    tpot = math.inf if args.tpot_ms is None else args.tpot_ms / 1e3
    ttft = math.inf if args.ttft_ms is None else args.ttft_ms / 1e3
    dtypes = ", ".join(f"{DTYPE_ROLES[k]} {v}" for k, v in options.items())
    where = f"{args.chips:,} x {chip.name}" if args.chips else chip.name
    where += " (tensor parallel)" if (args.chips or 1) > 1 else ""
    print(f"{model.name} on {where}; precision {args.precision!r} ({dtypes})")
    print(f"decode: batch {args.batch:,} at context {args.context:,} tokens; prefill: one prompt of {prompt:,} "
          "tokens\n")
    if args.chips is None:
        plan = hw.serving_chips(model, chip, args.context, args.batch, tpot, prompt_len=prompt, ttft_target_s=ttft,
                                usable_fraction=args.usable, **options)
        if plan.n_chips == 0:
            sizes = ", ".join(map(str, hw.tensor_parallel_sizes(model, chip)))
            print(f"  no tensor-parallel size ({sizes} chips) holds batch {args.batch:,} within the targets")
            return
        print(table([("fewest chips", f"{plan.n_chips:,} ({plan.deployment})"),
                     ("batch within the target", f"{plan.batch:,} sequences ({plan.max_batch:,} fit in HBM)"),
                     ("time per output token", f"{seconds(plan.time_per_token_s)} at that batch"),
                     ("time to first token", seconds(plan.time_to_first_token_s)),
                     ("tokens/s, system", rate(plan.tokens_per_s)),
                     ("tokens/s per chip", rate(plan.tokens_per_s_per_chip))], align="ll"))
        print(f"  (targets: time per output token {seconds(tpot)}, time to first token {seconds(ttft)})")
        return
    n = args.chips
    step = hw.inference_step(model, chip, args.batch, args.context, 1, n, **options)
    per_token = hw.time_per_output_token_s(model, chip, args.context, args.batch, n, **options)
    first = hw.time_to_first_token_s(model, chip, prompt, 1, n, **options)
    largest = hw.max_batch(model, chip, args.context, n, options["weight_dtype"], options["kv_dtype"],
                           usable_fraction=args.usable)
    turn = hw.compute_bound_batch(model, chip, args.context, n, **options)
    rows = [("time per output token", f"{seconds(per_token)} (no overlap: {seconds(step.time_upper_s)})"),
            ("bound", f"{step.bound} (compute {seconds(step.compute_time_s)}, memory {seconds(step.memory_time_s)}, "
                      f"communication {seconds(step.comm_time_s)})"),
            ("tokens/s, system", rate(step.tokens_per_s)),
            ("tokens/s per chip", rate(step.tokens_per_s_per_chip)),
            ("time to first token", seconds(first)),
            ("largest batch that fits", f"{largest:,} sequences of {args.context:,} tokens"),
            ("batch fits in HBM", "yes" if args.batch <= largest else f"NO: batch {args.batch:,} > {largest:,}"),
            ("compute-bound from batch", f"{turn:,.0f}" if math.isfinite(turn) else "never (memory-bound)")]
    for name, target, value in (("time per output token", tpot, per_token), ("time to first token", ttft, first)):
        if math.isfinite(target):
            rows.append((f"target {name}", f"{seconds(target)}: {'met' if value <= target else 'MISSED'}"))
    print(table(rows, align="ll"))


def run_train(args: argparse.Namespace) -> None:
    if not hasattr(hw, "train_step"):
        raise Unavailable
    model, cluster = load_model(args), hw.cluster(args.cluster)
    sizes = args.mesh or {"dp": args.chips or 1}
    chips = math.prod(size for axis, size in sizes.items() if axis != "ep")  # ep splits the dp x fsdp ranks
    if args.chips and chips != args.chips:
        raise ValueError(f"--mesh {sizes} has {chips:,} chips, --chips says {args.chips:,}")
    step = hw.train_step(model, cluster, hw.Mesh(**sizes), args.global_batch_tokens, args.seq_len)
    print(f"{model.name} on {cluster.name}, mesh {', '.join(f'{k}={v}' for k, v in sizes.items())}; "
          f"global batch {args.global_batch_tokens:,} tokens of sequences of {args.seq_len:,}\n")
    rows = [("step time", seconds(step.time_s)), ("tokens/s", rate(step.tokens_per_s)),
            ("MFU", f"{100 * step.mfu:.1f} %"), ("memory per chip", hw.format_bytes(step.memory_per_chip_bytes)),
            ("fits", "yes" if step.fits else ": ".join(filter(None, ("NO", getattr(step, "reason", "")))))]
    rows += [(f"communication: {name}", seconds(time)) for name, time in step.comm_time_s.items()]
    print(table(rows, align="ll"))


def run_plan(args: argparse.Namespace) -> None:
    if not hasattr(hw, "plan_training"):
        raise Unavailable
    model, cluster = load_model(args), hw.cluster(args.cluster)
    extra = {} if args.chips is None else {"n_chips": args.chips}
    plan = hw.plan_training(model, cluster, args.global_batch_tokens, args.seq_len, **extra)
    print(f"{model.name} on {cluster.name}; global batch {args.global_batch_tokens:,} tokens, "
          f"sequences of {args.seq_len:,}")
    print(plan.to_string(float_format=lambda v: f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"))  # a DataFrame


def _sold(chip: hw.Chip) -> str:
    try:
        plan = hw.deployment(chip)
    except KeyError:
        return "-"
    return f"{plan.kind}s of {', '.join(map(str, plan.sizes))}"


def run_list(args: argparse.Namespace) -> None:
    if args.what == "models":
        rows = [(m.key, m.name, f"{m.params() / 1e9:,.2f}B" if m.d_model else "-", m.n_layers, m.d_model or "-",
                 f"{m.n_heads or '-'}/{m.n_kv_heads}", m.n_experts or "-") for m in hw.models()]
        print(table(rows, ("--model", "name", "parameters", "layers", "d_model", "heads/KV", "experts"), "llrrrrr"))
    elif args.what == "chips":
        rows = [(c.key, c.name, hw.format_bytes(c.capacity_bytes), hw.format_bytes_per_s(c.hbm_bytes_per_s),
                 hw.format_flops_per_s(c.peak("bf16")) if "bf16" in c.peak_flops_per_s else "-", _sold(c))
                for c in hw.chips("vendor")]
        print(table(rows, ("--chip", "name", "HBM", "HBM bandwidth", "bf16 peak", "sold as"), "llrrrl"))
    elif args.what == "clusters":
        print(table([(c.key, c.name, c.chip.name) for c in hw.clusters()], ("--cluster", "name", "chip"), "lll"))
    elif args.what == "precisions":
        rows = [(repr(key), *options.values()) for key, options in hw.PRECISIONS.items()]
        print(table(rows, ("--precision", *(DTYPE_ROLES[o] for o in hw.PRECISIONS["bf16"])), "lllll"))
        print("  (quote a name with spaces, or write it with hyphens: --precision int8-weights-and-kv)")
    else:
        rows = [(r.key, r.label, f"{r.bytes_per_param:g}", " + ".join(f"{v:g}" for v in r.breakdown().values()))
                for r in hw.recipes()]
        print(table(rows, ("--recipe", "name", "B/param", "weights + grads + master + optimizer"), "llrl"))


# --- the parser ---------------------------------------------------------------------------------

def _model_options(parser: argparse.ArgumentParser, chip: bool = True) -> None:
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--model", metavar="NAME", help="model key, e.g. llama-3-70b (hwlib list models)")
    group.add_argument("--config", metavar="FILE", help="a Hugging Face config.json instead of --model")
    if chip:
        parser.add_argument("--chip", metavar="CHIP", required=True, help="chip, e.g. H100-SXM (hwlib list chips)")
        parser.add_argument("--usable", type=fraction, metavar="F", default=hw.doc000.USABLE_FRACTION,
                            help="usable share of each chip's HBM (default: %(default)s)")


def _command(subparsers: argparse._SubParsersAction, name: str, summary: str, example: str, run: Callable
             ) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(name, help=summary, description=summary, epilog=f"example:\n  {example}\n\n{NAMES}",
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(run=run, command=name)
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The ``hwlib`` parser with its subcommands."""
    parser = _Parser(prog="hwlib", formatter_class=argparse.RawDescriptionHelpFormatter,
                     description="A calculator for ML-accelerator performance: training memory, serving,\n"
                                 "training steps and plans, from hwlib's sourced chip and model records.",
                     epilog="examples:\n  hwlib memory --model llama-3-70b --chip H100-SXM\n"
                            "  hwlib serve --model llama-3-70b --chip H100-SXM --chips 8 --batch 16\n"
                            "  hwlib --list chips\n\nhwlib COMMAND --help explains each command's options.\n" + NAMES)
    parser.add_argument("--list", choices=LISTS, metavar="WHAT",
                        help=f"print the names an option accepts: {', '.join(LISTS)}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    memory = _command(subparsers, "memory", "training memory and the fewest chips that hold it",
                      "hwlib memory --model llama-3-70b --chip H100-SXM --seq-len 4096", run_memory)
    _model_options(memory)
    memory.add_argument("--recipe", metavar="KEY", default="zero_mixed_adam",
                        help="training-state recipe (default: %(default)s)")
    memory.add_argument("--seq-len", type=count, metavar="N", default=hw.doc002.SEQ_LEN,
                        help="tokens per sequence (default: %(default)s)")
    memory.add_argument("--batch", type=count, metavar="N", default=1,
                        help="sequences per chip per micro-batch (default: %(default)s)")
    memory.add_argument("--sharding", choices=tuple(SHARDINGS), default="zero-3", metavar="NAME",
                        help=f"{'|'.join(SHARDINGS)} (default: %(default)s)")
    memory.add_argument("--recompute", choices=hw.RECOMPUTE, default="none", metavar="NAME",
                        help=f"activations recomputed: {'|'.join(hw.RECOMPUTE)} (default: %(default)s)")

    serve = _command(subparsers, "serve", "serving times and tokens/s on N chips, or the fewest chips",
                     "hwlib serve --model llama-3-70b --chip H100-SXM --batch 16 --tpot-ms 50 --ttft-ms 500",
                     run_serve)
    _model_options(serve)
    serve.add_argument("--chips", type=count, metavar="N", help="tensor-parallel chips (default: the fewest needed)")
    serve.add_argument("--precision", type=precision, metavar="NAME", default="bf16",
                       help="dtypes, e.g. fp8 (default: %(default)s)")
    serve.add_argument("--context", type=count, metavar="N", default=SERVE_CONTEXT,
                       help="tokens in each sequence's KV cache (default: %(default)s)")
    serve.add_argument("--prompt", type=count, metavar="N", help="prompt tokens to prefill (default: --context)")
    serve.add_argument("--batch", type=count, metavar="N", default=1,
                       help="sequences decoded together (default: %(default)s)")
    serve.add_argument("--tpot-ms", type=milliseconds, metavar="X",
                       help="target time per output token, ms (default: none)")
    serve.add_argument("--ttft-ms", type=milliseconds, metavar="X",
                       help="target time to first token, ms (default: none)")

    train = _command(subparsers, "train", "one training step: time, MFU, memory, communication",
                     "hwlib train --model llama-3-8b --cluster hgx-h100-ndr --mesh dp=16,fsdp=2,pp=2", run_train)
    plan = _command(subparsers, "plan", "training plans on a cluster",
                    "hwlib plan --model llama-3-8b --cluster hgx-h100-ndr --chips 64", run_plan)
    for parser_ in (train, plan):
        _model_options(parser_, chip=False)
        parser_.add_argument("--cluster", metavar="KEY", required=True,
                             help="cluster, e.g. hgx-h100-ndr (hwlib list clusters)")
        parser_.add_argument("--chips", type=count, metavar="N", help="chips in all (default: "
                             + ("the mesh's, or 1)" if parser_ is train else "any)"))
        parser_.add_argument("--global-batch-tokens", type=count, metavar="N",
                             default=GLOBAL_BATCH_TOKENS, help=f"tokens per step (default: {GLOBAL_BATCH_TOKENS:,})")
        parser_.add_argument("--seq-len", type=count, metavar="N", default=hw.doc002.SEQ_LEN,
                             help="tokens per sequence (default: %(default)s)")
    train.add_argument("--mesh", type=mesh, metavar="AXES",
                       help=f"chips per axis of {','.join(MESH_AXES)} (default: dp=--chips)")

    listing = _command(subparsers, "list", "the names an option accepts", "hwlib list chips", run_list)
    listing.add_argument("what", choices=LISTS, metavar="WHAT", help=f"one of {', '.join(LISTS)}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``hwlib`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.list:
        args.run, args.command, args.what = run_list, "list", args.list
    elif args.command is None:
        parser.error("choose a command: memory, serve, train, plan or list")
    prog = f"hwlib {args.command}"
    try:
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(io.StringIO()) as out:
            warnings.simplefilter("always")
            args.run(args)  # printed only when it succeeds: an error is one line, never half a table
        sys.stdout.write(out.getvalue())
        for warning in caught:
            print(f"{prog}: warning: {_one_line(warning.message)}", file=sys.stderr)
    except Unavailable:
        print(f"{prog}: not available in this version", file=sys.stderr)
        return USAGE_ERROR
    except (ValueError, KeyError, TypeError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(f"{prog}: error: {_one_line(message)}", file=sys.stderr)
        return USAGE_ERROR
    return 0
