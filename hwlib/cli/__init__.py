"""A command-line calculator on hwlib: ``python -m hwlib`` or the ``hwlib`` console script.

``hwlib memory`` (training memory and the chips that hold it), ``hwlib serve`` (a decode step and a prefill on
n chips, or the fewest chips at latency targets), ``hwlib train`` (one training step on a mesh), ``hwlib plan``
(the best meshes of a cluster), ``hwlib simulate`` (many users on one engine, in percentiles) and ``hwlib list``
(the names each option accepts). Each prints an aligned table
with units; ``--json`` prints one JSON object instead (its numbers in SI units, each named with its unit), and
``--csv`` the answer's table where the answer is one (memory, plan, simulate, list). Every number comes from hwlib's
public functions (``serving_commands``, ``training_commands``); bad input prints one line
``hwlib <command>: error: ...`` on stderr and exits with 2.

Every answer leads with the forecast and its error band, the measured error for the run's kind (training or
serving, dense or MoE, GPU or TPU); the bound follows as the ceiling. In JSON and CSV each time or rate is named
``forecast_*`` or ``bound_*``. A configuration that does not fit (or, with targets, no size that meets them) says so
first, in every format (``fits`` and ``reason``), prints no time for it, and exits with 1.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import warnings
from collections.abc import Callable, Sequence

import hwlib as hw
from hwlib.cli import options as option_types
from hwlib.cli.costing import add_cost_options
from hwlib.cli.listing import run_list
from hwlib.cli.options import MESH_AXES, count, efficiency, fraction, mesh, milliseconds, precision
from hwlib.cli.serving_commands import run_serve
from hwlib.cli.simulating import add_simulate
from hwlib.cli.training_commands import run_memory, run_plan, run_train
from hwlib.memory import RECOMPUTE
from hwlib.training.zero import SHARDINGS

USAGE_ERROR = 2
DOES_NOT_FIT = 1
"""Exit status of an answer whose configuration does not fit: it is printed, its verdict first, with no times."""
LISTS = ("models", "chips", "clusters", "precisions", "recipes")
NAMES = "names each option accepts: hwlib list models|chips|recipes|precisions|clusters"
GLOBAL_BATCH_TOKENS = 2**20
"""Default tokens per step of ``train``/``plan``: about document 002's critical batch (1e6) in whole sequences."""
SERVE_CONTEXT = 4096
"""Default context of ``hwlib serve``, tokens (the serving explorer's default)."""
PLAN_TOP = 10
"""Meshes ``hwlib plan`` prints by default."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr (no usage block), exit status 2."""

    def error(self, message: str) -> None:
        self.exit(USAGE_ERROR, f"{self.prog}: error: {_one_line(message)} (see {self.prog} --help)\n")


LONGEST_MESSAGE = 2000
"""The most characters of an error or warning line the calculator prints (a config with thousands of unknown keys
would print megabytes)."""
INTERNAL_ERROR = 3
"""The exit status of a failure that is not the input's fault (a bug in hwlib, or a resource run out)."""


def _one_line(text: object) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= LONGEST_MESSAGE else line[: LONGEST_MESSAGE - 40] + f" ... ({len(line):,} characters)"


def _model_options(parser: argparse.ArgumentParser, chip: bool = True) -> None:
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--model", metavar="NAME", help="model key, e.g. llama-3-70b (hwlib list models)")
    group.add_argument(
        "--config",
        metavar="PATH",
        help="a Hugging Face config.json instead of --model, or a folder holding one (a snapshot, or a model's "
        "folder in the Hugging Face cache, models--org--name)",
    )
    if chip:
        parser.add_argument("--chip", metavar="CHIP", required=True, help="chip, e.g. H100-SXM (hwlib list chips)")
        parser.add_argument(
            "--usable",
            type=fraction,
            metavar="F",
            default=hw.data.assumptions.USABLE_HBM_FRACTION,
            help="usable share of each chip's HBM (default: %(default)s)",
        )


def _command(
    subparsers: argparse._SubParsersAction, name: str, summary: str, example: str, run: Callable, table: bool
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        name,
        help=summary,
        description=summary,
        epilog=f"example:\n  {example}\n\n{NAMES}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(run=run, command=name)
    output = parser.add_mutually_exclusive_group()
    output.add_argument(
        "--json", action="store_true", help="print one JSON object (numbers in SI units, named with their unit)"
    )
    output.add_argument(
        "--csv", action="store_true", help="print the answer's table as CSV" if table else argparse.SUPPRESS
    )
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The ``hwlib`` parser with its subcommands."""
    parser = _Parser(
        prog="hwlib",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="A calculator for ML-accelerator performance: training memory, serving,\n"
        "training steps and plans, from hwlib's sourced chip and model records.",
        epilog="examples:\n  hwlib memory --model llama-3-70b --chip H100-SXM\n"
        "  hwlib serve --model llama-3-70b --chip H100-SXM --chips 8 --batch 16\n"
        "  hwlib plan --model llama-3-70b --cluster hgx-h100-ndr --chips 256 --json\n"
        "  hwlib --list chips\n\nhwlib COMMAND --help explains each command's options; every command takes "
        "--json,\nand memory, plan, simulate and list take --csv. Answers lead with the forecast and its error band;\n"
        "the bound (every chip at its peak) follows. A configuration that does not fit says so first and exits with "
        "1.\n" + NAMES,
    )
    parser.add_argument(
        "--list", choices=LISTS, metavar="WHAT", help=f"print the names an option accepts: {', '.join(LISTS)}"
    )
    parser.add_argument("--version", action="version", version=f"hwlib {hw.__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    memory = _command(
        subparsers,
        "memory",
        "training memory and the fewest chips that hold it",
        "hwlib memory --model llama-3-70b --chip H100-SXM --seq-len 4096",
        run_memory,
        table=True,
    )
    _model_options(memory)
    memory.add_argument(
        "--recipe", metavar="KEY", default="zero_mixed_adam", help="training-state recipe (default: %(default)s)"
    )
    memory.add_argument(
        "--seq-len",
        type=count,
        metavar="N",
        default=hw.doc002.SEQ_LEN,
        help="tokens per sequence (default: %(default)s)",
    )
    memory.add_argument(
        "--batch", type=count, metavar="N", default=1, help="sequences per chip per micro-batch (default: %(default)s)"
    )
    memory.add_argument(
        "--sharding",
        choices=tuple(SHARDINGS),
        default="zero-3",
        metavar="NAME",
        help=f"{'|'.join(SHARDINGS)} (default: %(default)s)",
    )
    memory.add_argument(
        "--recompute",
        choices=RECOMPUTE,
        default="none",
        metavar="NAME",
        help=f"activations recomputed: {'|'.join(RECOMPUTE)} (default: %(default)s)",
    )

    serve = _command(
        subparsers,
        "serve",
        "serving times and tokens/s on N chips, or the fewest chips",
        "hwlib serve --model llama-3-70b --chip H100-SXM --batch 16 --tpot-ms 50 --ttft-ms 500",
        run_serve,
        table=False,
    )
    _model_options(serve)
    serve.add_argument("--chips", type=count, metavar="N", help="tensor-parallel chips (default: the fewest needed)")
    serve.add_argument(
        "--precision", type=precision, metavar="NAME", default="bf16", help="dtypes, e.g. fp8 (default: %(default)s)"
    )
    serve.add_argument(
        "--context",
        type=count,
        metavar="N",
        default=SERVE_CONTEXT,
        help="tokens in each sequence's KV cache (default: %(default)s)",
    )
    serve.add_argument("--prompt", type=count, metavar="N", help="prompt tokens to prefill (default: --context)")
    serve.add_argument(
        "--expert-parallel", action="store_true", help="an MoE's experts whole on each chip, not split by TP"
    )
    serve.add_argument(
        "--batch",
        type=count,
        metavar="N",
        default=1,
        help="sequences decoded together; with no --chips, the least the answer must hold (default: %(default)s)",
    )
    serve.add_argument(
        "--tpot-ms", type=milliseconds, metavar="X", help="target time per output token, ms (default: none)"
    )
    serve.add_argument(
        "--ttft-ms", type=milliseconds, metavar="X", help="target time to first token, ms (default: none)"
    )

    train = _command(
        subparsers,
        "train",
        "one training step: time, MFU, memory, communication",
        "hwlib train --model llama-3-8b --cluster hgx-h100-ndr --mesh dp=16,fsdp=2,pp=2",
        run_train,
        table=False,
    )
    plan = _command(
        subparsers,
        "plan",
        "the best training meshes of a cluster",
        "hwlib plan --model llama-3-8b --cluster hgx-h100-ndr --chips 64 --top 5",
        run_plan,
        table=True,
    )
    for parser_ in (train, plan):
        _model_options(parser_, chip=False)
        parser_.add_argument(
            "--cluster", metavar="KEY", required=True, help="cluster, e.g. hgx-h100-ndr (hwlib list clusters)"
        )
        parser_.add_argument(
            "--chips",
            type=count,
            metavar="N",
            help="chips in all (default: " + ("the mesh's, or 1)" if parser_ is train else "the cluster's largest)"),
        )
        parser_.add_argument(
            "--global-batch-tokens",
            type=count,
            metavar="N",
            default=GLOBAL_BATCH_TOKENS,
            help=f"tokens per step (default: {GLOBAL_BATCH_TOKENS:,})",
        )
        parser_.add_argument(
            "--seq-len",
            type=count,
            metavar="N",
            default=hw.doc002.SEQ_LEN,
            help="tokens per sequence (default: %(default)s)",
        )
    for parser_ in (serve, train, plan):
        parser_.add_argument(
            "--efficiency",
            type=efficiency,
            metavar="NAME=X,...",
            help="the forecast's assumptions to override, hw.Efficiency's fields, e.g. matmul=0.6,hbm=0.8 "
            "(default: the sourced records and the calibrated fit)",
        )
    train.add_argument(
        "--tokens", type=count, metavar="N", help="a whole run of N tokens: its days and chip-hours (default: one step)"
    )
    train.add_argument(
        "--critical-batch-tokens",
        type=count,
        metavar="N",
        help="with --tokens as a target's E_min: the global batch (and mesh) that reaches it soonest",
    )
    train.add_argument(
        "--mesh",
        type=mesh,
        metavar="AXES",
        help=f"chips per axis of {','.join(MESH_AXES)} (default: the planner's best of --chips)",
    )
    for parser_ in (train, plan):
        parser_.add_argument(
            "--micro-batch", type=count, metavar="N", help="sequences per micro-batch (default: the planner's choice)"
        )
        parser_.add_argument(
            "--recompute", choices=hw.data.records.layer_rules.RECOMPUTE, help="(default: the planner's choice)"
        )
        parser_.add_argument(
            "--zero", type=int, choices=(0, 1, 2), help="ZeRO stage over the dp ranks (default: the planner's choice)"
        )
        parser_.add_argument(
            "--precision", choices=("bf16", "fp8"), default="bf16", help="the matmuls' dtype (default: bf16)"
        )
        parser_.add_argument(
            "--fp8-recipe",
            choices=tuple(hw.training.fp8.FP8_SCALINGS),
            help="with --precision fp8, how the tensors are scaled and what the recipe keeps and sends in fp8 "
            "(blockwise: DeepSeek-V3's; default: none priced)",
        )
        parser_.add_argument(
            "--ep-overlap",
            action="store_true",
            help="hide the expert all-to-alls behind another micro-batch's compute (Megatron-Core's EP overlap)",
        )
        parser_.add_argument(
            "--interleave", type=count, metavar="V", help="chunks per pipeline stage (default: the planner's choice)"
        )
        tuned = parser_.add_mutually_exclusive_group()
        tuned.add_argument("--lora", type=count, metavar="RANK", help="fine-tune LoRA adapters of RANK on a bf16 base")
        tuned.add_argument("--qlora", type=count, metavar="RANK", help="fine-tune LoRA adapters of RANK on an NF4 base")
        parser_.add_argument(
            "--offload",
            choices=("optimizer", "activations", "both"),
            help="keep the optimizer state, the activations or both in host memory (default: none)",
        )
        parser_.add_argument(
            "--schedule",
            choices=hw.training.schedules.SCHEDULES,
            help="pipeline schedule (default: 1f1b on GPUs, gpipe on TPUs; with --interleave, interleaved-1f1b or "
            "circular)",
        )
    shown = plan.add_mutually_exclusive_group()
    shown.add_argument(
        "--top", type=count, metavar="N", default=PLAN_TOP, help="the N fastest meshes that fit (default: %(default)s)"
    )
    shown.add_argument("--all", action="store_true", help="every mesh, each that does not fit with the reason")

    add_simulate(subparsers, _command, _model_options, option_types)
    for name in ("serve", "train", "plan", "simulate"):
        add_cost_options(subparsers.choices[name])

    listing = _command(
        subparsers, "list", "the names an option accepts", "hwlib list chips --csv", run_list, table=True
    )
    listing.add_argument("what", choices=LISTS, metavar="WHAT", help=f"one of {', '.join(LISTS)}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``hwlib`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.list:
        args.run, args.command, args.what, args.json, args.csv = run_list, "list", args.list, False, False
    elif args.command is None:
        parser.error("choose a command: memory, serve, train, plan, simulate or list")
    prog = f"hwlib {args.command}"
    try:
        if args.csv and args.command in ("serve", "train"):
            raise ValueError(f"--csv: the answer of {args.command} is one record, not a table; use --json")
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("always")
            report = args.run(args)
            shown = report.json() if args.json else report.csv() if getattr(args, "csv", False) else report.text()
        sys.stdout.write(shown)  # printed only when it succeeds: an error is one line, never half a table
        for warning in caught:
            print(f"{prog}: warning: {_one_line(warning.message)}", file=sys.stderr)
    except (ValueError, KeyError, TypeError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(f"{prog}: error: {_one_line(message)}", file=sys.stderr)
        return USAGE_ERROR
    except (RecursionError, MemoryError) as error:  # the input is too deep or too large to take
        print(f"{prog}: error: the input is too large to take ({type(error).__name__})", file=sys.stderr)
        return USAGE_ERROR
    except Exception as error:  # not the input's fault: one line naming it, not a traceback
        print(f"{prog}: internal error ({type(error).__name__}): {_one_line(error)}", file=sys.stderr)
        return INTERNAL_ERROR
    return 0 if report.fits else DOES_NOT_FIT
