"""What an answer costs: the ``--price-per-chip-hour``, ``--pue`` and ``--grid-gco2-per-kwh`` options of ``serve``,
``simulate`` and ``train``, and the cost line each adds (``hwlib.costs``). A chip without a price in the catalogue
and none given gets no cost line; one without a TDP gets dollars only.
"""

from __future__ import annotations

import argparse

import hwlib as hw
from hwlib.data import prices


def _number_or_key(value: str) -> float | str:
    try:
        return float(value)
    except ValueError:
        return value


def add_cost_options(parser: argparse.ArgumentParser) -> None:
    """The three cost options on ``parser``."""
    parser.add_argument(
        "--price-per-chip-hour",
        type=_number_or_key,
        metavar="USD|KEY",
        help="USD per chip-hour, or a price record's key, e.g. nebius-h100 (default: the chip's on-demand list "
        f"price; keys: {', '.join(sorted(prices.PRICE_BY_KEY))})",
    )
    parser.add_argument(
        "--pue",
        type=_number_or_key,
        metavar="X|KEY",
        help=f"the facility's power usage effectiveness (default: {prices.DEFAULT_PUE}, "
        f"{prices.PUES[prices.DEFAULT_PUE].value}; keys: {', '.join(prices.PUES)})",
    )
    parser.add_argument(
        "--grid-gco2-per-kwh",
        type=_number_or_key,
        metavar="X|KEY",
        help=f"the grid's carbon intensity (default: {prices.DEFAULT_GRID}, "
        f"{prices.GRIDS[prices.DEFAULT_GRID].value:.0f} g/kWh; keys: {', '.join(prices.GRIDS)})",
    )


def _cost(args: argparse.Namespace, chip: hw.Chip, make: object) -> object | None:
    """``make(**options)``'s Cost, or None where the chip has no default price and none is given."""
    if args.price_per_chip_hour is None and chip.key not in prices.DEFAULT_PRICES:
        return None
    return make(price=args.price_per_chip_hour, pue=args.pue, grid=args.grid_gco2_per_kwh)


def _terms(cost: object) -> str:
    key = f" ({cost.price_key})" if cost.price_key else ""
    return (
        f"at ${cost.usd_per_chip_hour:,.2f} per chip-hour{key}, PUE {cost.pue:g}, {cost.grid_g_per_kwh:,.0f} gCO2/kWh"
    )


def _terms_fields(cost: object) -> dict:
    return {
        "usd_per_chip_hour": cost.usd_per_chip_hour,
        "price_key": cost.price_key or None,
        "pue": cost.pue,
        "grid_gco2_per_kwh": cost.grid_g_per_kwh,
    }


def add_token_cost(
    fields: object, args: argparse.Namespace, chip: hw.Chip, make: object, tokens: str = "output"
) -> None:
    """A line of dollars and kg CO2e per million ``tokens`` ("output" or "input") tokens, joules per token and tokens
    per kWh, forecast and bound where ``make`` gives both (``hw.costs.serving_cost``, ``cost`` or ``simulated_cost``
    with their inputs bound)."""
    cost = _cost(args, chip, make)
    if cost is None:
        return
    energy = cost.power_w is not None
    usd, bound = cost.usd_per_million_tokens, cost.bound_usd_per_million_tokens
    shown = f"${hw.format_number(usd)} per million {tokens} tokens (bound ${hw.format_number(bound)})"
    if energy:
        shown += (
            f", {hw.format_number(cost.joules_per_token)} J per {tokens} token ({cost.tokens_per_kwh:,.0f} per kWh), "
            f"{cost.co2e_kg_per_million_tokens:,.3g} kg CO2e per million"
        )
    fields.add(
        (f"cost, {tokens} tokens", f"{shown} {_terms(cost)}"),
        {
            f"usd_per_million_{tokens}_tokens": cost.usd_per_million_tokens,
            f"bound_usd_per_million_{tokens}_tokens": cost.bound_usd_per_million_tokens,
            f"joules_per_{tokens}_token": cost.joules_per_token if energy else None,
            f"bound_joules_per_{tokens}_token": cost.bound_joules_per_token if energy else None,
            f"{tokens}_tokens_per_kwh": cost.tokens_per_kwh if energy else None,
            f"co2e_kg_per_million_{tokens}_tokens": cost.co2e_kg_per_million_tokens if energy else None,
            **_terms_fields(cost),
        },
    )


def add_run_cost(fields: object, args: argparse.Namespace, chip: hw.Chip, make: object) -> None:
    """A whole run's dollars, energy and CO2e, forecast and bound (``hw.costs.training_cost`` bound to its run)."""
    cost = _cost(args, chip, make)
    if cost is None:
        return
    energy = cost.power_w is not None
    shown = f"${cost.usd:,.0f} (bound ${cost.bound_usd:,.0f})"
    if energy:
        shown += f", {cost.energy_j / 3.6e9:,.1f} MWh, {cost.co2e_kg / 1e3:,.1f} tCO2e"
    fields.add(
        ("run cost", f"{shown} {_terms(cost)}"),
        {
            "chip_hours": cost.chip_hours,
            "usd": cost.usd,
            "bound_usd": cost.bound_usd,
            "energy_j": cost.energy_j if energy else None,
            "bound_energy_j": cost.bound_energy_j if energy else None,
            "co2e_kg": cost.co2e_kg if energy else None,
            "bound_co2e_kg": cost.bound_co2e_kg if energy else None,
            **_terms_fields(cost),
        },
    )
