"""Document 002's own scalar ``layer_step``, loaded from the shared seed file at run time.

The benchmark's reference is the document's code itself, not a copy: it is read from
``../shared/seeds/002_501c62d3c87c2a8c.txt`` when the benchmark runs and never stored in
this repository. The file lost its newlines when it was saved, so the function is one long
line; this module puts a line break before each statement of the function body (the
statements start with the names the body assigns, ``if s:`` or ``return``), drops the
comments that ran to the ends of the lost lines, and compiles the result.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

SEED = Path(__file__).resolve().parents[2] / "shared" / "seeds" / "002_501c62d3c87c2a8c.txt"
_STATEMENT = re.compile(
    r" (?=(?:P|F|Z|B_W|B_act|t_mm|t_ew|t|E_arith|E_hbm_w|E_hbm_a|E_static) = "
    r"|F \+= |if s:|return dict\()"
)


def load(seed: Path = SEED) -> tuple[object, dict]:
    """(layer_step, the A100-80GB dict of GPUS) as document 002 defines them."""
    text = seed.read_text(encoding="utf-8")
    start, end = text.index("def layer_step("), text.index("def T_min(")
    header, body = text[start:end].split('"""', 2)[0::2]
    lines = [header.strip()]
    for statement in _STATEMENT.split(body):
        code = statement.split("#", 1)[0].strip()
        if code:
            lines.append(("        " if code.startswith("F +=") else "    ") + code)
    constants = {"math": math}
    for name in ("B_W_DEFAULT", "A_DEFAULT"):
        constants[name] = float(re.search(rf"{name} = ([0-9.]+)", text).group(1))
    exec(compile("\n".join(lines), str(seed), "exec"), constants)  # noqa: S102 - the document's own code
    gpu = re.search(r'"A100-80GB": dict\(([^)]*)\)', text).group(1)
    a100 = {key.strip(): float(value) for key, value in (item.split("=") for item in gpu.split(","))}
    return constants["layer_step"], a100
