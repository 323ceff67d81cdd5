"""``hwlib list``: the names each option accepts (models, chips, clusters, precisions, recipes), as a table."""

from __future__ import annotations

import argparse

import hwlib as hw
from hwlib.cli.report import Report
from hwlib.cli.serving_commands import DTYPE_ROLES
from hwlib.units import format_bytes_per_s, format_flops_per_s


def _sold(chip: hw.Chip) -> str:
    try:
        plan = hw.deployment(chip)
    except KeyError:
        return "-"
    return f"{plan.kind}s of {', '.join(map(str, plan.sizes))}"


def run_list(args: argparse.Namespace) -> Report:
    report = Report("list", [f"the names of --{args.what.removesuffix('s')}"], {"what": args.what}, csv_table=args.what)
    if args.what == "models":
        table = report.table(
            "models", ("--model", "name", "parameters", "layers", "d_model", "heads/KV", "experts"), "llrrrrr"
        )
        for m in hw.models():
            params = m.params() if m.d_model else None
            table.add(
                (
                    m.key,
                    m.name,
                    f"{params / 1e9:,.2f}B" if params else "-",
                    m.n_layers,
                    m.d_model or "-",
                    f"{m.n_heads or '-'}/{m.n_kv_heads}",
                    m.n_experts or "-",
                ),
                {
                    "key": m.key,
                    "name": m.name,
                    "params": params,
                    "n_layers": m.n_layers,
                    "d_model": m.d_model or None,
                    "n_heads": m.n_heads or None,
                    "n_kv_heads": m.n_kv_heads,
                    "n_experts": m.n_experts or None,
                },
            )
    elif args.what == "chips":
        table = report.table("chips", ("--chip", "name", "HBM", "HBM bandwidth", "bf16 peak", "sold as"), "llrrrl")
        for c in hw.chips("vendor"):
            bf16 = c.peak("bf16") if "bf16" in c.peak_flops_per_s else None
            table.add(
                (
                    c.key,
                    c.name,
                    hw.format_bytes(c.capacity_bytes),
                    format_bytes_per_s(c.hbm_bytes_per_s),
                    format_flops_per_s(bf16) if bf16 else "-",
                    _sold(c),
                ),
                {
                    "key": c.key,
                    "name": c.name,
                    "hbm_bytes": c.capacity_bytes,
                    "hbm_bytes_per_s": c.hbm_bytes_per_s,
                    "bf16_flops_per_s": bf16,
                    "sold_as": _sold(c),
                },
            )
    elif args.what == "clusters":
        table = report.table("clusters", ("--cluster", "name", "chip"), "lll")
        for c in hw.clusters():
            table.add((c.key, c.name, c.chip.name), {"key": c.key, "name": c.name, "chip": c.chip.key})
    elif args.what == "precisions":
        roles = tuple(hw.PRECISIONS["bf16"])
        table = report.table("precisions", ("--precision", *(DTYPE_ROLES[role] for role in roles)), "lllll")
        for key, options in hw.PRECISIONS.items():
            table.add((repr(key), *options.values()), {"key": key, **options})
        report.note("(quote a name with spaces, or write it with hyphens: --precision int8-weights-and-kv)")
    else:
        table = report.table("recipes", ("--recipe", "name", "B/param", "weights + grads + master + optimizer"), "llrl")
        for r in hw.recipes():
            parts = r.breakdown()
            table.add(
                (r.key, r.label, f"{r.bytes_per_param:g}", " + ".join(f"{v:g}" for v in parts.values())),
                {
                    "key": r.key,
                    "name": r.label,
                    "bytes_per_param": r.bytes_per_param,
                    **{f"{part.replace(' ', '_')}_bytes_per_param": v for part, v in parts.items()},
                },
            )
    return report
