"""What chip time costs: dollars, energy and CO2e of a training run or of served tokens.

Chip time t_chip (chip-seconds) is bought by the chip-hour at a price p; under load a system draws P per chip at the
wall, hosts, fans and NICs included (by default ``calibrated.SYSTEM_POWER_PER_TDP`` times the chip's TDP, fitted on
measured systems: ``hwlib.cost_check.power_check``); the facility draws PUE times that, and its grid emits g grams of
CO2 per kWh drawn:

    dollars = p t_chip / 3600,   energy = P t_chip PUE,   CO2e = g energy / 3.6e6 (g, with energy in J).

Per token, over N tokens: p t_chip / (3600 N) dollars and P t_chip PUE / N joules. A faster step lowers all three, and
so does a larger batch while decode stays bound by HBM: the same chip-second serves more tokens. Chapter
:ref:`ch-costs`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwlib._checks import Number, describe, positive, scalar_or_array
from hwlib.data import calibrated, prices
from hwlib.data.records import Chip, require_chip

SECONDS_PER_HOUR = 3600.0
JOULES_PER_KWH = 3.6e6
GRAMS_PER_KG = 1e3


@dataclass(frozen=True)
class Cost:
    """The cost of ``chip_seconds`` of chip time (and ``bound_chip_seconds``, the bound's: never fewer are needed),
    each in dollars, joules drawn by the facility and kg of CO2e, at ``usd_per_chip_hour``, ``power_w`` per chip,
    ``pue`` and ``grid_g_per_kwh``; per token over ``tokens`` where given. Arrays where the chip time is one.
    Chapter :ref:`ch-costs`."""

    chip_seconds: Number
    bound_chip_seconds: Number
    usd_per_chip_hour: float
    power_w: float | None
    pue: float
    grid_g_per_kwh: float
    tokens: Number | None = None
    price_key: str = ""

    def _usd(self, seconds: Number) -> Number:
        return scalar_or_array(np.asarray(seconds) * self.usd_per_chip_hour / SECONDS_PER_HOUR)

    def _energy(self, seconds: Number) -> Number:
        if self.power_w is None:
            raise ValueError("this chip has no TDP in the catalogue: pass power_w= (W per chip) to price its energy")
        return scalar_or_array(np.asarray(seconds) * self.power_w * self.pue)

    @property
    def chip_hours(self) -> Number:
        return scalar_or_array(np.asarray(self.chip_seconds) / SECONDS_PER_HOUR)

    @property
    def bound_chip_hours(self) -> Number:
        return scalar_or_array(np.asarray(self.bound_chip_seconds) / SECONDS_PER_HOUR)

    @property
    def usd(self) -> Number:
        return self._usd(self.chip_seconds)

    @property
    def bound_usd(self) -> Number:
        return self._usd(self.bound_chip_seconds)

    @property
    def energy_j(self) -> Number:
        return self._energy(self.chip_seconds)

    @property
    def bound_energy_j(self) -> Number:
        return self._energy(self.bound_chip_seconds)

    @property
    def co2e_kg(self) -> Number:
        return scalar_or_array(np.asarray(self.energy_j) / JOULES_PER_KWH * self.grid_g_per_kwh / GRAMS_PER_KG)

    @property
    def bound_co2e_kg(self) -> Number:
        return scalar_or_array(np.asarray(self.bound_energy_j) / JOULES_PER_KWH * self.grid_g_per_kwh / GRAMS_PER_KG)

    def _per_token(self, value: Number) -> Number:
        if self.tokens is None:
            raise ValueError("this Cost was made without tokens: pass tokens= to price per token")
        return scalar_or_array(np.asarray(value) / np.asarray(self.tokens))

    @property
    def usd_per_million_tokens(self) -> Number:
        return self._per_token(np.asarray(self.usd) * 1e6)

    @property
    def bound_usd_per_million_tokens(self) -> Number:
        return self._per_token(np.asarray(self.bound_usd) * 1e6)

    @property
    def joules_per_token(self) -> Number:
        return self._per_token(self.energy_j)

    @property
    def bound_joules_per_token(self) -> Number:
        return self._per_token(self.bound_energy_j)

    @property
    def co2e_kg_per_million_tokens(self) -> Number:
        return self._per_token(np.asarray(self.co2e_kg) * 1e6)

    @property
    def tokens_per_kwh(self) -> Number:
        return scalar_or_array(JOULES_PER_KWH / np.asarray(self.joules_per_token))


def chip_price(chip: Chip, price: object = None) -> tuple[float, str]:
    """USD per chip-hour and the price record's key ("" for a number given): ``price`` a number, a key of
    ``hwlib.data.prices.PRICE_BY_KEY`` (its chip must be ``chip``), or None for the chip's default
    (``DEFAULT_PRICES``). Chapter :ref:`ch-costs`."""
    chip = require_chip(chip)
    if price is None:
        if chip.key not in prices.DEFAULT_PRICES:
            raise ValueError(
                f"chip {chip.label} has no price in hwlib.data.prices; pass price= a number (USD per chip-hour) or one "
                f"of {sorted(prices.PRICE_BY_KEY)}"
            )
        price = prices.DEFAULT_PRICES[chip.key]
    if isinstance(price, str):
        if price not in prices.PRICE_BY_KEY:
            raise KeyError(f"price {price!r} is not a price record; choose one of {sorted(prices.PRICE_BY_KEY)}")
        record = prices.PRICE_BY_KEY[price]
        if record.chip_key != chip.key:
            raise ValueError(f"price {price!r} is for chip {record.chip_key!r}, not {chip.key!r}")
        return record.usd_per_chip_hour, price
    return float(positive("price", price)), ""


def record_value(name: str, value: object, table: dict, default: str) -> float:
    """``value`` a positive number, or a key of ``table`` (records of ``hwlib.data.prices``), or None for
    ``default``'s record: its value. Chapter :ref:`ch-costs`."""
    if value is None:
        value = default
    if isinstance(value, str):
        if value not in table:
            raise KeyError(f"{name} {value!r} is not a record; choose one of {sorted(table)} or give a number")
        return float(table[value].value)
    return float(positive(name, value))


def cost(
    chip_seconds: Number,
    chip: Chip,
    *,
    bound_chip_seconds: Number | None = None,
    tokens: Number | None = None,
    price: object = None,
    power_w: float | None = None,
    pue: object = None,
    grid: object = None,
) -> Cost:
    """The cost of ``chip_seconds`` of ``chip`` (``bound_chip_seconds``: the bound's, default the same) over
    ``tokens``: ``price`` as ``chip_price`` takes it; ``power_w`` per chip at the wall, default the system power per
    GPU under load, ``calibrated.SYSTEM_POWER_PER_TDP`` times its TDP (a chip without a TDP prices no energy until
    it is given; ``power_w=chip.tdp_w`` counts the chip alone, as model cards do); ``pue`` and ``grid``
    (gCO2 per kWh) numbers or keys of ``hwlib.data.prices.PUES`` and ``GRIDS`` (defaults ``DEFAULT_PUE``,
    ``DEFAULT_GRID``). Chapter :ref:`ch-costs`."""
    chip = require_chip(chip)
    seconds = positive("chip_seconds", chip_seconds, allow_inf=True)
    bound = seconds if bound_chip_seconds is None else positive("bound_chip_seconds", bound_chip_seconds)
    if np.any(np.asarray(bound) > np.asarray(seconds) * (1 + 1e-9)):
        raise ValueError(f"bound_chip_seconds {describe(bound_chip_seconds)} exceeds chip_seconds; a bound is fewer")
    usd, key = chip_price(chip, price)
    if power_w is not None:
        power_w = float(positive("power_w", power_w))
    elif chip.tdp_w is not None:
        power_w = calibrated.SYSTEM_POWER_PER_TDP.value * chip.tdp_w
    return Cost(
        chip_seconds=scalar_or_array(np.asarray(seconds, dtype=float)),
        bound_chip_seconds=scalar_or_array(np.asarray(bound, dtype=float)),
        usd_per_chip_hour=usd,
        power_w=power_w,
        pue=record_value("pue", pue, prices.PUES, prices.DEFAULT_PUE),
        grid_g_per_kwh=record_value("grid", grid, prices.GRIDS, prices.DEFAULT_GRID),
        tokens=None if tokens is None else scalar_or_array(np.asarray(positive("tokens", tokens), dtype=float)),
        price_key=key,
    )


def serving_cost(
    tokens_per_s_per_chip: Number, chip: Chip, *, bound_tokens_per_s_per_chip: Number | None = None, **options: object
) -> Cost:
    """The cost of a million output tokens served at ``tokens_per_s_per_chip`` (the forecast's; the bound's, if
    given, at ``bound_tokens_per_s_per_chip``): one chip-second per ``tokens_per_s_per_chip`` tokens.
    ``options`` as ``cost`` takes them. Chapter :ref:`ch-costs`."""
    rate = positive("tokens_per_s_per_chip", tokens_per_s_per_chip)
    bound = (
        rate
        if bound_tokens_per_s_per_chip is None
        else positive("bound_tokens_per_s_per_chip", bound_tokens_per_s_per_chip)
    )
    million = 1e6
    forecast, fastest = million / np.asarray(rate, dtype=float), million / np.asarray(bound, dtype=float)
    return cost(forecast, chip, bound_chip_seconds=fastest, tokens=million, **options)


def simulated_cost(simulated: object, chip: Chip, **options: object) -> Cost:
    """The cost of a simulated load (``hw.simulate_serving``'s result) at its real utilisation: its chips for its
    whole duration, over its output tokens. ``options`` as ``cost`` takes them. Chapter :ref:`ch-costs`."""
    from hwlib.serving.served import SimulatedServing

    if not isinstance(simulated, SimulatedServing):
        raise TypeError(f"simulated must be hw.simulate_serving(...)'s result, got {describe(simulated)}")
    chip_seconds = simulated.n_chips * simulated.duration_s
    return cost(chip_seconds, chip, tokens=float(simulated.output_tokens.sum()), **options)


def training_cost(run: object, chip: Chip, *, tokens: Number | None = None, **options: object) -> Cost:
    """The cost of training on ``chip``: ``run`` a whole run (``hwlib.training.run.plan_run``'s result: its chips
    for its forecast time and the bound's, over its tokens), or one step (``hw.train_step``'s) repeated through
    ``tokens`` tokens at its forecast and bound tokens per second. ``options`` as ``cost`` takes them. Chapter
    :ref:`ch-costs`."""
    from hwlib.training.run import TrainingRun
    from hwlib.training.step import TrainStep

    if isinstance(run, TrainingRun):
        if tokens is not None:
            raise ValueError("a whole run states its own tokens; pass tokens= only with one step (hw.train_step)")
        chips, tokens = run.step.n_chips, run.tokens
        forecast, bound = run.forecast_time_s * chips, run.bound_time_s * chips
    elif isinstance(run, TrainStep):
        if tokens is None:
            raise ValueError("a step's cost needs tokens= (the run's token budget)")
        tokens = positive("tokens", tokens)
        forecast = run.n_chips * np.asarray(tokens) / np.asarray(run.forecast_tokens_per_s)
        bound = run.n_chips * np.asarray(tokens) / np.asarray(run.tokens_per_s)
    else:
        raise TypeError(f"run must be plan_run(...)'s or hw.train_step(...)'s result, got {describe(run)}")
    return cost(forecast, chip, bound_chip_seconds=bound, tokens=tokens, **options)
