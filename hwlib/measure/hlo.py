"""The collectives XLA inserts into a sharded program, read from its compiled HLO text.

:func:`compiled_collectives` jit-compiles a JAX function for the shardings of its arguments (or a
``jax.shard_map``'d function), reads the compiled module's text (``jax.jit(fn).lower(*args).compile().as_text()``,
JAX documentation "Ahead-of-time lowering and compilation") and returns one row per collective:
all-gather, reduce-scatter, all-reduce, all-to-all and collective-permute. :func:`hlo_collectives` is the pure
parser underneath, usable on any HLO text. Shapes and bytes are per device (an SPMD program is the program of
one device). An asynchronous collective (``all-gather-start`` ... ``all-gather-done``) counts once, at its start;
a collective wrapped in ``async-start`` is counted where its own instruction appears, inside the wrapped
computation. Explained in the chapter :ref:`ch-sharded-matmuls`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hwlib.measure.kernels import load_jax

HLO_COLLECTIVES = ("all-gather", "reduce-scatter", "all-reduce", "all-to-all", "collective-permute")
"""The HLO opcodes counted as collectives (each also in its asynchronous ``-start`` form)."""
DTYPE_BYTES = {
    "pred": 1, "s4": 0.5, "u4": 0.5, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2,
    "s32": 4, "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16,
}  # fmt: skip
"""Bytes per element of HLO's element types; every ``f8e...`` type is 1 byte."""
COLUMNS = (
    "kind", "dtype", "operand_shape", "result_shape", "operand_bytes", "result_bytes", "n_bytes", "group_size",
    "n_groups", "name",
)  # fmt: skip
"""The columns of a collectives table, in order."""

_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?(?P<name>[\w.\-]+)\s*=\s*(?P<rest>.*)$")
_ARRAY = re.compile(r"(?P<dtype>[a-z][a-z0-9]*)\[(?P<dims>[0-9,\s]*)\](?:\{[^}]*\})?")
_OPCODE = re.compile(r"\s*(?P<opcode>[a-z][\w\-]*)\(")
_HEADER_COUNT = re.compile(r"\b(num_partitions|replica_count)=(\d+)")


def _element_bytes(dtype: str) -> float:
    if dtype.startswith("f8"):
        return 1.0
    if dtype not in DTYPE_BYTES:
        raise ValueError(f"hlo_text has an element type {dtype!r} of unknown size; known: {sorted(DTYPE_BYTES)}, f8*")
    return float(DTYPE_BYTES[dtype])


def _closing(text: str, start: int) -> int:
    """Index just past the bracket that closes the one at ``text[start]`` (round, curly or square)."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    stack = []
    for index in range(start, len(text)):
        char = text[index]
        if char in pairs:
            stack.append(pairs[char])
        elif stack and char == stack[-1]:
            stack.pop()
            if not stack:
                return index + 1
    raise ValueError(f"hlo_text has an unbalanced bracket in {text[start : start + 80]!r}")


def _shape_at(text: str) -> tuple[str, int]:
    """The shape that starts ``text`` (an array such as ``f32[8,4]{1,0}`` or a tuple of them) and its length."""
    stripped = len(text) - len(text.lstrip())
    body = text[stripped:]
    if body.startswith("("):
        end = _closing(body, 0)
        return body[:end], stripped + end
    match = _ARRAY.match(body)
    if not match:
        return "", 0
    return match.group(0), stripped + match.end()


def _arrays(shape: str) -> list[tuple[str, tuple[int, ...]]]:
    """Each array of ``shape`` (one, or the parts of a tuple): (element type, dimensions)."""
    return [
        (m.group("dtype"), tuple(int(d) for d in m.group("dims").replace(" ", "").split(",") if d))
        for m in _ARRAY.finditer(shape)
        if m.group("dtype") != "token"
    ]


def _bytes(arrays: list[tuple[str, tuple[int, ...]]]) -> float:
    total = 0.0
    for dtype, dims in arrays:
        count = 1
        for size in dims:
            count *= size
        total += count * _element_bytes(dtype)
    return total


def _plain(arrays: list[tuple[str, tuple[int, ...]]]) -> str:
    """Shapes without layouts: ``f32[8,4]``, or ``(f32[8,4], f32[8,4])`` for a tuple."""
    parts = [f"{dtype}[{','.join(str(d) for d in dims)}]" for dtype, dims in arrays]
    return parts[0] if len(parts) == 1 else f"({', '.join(parts)})"


def _top_level_split(text: str) -> list[str]:
    parts, depth, current = [], 0, []
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if "".join(current).strip():
        parts.append("".join(current))
    return parts


def _groups(attributes: str, n_devices: int | None, kind: str, name: str) -> tuple[int | None, int | None]:
    """(devices per replica group, number of groups) from an instruction's attributes, in any of XLA's forms:
    explicit ``{{0,1},{2,3}}``, iota ``[2,2]<=[4]...``, mesh axes ``mesh['a'=2,'b'=4] {'b'}``, or ``{}`` (all
    devices)."""
    if kind == "collective-permute":
        return None, None
    found = re.search(r"replica_groups=", attributes)
    if not found:
        return (n_devices, 1) if n_devices else (None, None)
    text = attributes[found.end() :]
    if text.startswith("{"):
        body = text[: _closing(text, 0)]
        groups = re.findall(r"\{([0-9,\s]*)\}", body[1:-1])
        if not groups:  # {}: one group of every device
            return (n_devices, 1) if n_devices else (None, None)
        return len([d for d in groups[0].split(",") if d.strip()]), len(groups)
    iota = re.match(r"\[(\d+),(\d+)\]<=", text)
    if iota:
        return int(iota.group(2)), int(iota.group(1))
    mesh = re.match(r"mesh\[([^\]]*)\][^{]*\{([^}]*)\}", text)
    if mesh:
        sizes = {axis: int(size) for axis, size in re.findall(r"'([^']+)'\s*=\s*(\d+)", mesh.group(1))}
        chosen = re.findall(r"'([^']+)'", mesh.group(2))
        if all(axis in sizes for axis in chosen):
            size, total = 1, 1
            for axis in chosen:
                size *= sizes[axis]
            for value in sizes.values():
                total *= value
            return size, total // size
    raise ValueError(f"hlo_text: the replica groups of {name} cannot be read: {text[:80]!r}")


def hlo_collectives(hlo_text: str) -> object:
    """One row per collective in ``hlo_text`` (XLA's HLO text of a module or a snippet of it), as a DataFrame.

    Columns (``COLUMNS``): ``kind`` (one of ``HLO_COLLECTIVES``), ``dtype`` (HLO's element type), ``operand_shape``
    and ``result_shape`` per device (tuples for variadic all-to-alls), ``operand_bytes`` and ``result_bytes`` per
    device (B), ``n_bytes``: the array ``hw.collective_time_s`` prices (B: the gathered result of an all-gather, the
    operand of the others), ``group_size`` (devices per replica group; ``<NA>`` for collective-permute, whose
    pairs are listed instead) and ``n_groups``, and ``name`` (the instruction's). Asynchronous pairs count once.
    Chapter :ref:`ch-sharded-matmuls`.
    """
    import pandas as pd

    if not isinstance(hlo_text, str):
        raise TypeError(f"hlo_text must be XLA's HLO text (a str, as compiled.as_text() returns), got {hlo_text!r}")
    counts = dict(_HEADER_COUNT.findall(hlo_text))
    n_devices = int(counts.get("num_partitions", 1)) * int(counts.get("replica_count", 1)) if counts else None
    shapes: dict[str, str] = {}
    found, instructions = [], 0
    for line in hlo_text.splitlines():
        match = _INSTRUCTION.match(line)
        if not match:
            continue
        shape, length = _shape_at(match.group("rest"))
        if not shape:
            continue
        opcode = _OPCODE.match(match.group("rest")[length:])
        if not opcode:
            continue
        instructions += 1
        shapes[match.group("name")] = shape
        kind = opcode.group("opcode").removesuffix("-start")
        if kind in HLO_COLLECTIVES:
            after = match.group("rest")[length:]
            start = after.index("(")
            end = _closing(after, start)
            found.append((match.group("name"), kind, opcode.group("opcode"), shape, after[start + 1 : end - 1],
                          after[end:]))  # fmt: skip
    if instructions == 0:
        raise ValueError(
            "hlo_text holds no HLO instruction (lines such as '%x = f32[8]{0} all-gather(%p), ...'); pass "
            f"jax.jit(fn).lower(*args).compile().as_text(), got {hlo_text[:80]!r}"
        )
    rows = []
    for name, kind, opcode, shape, operand_text, attributes in found:
        operands = []
        for piece in _top_level_split(operand_text):
            inline, _ = _shape_at(piece)
            operand = inline or shapes.get(piece.strip().lstrip("%"), "")
            if not operand:
                raise ValueError(f"hlo_text: the operand {piece.strip()!r} of {name} is defined nowhere in the text")
            operands += _arrays(operand)
        result = _arrays(shape)
        if opcode in ("all-gather-start", "collective-permute-start") and shape.startswith("("):
            result = result[len(operands) : 2 * len(operands)]  # (operands..., results..., contexts...)
        group, n_groups = _groups(attributes, n_devices, kind, name)
        operand_bytes, result_bytes = _bytes(operands), _bytes(result)
        rows.append({
            "kind": kind, "dtype": operands[0][0] if operands else result[0][0],
            "operand_shape": _plain(operands), "result_shape": _plain(result),
            "operand_bytes": operand_bytes, "result_bytes": result_bytes,
            "n_bytes": result_bytes if kind == "all-gather" else operand_bytes,
            "group_size": group, "n_groups": n_groups, "name": name,
        })  # fmt: skip
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    return table.astype({"operand_bytes": float, "result_bytes": float, "n_bytes": float,
                         "group_size": "Int64", "n_groups": "Int64"})  # fmt: skip


def compiled_collectives(fn: Callable, *args: object, **jit_options: object) -> object:
    """The collectives XLA inserts when it compiles ``fn`` for ``args`` (arrays placed with ``jax.device_put``, or
    shape-and-dtype structs, ``jax.ShapeDtypeStruct``, with shardings), as :func:`hlo_collectives` reads them from
    the compiled text.

    ``jit_options`` go to ``jax.jit`` (``in_shardings``, ``out_shardings``, ...). Compiles, does not run.
    Chapter :ref:`ch-sharded-matmuls`.
    """
    if not callable(fn):
        raise TypeError(f"fn must be a function to compile (a JAX function or a jax.shard_map of one), got {fn!r}")
    jax, _ = load_jax()
    return hlo_collectives(jax.jit(fn, **jit_options).lower(*args).compile().as_text())
