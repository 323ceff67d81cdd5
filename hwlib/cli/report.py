"""What a ``hwlib`` command answers, printed three ways: aligned text with units, one JSON object, or CSV.

A command builds a ``Report``: heading lines, then blocks in order, each a ``Table`` whose rows carry both the
cells a person reads ('12.3 ms') and the values a script reads (``{"forecast_time_per_output_token_s": 0.0123}``).
A table without a ``key`` is a list of labelled fields: its rows' values go to the top level of the JSON
object. Values are SI numbers whose names end in their unit (``_s``, ``_bytes``, ``_per_s``), counts, strings
or booleans; an infinite or undefined number is ``null``. A time or rate is named for what it is: ``forecast_*``
(what kernels reach, with its error band) or ``bound_*`` (every chip at its peak: the ceiling). Whether the
configuration asked about fits is the ``verdict``: first in the JSON object and in every CSV row.
"""

from __future__ import annotations

import csv
import io
import json
import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field

import hwlib as hw
from hwlib.calibration_fit import ForecastBand


@dataclass
class Table:
    """Rows of cells shown to a person and values given to a script. ``header`` None: labelled fields."""

    key: str | None = None
    header: Sequence[str] | None = None
    align: str = ""
    rows: list[tuple[list[str], dict[str, object]]] = field(default_factory=list)

    def add(self, cells: Sequence[object], values: dict[str, object] | None = None) -> None:
        self.rows.append(([str(cell) for cell in cells], dict(values or {})))

    def text(self) -> str:
        """The rows as aligned plain text: column i left-aligned where ``align[i]`` is 'l' (default: the first
        column left, the others right), a rule under the header."""
        if not self.rows:
            return ""
        cells = ([list(self.header)] if self.header else []) + [row for row, _ in self.rows]
        widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
        align = self.align or "l" + "r" * (len(widths) - 1)
        lines = []
        for row in cells:
            lines.append(
                "  "
                + "  ".join(
                    cell.ljust(w) if a == "l" else cell.rjust(w) for cell, w, a in zip(row, widths, align)
                ).rstrip()
            )
            if self.header and len(lines) == 1:
                lines.append("  " + "  ".join("-" * w for w in widths))
        return "\n".join(lines)


@dataclass
class Report:
    """One command's answer: heading lines, tables and fields in order, notes; ``csv_table`` names the table
    that ``--csv`` prints (None: the answer is not a table); ``fits`` is False where the configuration asked about
    does not fit (the command then exits with status 1), and ``verdict`` says so to scripts."""

    command: str
    heading: list[str]
    inputs: dict[str, object]
    blocks: list[Table | str] = field(default_factory=list)
    csv_table: str | None = None
    fits: bool = True
    verdict: dict[str, object] = field(default_factory=dict)

    def fields(self) -> Table:
        """A new block of labelled fields (label, then what it shows)."""
        block = Table(align="ll")
        self.blocks.append(block)
        return block

    def table(self, key: str, header: Sequence[str], align: str = "") -> Table:
        block = Table(key, header, align)
        self.blocks.append(block)
        return block

    def note(self, text: str) -> None:
        self.blocks.append(text)

    def add_verdict(self, fields: Table, label: str, shown: str, reason: str = "", **values: object) -> None:
        """Whether the configuration asked about fits, ``reason`` saying why not ("" where it fits): a line of
        ``fields`` (a command puts it first where it does not fit, and prints no time for it), and ``fits``,
        ``reason`` and ``values`` at the head of the JSON object and of every CSV row."""
        self.fits = not reason
        self.verdict = {"fits": self.fits, "reason": reason, **values}
        fields.add((label, shown))

    def text(self) -> str:
        parts = ["\n".join(self.heading)]
        for block in self.blocks:
            shown = (
                block.text()
                if isinstance(block, Table)
                else textwrap.fill(block, 110, initial_indent="  ", subsequent_indent="  ")
            )
            if shown:
                parts.append(shown)
        return "\n\n".join(parts) + "\n"

    def json(self) -> str:
        answer: dict[str, object] = {"command": self.command, "inputs": self.inputs, **self.verdict}
        notes = []
        for block in self.blocks:
            if isinstance(block, str):
                notes.append(block)
            elif block.key is None:
                for _, values in block.rows:
                    answer.update(values)
            else:
                answer[block.key] = [values for _, values in block.rows]
        if notes:
            answer["notes"] = notes
        return json.dumps(plain(answer), indent=2) + "\n"

    def csv(self) -> str:
        table = next(b for b in self.blocks if isinstance(b, Table) and b.key == self.csv_table)
        rows = [{**self.verdict, **values} for _, values in table.rows] or ([self.verdict] if self.verdict else [])
        columns = list(dict.fromkeys([*self.verdict, *(key for row in rows for key in row)]))
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for values in rows:
            writer.writerow(["" if (v := plain(values.get(key))) is None else v for key in columns])
        return out.getvalue()


def add_band(fields: Table, band: ForecastBand, label: str = "error band") -> None:
    """The forecast's error band for the run's kind (``hw.forecast_band``): a line of ``fields`` named ``label``,
    and in the JSON its text and its mean and worst error as fractions (None where no run of the kind is measured)."""
    fields.add(
        (label, band.text),
        {"forecast_error_band": band.text, "forecast_mean_error": band.mean, "forecast_worst_error": band.worst},
    )


def add_simulation_bands(fields: Table, band: ForecastBand) -> None:
    """Beside a simulation's percentiles, each step's error band for the run's kind (``band``, as ``add_band``) and
    the simulation's error under load on published runs it was not fitted to (``calibrated.LOAD_ERRORS``): a line of
    ``fields`` each, and in the JSON also each quantity's mean and median relative error (fractions; negative: too
    soon)."""
    from hwlib.data.calibrated import LOAD_ERRORS

    add_band(fields, band, "step error band")

    first, token = LOAD_ERRORS["ttft"], LOAD_ERRORS["tpot"]
    text = (
        f"time to first token ±{100 * first['mean']:.0f} % (median {100 * first['median']:+.0f} %), per output token "
        f"±{100 * token['mean']:.0f} % (median {100 * token['median']:+.0f} %): the mean error on {first['runs']} "
        f"published runs under load from {first['publishers']} publishers the simulation was not fitted to"
    )
    errors = {
        f"load_{name}_{stat}_error": found[stat] for name, found in LOAD_ERRORS.items() for stat in ("mean", "median")
    }
    fields.add(("load error band", text), {"load_error_band": text, **errors})


def plain(value: object) -> object:
    """``value`` as JSON has it: numpy scalars as Python numbers, inf and NaN as None, containers recursively."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if hasattr(value, "item"):  # a numpy scalar or 0-d array
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def seconds(value: float) -> str:
    """A duration for people ('12.3 ms', '0 s'); 'none' where there is none (inf)."""
    if value == 0:
        return "0 s"
    return hw.format_seconds(value) if math.isfinite(value) else "none"


def rate(tokens_per_s: float) -> str:
    """Tokens per second for people: whole tokens from 100 up, three significant figures below, never '0'."""
    if tokens_per_s >= 100 or tokens_per_s == 0:
        return f"{tokens_per_s:,.0f} tokens/s"
    return f"{hw.format_number(tokens_per_s, 3)} tokens/s"


def percent(share: float) -> str:
    """A share as a whole percentage, with the digits it needs where that would read 0 % or 100 % and it is
    neither ('0.3 %', '99.96 %')."""
    whole = f"{100 * share:.0f}"
    if whole == "0" and share > 0:
        return f"{hw.format_number(100 * share, 2)} %"
    if whole == "100" and share < 1:
        return f"{100 * share:.{math.ceil(round(-math.log10(100 * (1 - share)), 9))}f} %"
    return f"{whole} %"
