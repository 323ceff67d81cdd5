"""Write the JupyterLab copies of the book's chapters that `make lab` opens, with the prose's numbers rendered.

A chapter's prose takes its numbers from glue roles (``{glue:text}`roof_ridge:.1f```), which only
Jupyter Book fills in. Each copy (``_build/lab/book/<chapter>.ipynb``, written by jupytext from the
chapter's MyST Markdown) has every glue role rewritten into a MyST ``{eval}`` expression that
formats the same glued value the same way (``{eval}`hw.viz.glued_text('roof_ridge', '.1f', '240.5')```,
see ``hwlib.viz.gluing``). jupyterlab-myst renders the Markdown cells and evaluates those expressions
in the chapter's kernel when a cell is run. Each Markdown cell also carries the chapter's numbers
(jupyterlab-myst's ``user_expressions`` cell metadata), so they show as soon as a chapter opens:
from the book's last build where it ran this very code, else from running the chapter once
headless (kept in ``_build/lab/.glued/`` until its code or hwlib changes). The same text is each
expression's fallback (its third argument) while the kernel has not glued that name yet: a
chapter's opening paragraph may show a number computed by the cell below it.

Display equations carry the book's numbers: each is a ``{math}`` directive with the number the built book gives
it (``:enumerator: 11.2``, counted from the sources in the order Sphinx numbers them; an unlabelled one
``:enumerated: false``, as the book leaves it unnumbered), and each ``{eq}`` reference reads "Eq. 11.2" as in
the book. Figures carry the book's numbers too (numfig: per chapter, in source order, ``{figure}`` directives and code
cells' figures on one counter, only captioned ones, labelled or not): each ``{figure}`` directive gets
``:enumerator: 12.1`` (uncaptioned: ``:enumerated: false``); a code cell whose ``mystnb.figure`` metadata has a caption,
whose output the book shows as a numbered figure, is followed by a Markdown cell with the caption as the book shows it
("**Fig. 12.3** ..." after a ``(label)=`` target, its roles rewritten like any prose); each ``{numref}`` to a figure
reads "Fig. 12.3" (or the role's own ``%s``/``{number}`` text), a link where the figure is in the same chapter. An
image written ``images/NAME.*`` names the file the book's page shows (``images/NAME.svg``), and the image files the
chapters show are copied beside the copies (same relative paths).

The copies live under ``_build/`` (which the book excludes), so the book, its glue checks and
nbval run on the untouched ``.md`` sources. A first hidden cell imports hwlib; cells the book hides
(``remove-cell``, ``hide-input`` ...) start collapsed. Edits made in a copy stay in the copy.

Usage: ``python tools/lab_copies.py [--out _build/lab] [--executed _build/jupyter_execute] [--no-execute]``;
``tools/check_lab_copies.py`` runs the copies and compares every number with the book's.
"""

from __future__ import annotations

import argparse
import ast
import functools
import hashlib
import importlib.util
import json
import mimetypes
import os
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import jupytext
import nbformat
import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.amsmath import amsmath_plugin
from mdit_py_plugins.colon_fence import colon_fence_plugin
from mdit_py_plugins.deflist import deflist_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.myst_blocks import myst_block_plugin
from mdit_py_plugins.myst_role import myst_role_plugin

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from hwlib.viz.gluing import format_glued_text  # noqa: E402 (the repository's hwlib, wherever this runs from)

GLUE_ROLES = {"glue", "glue:", "glue:any", "glue:text", "glue:md"}
"""MyST-NB's inline glue roles (``{glue:text}`` formats; the others paste the value as it is)."""
_ROLE = re.compile(r"\{([A-Za-z0-9_\-+:]+)\}(`+)")
"""A MyST role's start, as markdown-it's myst_role plugin reads it: ``{name}`` and a run of backticks."""
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*(\S*)")
_CODE_DIRECTIVES = {"{code}", "{code-block}", "{sourcecode}", "{code-cell}", "{literalinclude}", "{math}"}
HIDDEN_SOURCE = {"remove-cell", "remove-input", "hide-cell", "hide-input"}
HIDDEN_OUTPUT = {"remove-cell", "remove-output", "hide-cell", "hide-output"}
SETUP_CODE = "import hwlib as hw  # for the numbers in the prose: make lab's copy runs this first"
"""The lab copy's first code cell, so that a paragraph above the chapter's own first cell can be evaluated."""
LAB_NOTE = (
    "*This is the JupyterLab copy of `{source}` that `make lab` wrote: run the cells (Run > Run All "
    "Cells) for live explorers; the numbers in the prose are computed in this kernel. Edits here stay "
    "in this copy; the book is built from `{source}`.*"
)


def _closing(text: str, ticks: str, start: int) -> int:
    """Where the run of exactly ``len(ticks)`` backticks that closes a code span or role begins, else -1."""
    at = text.find(ticks, start)
    while at != -1:
        end = at + len(ticks)
        if (at == 0 or text[at - 1] != "`") and (end == len(text) or text[end] != "`"):
            return at
        while end < len(text) and text[end] == "`":
            end += 1
        at = text.find(ticks, end)
    return -1


def _inline_pieces(text: str) -> Iterator[tuple[str, str, str]]:
    """``text`` as pieces (kind, raw, extra): ("text", raw, ""), ("role", raw, name + "\\0" + content).

    Code spans and backslash escapes stay text, as in MyST: a role inside a code span is not a role.
    """
    i, plain = 0, []
    while i < len(text):
        char = text[i]
        if char == "\\":
            plain.append(text[i : i + 2])
            i += 2
            continue
        role = _ROLE.match(text, i) if char == "{" else None
        if role:
            close = _closing(text, role.group(2), role.end())
            if close != -1:
                if plain:
                    yield "text", "".join(plain), ""
                    plain = []
                end = close + len(role.group(2))
                yield "role", text[i:end], role.group(1) + "\0" + text[role.end() : close]
                i = end
                continue
        if char == "`":
            run = len(text[i:]) - len(text[i:].lstrip("`"))
            close = _closing(text, "`" * run, i + run)
            if close != -1:
                plain.append(text[i : close + run])
                i = close + run
                continue
            plain.append("`" * run)
            i += run
            continue
        plain.append(char)
        i += 1
    if plain:
        yield "text", "".join(plain), ""


def _prose_blocks(markdown: str) -> Iterator[tuple[bool, str]]:
    """``markdown`` as (is_prose, text) blocks: fenced code and fence lines are not prose; a directive's body
    (```{note}) and its argument (the title after ```{admonition}) are. Paragraphs are separate blocks.

    Fences nest as in CommonMark: a fence closes on a bare fence of its character at least as long.
    """
    blocks: list[tuple[bool, str]] = []

    def add(prose: bool, text: str) -> None:
        if blocks and blocks[-1][0] == prose and not (prose and blocks[-1][1].endswith("\n") and not text.strip()):
            blocks[-1] = (prose, blocks[-1][1] + text)
        else:
            blocks.append((prose, text))

    open_fences: list[tuple[str, bool]] = []  # (fence, is code)
    for line in markdown.splitlines(keepends=True):
        in_code = bool(open_fences) and open_fences[-1][1]
        match = _FENCE.match(line)
        if match:
            fence, info = match.group(1), match.group(2)
            top = open_fences[-1][0] if open_fences else ""
            if open_fences and not info and fence[0] == top[0] and len(fence) >= len(top):
                open_fences.pop()
                add(False, line)
                continue
            if not in_code:
                code = not info.startswith("{") or info in _CODE_DIRECTIVES
                open_fences.append((fence, code))
                add(False, line[: match.end()])
                add(not code, line[match.end() :])
                continue
        add(not in_code, line)
    return iter(blocks)


def roles(markdown: str) -> list[tuple[str, str]]:
    """Every role (name, content) in a Markdown cell's prose, in order (not those in code)."""
    found = []
    for prose, block in _prose_blocks(markdown):
        if prose:
            for kind, _, extra in _inline_pieces(block):
                if kind == "role":
                    name, _, content = extra.partition("\0")
                    found.append((name, content))
    return found


def glue_roles(markdown: str) -> list[tuple[str, str]]:
    """Every glue role (name, content) in a Markdown cell, in order."""
    return [(name, content) for name, content in roles(markdown) if name in GLUE_ROLES]


def eval_roles(markdown: str) -> list[str]:
    """The expression of every ``{eval}`` role in a Markdown cell (a lab copy's), in order."""
    return [content for name, content in roles(markdown) if name == "eval"]


def glue_key(name: str, content: str) -> tuple[str, str]:
    """The glued name and the format a glue role asks for (MyST-NB: ``name:fmt``, the format after the
    last colon; no colon is ``s``; the untyped roles paste the value as ``str``)."""
    if name != "glue:text":
        return content, ""
    key, colon, fmt = content.rpartition(":")
    return (key, fmt) if colon else (content, "s")


def eval_expression(name: str, content: str, values: dict[str, str] | None = None) -> str:
    """The ``{eval}`` expression that renders what the glue role ``{name}`content``` renders; with the last
    build's glued ``values``, what that build showed is its fallback until the kernel has glued the name
    (a paragraph may show a number that a cell below it computes)."""
    key, fmt = glue_key(name, content)
    if "::" in key:
        raise ValueError(f"{{{name}}}`{content}` glues from another document, which a lab copy cannot evaluate")
    if values is not None and key in values:
        return f"hw.viz.glued_text({key!r}, {fmt!r}, {format_glued_text(values[key], fmt)!r})"
    return f"hw.viz.glued_text({key!r}, {fmt!r})"


def lab_markdown(markdown: str, values: dict[str, str] | None = None, resolve=None) -> str:
    """A Markdown cell with every glue role replaced by its ``{eval}`` expression, and every other role that
    ``resolve(name, content)`` gives a text for (a cross-reference, an equation's number, a citation, as the book
    shows them) by that text; nothing else changes."""
    out = []
    for prose, block in _prose_blocks(markdown):
        if not prose:
            out.append(block)
            continue
        for kind, raw, extra in _inline_pieces(block):
            name, _, content = extra.partition("\0")
            if kind == "role" and name in GLUE_ROLES:
                out.append(f"{{eval}}`{eval_expression(name, content, values)}`")
            elif kind == "role" and resolve is not None:
                text = resolve(name, content)
                out.append(raw if text is None else text)
            else:
                out.append(raw)
    return "".join(out)


def book_references(doctrees: Path):
    """What the book's last build shows for each cross-reference, equation, figure and citation
    (``book/_ext/book_html.py``'s ``_role_texts``, from the build's pickled environment in ``doctrees``), or None
    where no build has run."""
    import pickle
    import types

    pickled = doctrees / "environment.pickle"
    if not pickled.exists():
        return None
    spec = importlib.util.spec_from_file_location("book_html", ROOT / "book" / "_ext" / "book_html.py")
    book_html = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(book_html)
    with pickled.open("rb") as handle:
        env = pickle.load(handle)
    return book_html._role_texts(types.SimpleNamespace(env=env))


def reading_markdown(markdown: str, values: dict[str, str], resolve=None) -> str:
    """A Markdown cell with every glue role replaced by the text the book shows for it, from the build's glued
    ``values``, and every other role that ``resolve(name, content)`` gives a text for (a cross-reference, an
    equation's number, a citation) by that text; what neither knows stays as it is: the downloaded notebook's
    prose."""
    out = []
    for prose, block in _prose_blocks(markdown):
        if not prose:
            out.append(block)
            continue
        for kind, raw, extra in _inline_pieces(block):
            name, _, content = extra.partition("\0")
            if kind != "role":
                out.append(raw)
            elif name in GLUE_ROLES:
                key, fmt = glue_key(name, content)
                out.append(format_glued_text(values[key], fmt) if key in values else raw)
            else:
                text = resolve(name, content) if resolve is not None else None
                out.append(raw if text is None else text)
    return "".join(out)


@functools.cache
def _parser() -> MarkdownIt:
    """Markdown as the book's MyST reads its blocks (``_config.yml``'s extensions: dollarmath, amsmath, colon fences,
    definition lists; roles and directives)."""
    return (
        MarkdownIt("commonmark")
        .enable("table")
        .use(myst_role_plugin)
        .use(myst_block_plugin)
        .use(colon_fence_plugin)
        .use(dollarmath_plugin)
        .use(amsmath_plugin)
        .use(deflist_plugin)
    )


def _directive(token: Token) -> str:
    """A directive's name as written (``{figure}``), or "" for a token that is not a directive."""
    if token.type not in ("fence", "colon_fence") or not token.info.startswith("{"):
        return ""
    return token.info.split("}")[0] + "}"


def _blocks(markdown: str, offset: int = 0, fences: tuple[str, ...] = ()) -> Iterator[tuple[Token, int, tuple]]:
    """Every token MyST parses in a Markdown cell, with the cell's line its ``map`` counts from and the fences of the
    directives around it: a directive's body (not a code directive's) is parsed as MyST parses it."""
    for token in _parser().parse(markdown):
        yield token, offset, fences
        name = _directive(token)
        if name and name not in _CODE_DIRECTIVES and token.map:
            yield from _blocks(token.content, offset + token.map[0] + 1, (*fences, token.markup))


def _directive_options(body: str) -> tuple[dict[str, str], list[str], str]:
    """A directive body's options (``:name: value`` lines or a ``---`` YAML block), their lines, and the rest."""
    lines = body.splitlines(keepends=True)
    if lines and lines[0].strip() == "---" and any(line.strip() == "---" for line in lines[1:]):
        end = next(i for i, line in enumerate(lines[1:], 1) if line.strip() == "---")
        options = yaml.safe_load("".join(lines[1:end])) or {}
        return {str(k): str(v) for k, v in options.items()}, lines[: end + 1], "".join(lines[end + 1 :])
    options, count = {}, 0
    for line in lines:
        match = re.match(r"^:([\w-]+):(.*)$", line.strip())
        if not match:
            break
        options[match.group(1)] = match.group(2).strip()
        count += 1
    return options, lines[:count], "".join(lines[count:])


class Equation(NamedTuple):
    """A display equation in a Markdown cell: its lines ``[start, end)``, its label (None: the book does not number
    it), its LaTeX, how it is written ("dollar": ``$$ ... $$ (label)``, "directive": ``{math}``, "amsmath": a bare
    ``\\begin{align}``), the fences of the directives around it and a ``{math}`` directive's other option lines."""

    start: int
    end: int
    label: str | None
    latex: str
    kind: str
    fences: tuple[str, ...] = ()
    other_options: tuple[str, ...] = ()


def display_equations(markdown: str) -> list[Equation]:
    """Every display equation of a Markdown cell as MyST finds it, in order (code and code directives excluded)."""
    found = []
    for token, offset, fences in _blocks(markdown):
        if not token.map:
            continue
        start, end = offset + token.map[0], offset + token.map[1]
        if token.type in ("math_block", "math_block_label"):
            label = token.info.strip() if token.type == "math_block_label" else None
            found.append(Equation(start, end, label, token.content.strip(), "dollar", fences))
        elif token.type == "amsmath":
            found.append(Equation(start, end, None, token.content.strip(), "amsmath", fences))
        elif _directive(token) == "{math}":
            options, option_lines, rest = _directive_options(token.content)
            argument = token.info[len("{math}") :].strip()
            latex = "\n".join(part for part in (argument, rest.strip("\n")) if part)
            others = tuple(
                line.rstrip("\n")
                for line in option_lines
                if not re.match(r"^:(label|enumerated|numbered|enumerator|number):", line.strip())
            )
            if option_lines and option_lines[0].strip() == "---":  # YAML options: keep the ones it does not set
                others = tuple(
                    f":{k}: {v}"
                    for k, v in options.items()
                    if k not in ("label", "enumerated", "numbered", "enumerator", "number")
                )
            found.append(Equation(start, end, options.get("label") or None, latex, "directive", fences, others))
    return found


def _document_markdown(path: Path) -> str:
    """A document's Markdown cells, in order (a MyST Markdown notebook's, a plain page's, an .ipynb's)."""
    return "\n\n".join(cell.source for cell in jupytext.read(path).cells if cell.cell_type == "markdown")


def _book_config(root: Path) -> dict:
    config = (
        yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8")) if (root / "_config.yml").exists() else {}
    )
    return ((config or {}).get("sphinx") or {}).get("config") or {}


def section_numbers(book: Path) -> list[tuple[str, tuple[int, ...]]]:
    """Every document of the book's table of contents (``_toc.yml`` beside ``book``) in the order Sphinx walks them,
    the root first, with the number the book gives it (``()``: unnumbered). Jupyter Book numbers chapters on across
    numbered parts (``use_multitoc_numbering``); a chapter's sections are numbered within it, down to the part's
    ``numbered`` depth. Without a table of contents, the chapters unnumbered."""
    root = book.parent
    if not (root / "_toc.yml").exists():
        return [(path.relative_to(root).with_suffix("").as_posix(), ()) for path in chapters(book)]
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    documents = [(str(toc["root"]), ())]
    counter = [0]
    default = (toc.get("defaults") or {}).get("numbered", False)

    def walk(entries: list, prefix: tuple[int, ...], depth) -> None:
        count = 0
        for entry in entries or ():
            if "file" not in entry:
                continue
            number: tuple[int, ...] = ()
            if depth is True or (depth and depth >= len(prefix) + 1):
                if prefix:
                    count += 1
                    number = (*prefix, count)
                else:
                    counter[0] += 1
                    number = (counter[0],)
            documents.append((str(entry["file"]), number))
            for key in ("sections", "chapters"):
                walk(entry.get(key), number if number else (), depth if number else False)
            for part in entry.get("parts") or ():
                walk(part.get("chapters") or part.get("sections"), number, part.get("numbered", depth))

    for part in toc.get("parts") or [{"chapters": toc.get("chapters"), "numbered": default}]:
        walk(part.get("chapters"), (), part.get("numbered", default))
    return documents


def equation_numbers(book: Path) -> dict[str, str]:
    """The number the built book gives each labelled display equation (label: number, such as "11.2"), as Sphinx
    assigns them: with ``numfig`` per chapter (``11.1``, ``11.2`` ... in the order they appear, its number before the
    dot; ``numfig_secnum_depth`` levels of it), otherwise per page; unnumbered pages count on together."""
    root = book.parent
    config = _book_config(root)
    numfig = config.get("numfig", True) and config.get("math_numfig", True)
    depth = int(config.get("numfig_secnum_depth", 1))
    separator = str(config.get("math_numsep", "."))
    numbers: dict[str, str] = {}
    counters: dict[tuple[int, ...], int] = {}
    for document, secnum in section_numbers(book):
        path = next(
            (root / f"{document}{ext}" for ext in (".md", ".ipynb") if (root / f"{document}{ext}").exists()), None
        )
        if path is None:
            continue
        labels = [eq.label for eq in display_equations(_document_markdown(path)) if eq.label]
        for index, label in enumerate(labels, 1):
            if numfig:
                prefix = secnum[:depth]
                counters[prefix] = counters.get(prefix, 0) + 1
                parts = [str(n) for n in (*prefix, counters[prefix])]
                numbers.setdefault(label, separator.join([".".join(parts[:-1]), parts[-1]]) if prefix else parts[-1])
            else:
                numbers.setdefault(label, str(index))
    return numbers


def equation_references(book: Path, resolve=None):
    """``resolve`` (a role's text as the book shows it, or None) with each ``{eq}`` reference to a labelled equation
    shown as the book shows it (``math_eqref_format``: "Eq. 11.2"), from the equations' numbers in the sources, the
    same numbers the lab copy's equations carry."""
    numbers = equation_numbers(book)
    template = _book_config(book.parent).get("math_eqref_format") or "({number})"

    def text(name: str, content: str) -> str | None:
        if name == "eq":
            shown, _, target = content.partition("<")
            label = target.rstrip(">").strip() if target else content.strip()
            if label in numbers:
                return template.format(number=numbers[label])
        return resolve(name, content) if resolve is not None else None

    return text


def figure_directives(markdown: str) -> list[tuple[int, str | None, bool]]:
    """(line, label, captioned) of every ``{figure}`` directive of a Markdown cell, in order, directive bodies
    included (code excluded). Captioned: its body opens with a paragraph, the caption Sphinx numbers (a figure
    without one, or whose body opens with anything else, gets no number)."""
    found = []
    for token, offset, _ in _blocks(markdown):
        if _directive(token) == "{figure}" and token.map:
            options, _, rest = _directive_options(token.content)
            first = next((t.type for t in _parser().parse(rest)), None)
            found.append((offset + token.map[0], options.get("name") or None, first == "paragraph_open"))
    return found


def code_figure(cell) -> tuple[str | None, str] | None:
    """(label, caption) of the figure MyST-NB makes of a code cell's output (its ``mystnb.figure`` metadata), or None
    where the book shows no numbered figure: no caption, or the output removed (``remove-output``, ``remove-cell``).
    One figure a cell: MyST-NB wraps each display output in one, and the book's figure cells show one each."""
    metadata = cell.get("metadata") or {}
    settings = metadata.get("mystnb") if "mystnb" in metadata else metadata.get("render")  # "render": deprecated
    figure = (settings or {}).get("figure") if isinstance(settings, dict) else None
    tags = set(metadata.get("tags") or ())
    if not isinstance(figure, dict) or not str(figure.get("caption") or "").strip():
        return None
    if tags & {"remove-output", "remove_output", "remove-cell", "remove_cell"} or settings.get("remove_code_outputs"):
        return None
    return (str(figure["name"]) if figure.get("name") else None), str(figure["caption"]).strip("\n")


def _figures(cells) -> Iterator[tuple[int, str | None, bool]]:
    """(cell index, label, numbered) of every figure of a document's cells, in source order: its ``{figure}``
    directives and its code cells' figure outputs (``code_figure``)."""
    for index, cell in enumerate(cells):
        if cell.cell_type == "markdown":
            for _, label, captioned in figure_directives(cell.source):
                yield index, label, captioned
        elif cell.cell_type == "code" and (found := code_figure(cell)) is not None:
            yield index, found[0], True


def document_figure_numbers(book: Path) -> dict[str, list[str]]:
    """The numbers the built book gives each document's numbered figures, in source order (document: ["12.1", ...]),
    as Sphinx's numfig assigns them (``assign_figure_numbers``): one counter for ``{figure}`` directives and code
    cells' figure outputs, per chapter (``numfig_secnum_depth`` levels of its number; unnumbered pages count on
    together), counting only captioned figures, labelled or not. Without ``numfig``, none."""
    root = book.parent
    config = _book_config(root)
    if not config.get("numfig", True):
        return {}
    depth = int(config.get("numfig_secnum_depth", 1))
    numbers: dict[str, list[str]] = {}
    counters: dict[tuple[int, ...], int] = {}
    for document, secnum in section_numbers(book):
        path = next(
            (root / f"{document}{ext}" for ext in (".md", ".ipynb") if (root / f"{document}{ext}").exists()), None
        )
        if path is None or document in numbers:
            continue
        numbers[document] = []
        for _, _, numbered in _figures(jupytext.read(path).cells):
            if numbered:
                prefix = secnum[:depth]
                counters[prefix] = counters.get(prefix, 0) + 1
                numbers[document].append(".".join(str(n) for n in (*prefix, counters[prefix])))
    return numbers


def figure_numbers(book: Path) -> dict[str, str]:
    """The number the built book gives each labelled figure (label: number, such as "12.3"): ``{figure}`` directives
    with a caption and code cells whose ``mystnb.figure`` metadata has a caption, counted as
    ``document_figure_numbers`` counts them."""
    root, found = book.parent, {}
    for document, numbers in document_figure_numbers(book).items():
        path = next(root / f"{document}{ext}" for ext in (".md", ".ipynb") if (root / f"{document}{ext}").exists())
        labels = [label for _, label, numbered in _figures(jupytext.read(path).cells) if numbered]
        for label, number in zip(labels, numbers):
            if label:
                found.setdefault(label, number)
    return found


def numref_text(content: str, numbers: dict[str, str], template: str = "Fig. %s") -> str | None:
    """What Sphinx shows for ``{numref}`content``` to a figure numbered in ``numbers``: its ``numfig_format``
    (``template``, "Fig. %s") or the role's own text ("Figure %s <fig-x>", "Fig. {number} <fig-x>") with the number;
    None for another target, or a text that needs the caption (``{name}``)."""
    match = re.match(r"^(.+?)\s*(?<!\x00)<(.*?)>$", content, re.DOTALL)
    title, target = (match.group(1), match.group(2)) if match else (template, content)
    number = {label.lower(): n for label, n in numbers.items()}.get(" ".join(target.split()).lower())
    if number is None or "{name}" in title:
        return None
    try:
        return title.format(number=number) if "number" in title else title % number
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def figure_references(book: Path, resolve=None):
    """``resolve`` (a role's text as the book shows it, or None) with each ``{numref}`` to a figure shown as the book
    shows it ("Fig. 12.3", or the role's own template), from the figures' numbers in the sources, the same numbers
    the lab copy's figures carry."""
    numbers = figure_numbers(book)
    template = (_book_config(book.parent).get("numfig_format") or {}).get("figure", "Fig. %s")

    def text(name: str, content: str) -> str | None:
        if name == "numref" and (shown := numref_text(content, numbers, template)) is not None:
            return shown
        return resolve(name, content) if resolve is not None else None

    return text


def _linked_numrefs(resolve, labels: dict[str, str]):
    """``resolve`` with each ``{numref}`` to one of this chapter's figures (``labels``) a link to it: jupyterlab-myst
    resolves ``[Fig. 12.3](#fig-x)`` to the figure's directive or caption cell in the same notebook."""
    if resolve is None:
        return None

    def text(name: str, content: str) -> str | None:
        shown = resolve(name, content)
        if name != "numref" or shown is None:
            return shown
        match = re.match(r"^(.+?)\s*(?<!\x00)<(.*?)>$", content, re.DOTALL)
        label = labels.get(" ".join((match.group(2) if match else content).split()).lower())
        return f"[{shown}](#{label})" if label and "]" not in shown else shown

    return text


def lab_figures(markdown: str, numbers: list[str | None]) -> str:
    """A Markdown cell whose ``{figure}`` directives (``numbers``: each one's number in the book, None for one the
    book leaves unnumbered) carry the book's numbers for jupyterlab-myst, which numbers them 1, 2 ... otherwise:
    ``:enumerator: 12.1``, or ``:enumerated: false``; their other options stay."""
    lines = markdown.splitlines(keepends=True)
    directives = [(t, offset) for t, offset, _ in _blocks(markdown) if _directive(t) == "{figure}" and t.map]
    for (token, offset), number in reversed(list(zip(directives, numbers))):
        line = offset + token.map[0]
        _, option_lines, _ = _directive_options(token.content)
        yaml_options = bool(option_lines) and option_lines[0].strip() == "---"
        numbering = r"^\s*:?(enumerator|number|enumerated|numbered):"
        kept = [text for text in lines[line + 1 : line + 1 + len(option_lines)] if not re.match(numbering, text)]
        indent = lines[line][: len(lines[line]) - len(lines[line].lstrip(" "))]
        if yaml_options:
            value = f"enumerator: '{number}'" if number is not None else "enumerated: false"
            kept.insert(1, f"{indent}{value}\n")
        else:
            value = f":enumerator: {number}" if number is not None else ":enumerated: false"
            kept.insert(0, f"{indent}{value}\n")
        lines[line + 1 : line + 1 + len(option_lines)] = kept
    return "".join(lines)


def caption_cell(
    label: str | None, caption: str, number: str | None, template: str = "Fig. %s"
) -> nbformat.NotebookNode:
    """The Markdown cell that shows a code cell's figure caption below it, as the book does: "**Fig. 12.3**" (the
    book's ``numfig_format``) and the caption's MyST, after a ``(label)=`` target that names the caption."""
    text = f"**{template % number}** {caption}" if number is not None else caption
    source = f"({label})=\n{text}" if label else text
    return nbformat.v4.new_markdown_cell(source, metadata={"figure_caption": {"label": label, "number": number}})


def _fence(fences: tuple[str, ...]) -> str | None:
    """A fence for a directive inside directives fenced with ``fences`` that none of them closes on, else None."""
    for char in "`:":
        lengths = [len(fence) for fence in fences if fence[0] == char]
        if not lengths or min(lengths) > 3:
            return char * 3
    return None


def lab_without_index(markdown: str) -> str:
    """A Markdown cell without its ``{index}`` directives: they feed the printed book's index, which a notebook has
    no place for."""
    lines = markdown.splitlines(keepends=True)
    spans = [(offset + t.map[0], offset + t.map[1]) for t, offset, _ in _blocks(markdown) if _directive(t) == "{index}"]
    for start, end in sorted(spans, reverse=True):
        del lines[start:end]
    return "".join(lines)


def lab_equations(markdown: str, numbers: dict[str, str]) -> str:
    """A Markdown cell with every display equation written as a ``{math}`` directive that jupyterlab-myst numbers as
    the book does: a labelled one with the book's number (``:enumerator: 11.2``), an unlabelled one not at all
    (``:enumerated: false``; jupyterlab-myst numbers every display equation 1, 2, 3 ... otherwise). An equation it
    cannot rewrite (an AMS environment, one in a list item or a quote) stays as it is."""
    lines = markdown.splitlines(keepends=True)
    for eq in reversed(display_equations(markdown)):
        fence, first = _fence(eq.fences), lines[eq.start]
        indent = first[: len(first) - len(first.lstrip(" "))]
        if eq.kind == "amsmath" or fence is None or first.lstrip(" ")[:1] not in ("$", "`", ":", "~"):
            continue
        if eq.label and eq.label in numbers:
            options = [f":label: {eq.label}", f":enumerator: {numbers[eq.label]}"]
        elif eq.label:
            options = [f":label: {eq.label}"]
        else:
            options = [":enumerated: false"]
        latex = eq.latex.splitlines() or [""]
        if latex[0].lstrip().startswith((":", "---")):
            latex[0] = "{}" + latex[0]  # not an option line; {} prints nothing in LaTeX
        body = [f"{fence}{{math}}", *eq.other_options, *options, *latex, fence]
        ending = "\n" if lines[eq.end - 1].endswith("\n") else ""
        lines[eq.start : eq.end] = ["\n".join(indent + line if line else line for line in body) + ending]
    return "".join(lines)


HTML_IMAGE_TYPES = ("image/svg+xml", "image/png", "image/gif", "image/jpeg")
"""What Sphinx's HTML builder shows of an image written ``NAME.*``: the first of these there is."""


def image_file(src: str, folder: Path, root: Path) -> Path | None:
    """The file that the book's page shows for an image path ``src`` in a chapter in ``folder``: relative to the
    chapter (to the book's source folder ``root`` with a leading ``/``), ``NAME.*`` as Sphinx's HTML builder picks it;
    None for a URL or a file that is not there."""
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", src) or src.startswith("//"):
        return None
    path = (root / src.lstrip("/")) if src.startswith("/") else folder / src
    if path.name.endswith(".*"):
        found = {mimetypes.guess_type(p.name)[0]: p for p in sorted(path.parent.glob(path.name)) if p.is_file()}
        return next((found[kind] for kind in HTML_IMAGE_TYPES if kind in found), None)
    return path if path.is_file() else None


def image_references(markdown: str) -> list[tuple[int, str]]:
    """(line, path as written) of every image in a Markdown cell: ``{figure}`` and ``{image}`` directives and Markdown
    images, directive bodies included (code excluded)."""
    found = []
    for token, offset, _ in _blocks(markdown):
        if _directive(token) in ("{figure}", "{image}") and token.map:
            found.append((offset + token.map[0], token.info.split("}", 1)[1].strip()))
        elif token.type == "inline" and token.map:
            stack = list(token.children or ())
            while stack:
                child = stack.pop(0)
                if child.type == "image":
                    found.append((offset + token.map[0], str(child.attrGet("src"))))
                stack[:0] = list(child.children or ())
    return found


def lab_images(markdown: str, source: Path, root: Path) -> tuple[str, list[Path]]:
    """A Markdown cell of the chapter ``source`` with every image path the book resolves written as the file it shows
    (``images/ring_allreduce.*`` -> ``images/ring_allreduce.svg``, relative to the chapter), and those files."""
    lines, files = markdown.splitlines(keepends=True), []
    for line, src in image_references(markdown):
        found = image_file(src, source.parent, root)
        if found is None:
            continue
        files.append(found)
        relative = Path(os.path.relpath(found, source.parent)).as_posix()
        if relative == src:
            continue
        for at in range(line, len(lines)):  # the directive's line, or the first of the paragraph that has it
            text = lines[at]
            match = re.search(r"(\{(?:figure|image)\}\s+|\]\(\s*<?|\]:\s*<?)" + re.escape(src) + r"(?=[\s>)]|$)", text)
            if match:
                lines[at] = text[: match.end(1)] + relative + text[match.end() :]
                break
    return "".join(lines), files


def _code(notebook: nbformat.NotebookNode) -> list[str]:
    return [cell.source.strip() for cell in notebook.cells if cell.cell_type == "code"]


def _hwlib_files() -> list[Path]:
    return sorted(path for path in (ROOT / "hwlib").rglob("*.py") if "__pycache__" not in path.parts)


def glued_values(executed: Path, source_notebook: nbformat.NotebookNode) -> dict[str, str] | None:
    """The ``text/plain`` of every value the book's last build glued in this chapter, if that build ran
    this very code with this hwlib (``<executed>.ipynb`` and ``.glue.json`` from jupyter_execute), else None."""
    notebook, glue = executed.with_suffix(".ipynb"), executed.with_suffix(".glue.json")
    if not (notebook.exists() and glue.exists()):
        return None
    if glue.stat().st_mtime < max(path.stat().st_mtime for path in _hwlib_files()):
        return None  # built before hwlib last changed
    if _code(nbformat.read(notebook, as_version=4)) != _code(source_notebook):
        return None
    return {
        name: output["data"]["text/plain"]
        for name, output in json.loads(glue.read_text()).items()
        if "text/plain" in output.get("data", {})
    }


def run_chapter(source: Path) -> dict[str, str]:
    """Run a chapter's code cells in a fresh kernel (in its folder, as the build does) and return the
    ``text/plain`` of every value it glued; a RuntimeError names a cell that fails."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3", cwd=str(source.parent))
    try:
        for index, code in enumerate(_code(jupytext.read(source))):
            reply = client.execute_interactive(code, timeout=600, store_history=False, output_hook=lambda msg: None)
            if reply["content"]["status"] != "ok":
                raise RuntimeError(
                    f"{source.name}: code cell {index} fails: {reply['content'].get('ename')}: "
                    f"{reply['content'].get('evalue')}"
                )
        reply = client.execute_interactive(
            "",
            store_history=False,
            output_hook=lambda msg: None,
            user_expressions={
                "glued": "__import__('json').dumps(__import__('hwlib.viz.gluing', fromlist=['GLUED']).GLUED)"
            },
        )
        return json.loads(ast.literal_eval(reply["content"]["user_expressions"]["glued"]["data"]["text/plain"]))
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def computed_values(source: Path, cache: Path, log=print) -> dict[str, str]:
    """What ``run_chapter`` gives, kept in ``cache`` until the chapter's code or hwlib changes."""
    digest = hashlib.sha256()
    for part in [*_code(jupytext.read(source)), *(path.read_bytes() for path in _hwlib_files())]:
        digest.update(part.encode() if isinstance(part, str) else part)
    if cache.exists():
        kept = json.loads(cache.read_text())
        if kept.get("key") == digest.hexdigest():
            return kept["values"]
    log(f"running {source.name} once for the numbers in its prose ...")
    values = run_chapter(source)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"key": digest.hexdigest(), "values": values}))
    return values


def _hide(cell: nbformat.NotebookNode) -> None:
    tags = set(cell.metadata.get("tags", ()))
    jupyter = {}
    if tags & HIDDEN_SOURCE:
        jupyter["source_hidden"] = True
    if tags & HIDDEN_OUTPUT:
        jupyter["outputs_hidden"] = True
    if jupyter:
        cell.metadata["jupyter"] = {**cell.metadata.get("jupyter", {}), **jupyter}


def lab_notebook(
    source: Path,
    book: Path,
    values: dict[str, str] | None = None,
    resolve=None,
    equations: dict[str, str] | None = None,
    images: list[Path] | None = None,
    figures: dict[str, list[str]] | None = None,
) -> tuple[nbformat.NotebookNode, int]:
    """The lab copy of the chapter ``source`` and the number of glue roles rewritten; with the chapter's
    glued ``values`` (``text/plain`` by name), each Markdown cell carries its numbers already. Its display equations
    carry the book's numbers (``equations``, label: number; by default ``equation_numbers(book)``), its ``{figure}``
    directives too (``figures``, document: numbers; by default ``document_figure_numbers(book)``), and each code cell
    whose output the book shows as a figure is followed by a Markdown cell with its number and caption
    (``caption_cell``), whose roles are rewritten as the other cells' are; a ``{numref}`` to a figure of this chapter
    is a link to it. Its image paths name the files the book shows, which are added to ``images``."""
    notebook = jupytext.read(source)
    if equations is None:
        equations = equation_numbers(book)
    if figures is None:
        figures = document_figure_numbers(book)
    document = source.relative_to(book.parent).with_suffix("").as_posix()
    numbers = iter(figures.get(document, []))
    directive_numbers: dict[int, list[str | None]] = {}
    captions: dict[int, nbformat.NotebookNode] = {}
    template = (_book_config(book.parent).get("numfig_format") or {}).get("figure", "Fig. %s")
    for index, label, numbered in _figures(notebook.cells):
        number = next(numbers, None) if numbered else None
        if notebook.cells[index].cell_type == "markdown":
            directive_numbers.setdefault(index, []).append(number)
        else:
            captions[index] = caption_cell(label, code_figure(notebook.cells[index])[1], number, template)
    labels = {label.lower(): label for _, label, numbered in _figures(notebook.cells) if label and numbered}
    resolve = _linked_numrefs(resolve, labels)
    for index in sorted(captions, reverse=True):
        notebook.cells.insert(index + 1, captions[index])
        directive_numbers = {at + (at > index): found for at, found in directive_numbers.items()}
    count = 0
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            _hide(cell)
            continue
        if cell.cell_type != "markdown":
            continue
        roles = glue_roles(cell.source)
        cell.source = lab_equations(lab_without_index(cell.source), equations)
        cell.source = lab_figures(cell.source, directive_numbers.get(index, []))
        cell.source, files = lab_images(cell.source, source, book.parent)
        if images is not None:
            images.extend(files)
        cell.source = lab_markdown(cell.source, values, resolve)
        if not roles:
            continue
        count += len(roles)
        if values is not None:
            results, seen = [], set()
            for name, content in roles:
                expression, (key, fmt) = eval_expression(name, content, values), glue_key(name, content)
                if expression in seen or key not in values:
                    continue
                seen.add(expression)
                results.append(
                    {
                        "expression": expression,
                        "result": {
                            "status": "ok",
                            "data": {"text/plain": format_glued_text(values[key], fmt)},
                            "metadata": {},
                        },
                    }
                )
            cell.metadata["user_expressions"] = results
    relative = source.relative_to(book.parent).as_posix()
    setup = nbformat.v4.new_code_cell(SETUP_CODE, metadata={"jupyter": {"source_hidden": True}})
    notebook.cells[:0] = [nbformat.v4.new_markdown_cell(LAB_NOTE.format(source=relative)), setup]
    notebook.metadata.pop("jupytext", None)
    return notebook, count


def chapters(book: Path) -> list[Path]:
    """The book's notebooks: its MyST Markdown files whose header declares a kernel."""
    return sorted(
        path
        for path in book.rglob("*.md")
        if "_build" not in path.parts and "kernelspec:" in path.read_text(encoding="utf-8")[:2000]
    )


def write_lab_copies(
    book: Path, out: Path, executed: Path | None = None, execute: bool = True, log=print, resolve=None
) -> list[tuple[Path, int, str]]:
    """Write every chapter's lab copy under ``out`` (same folders as under the repository), with the image files its
    chapter shows beside it (same paths). Each copy's numbers come from the last build (``executed``) where it ran
    this code, else from running the chapter once (``execute``; kept under ``out/.glued``), else from its kernel only;
    its equations and ``{eq}`` references, figures and ``{numref}`` references carry the book's numbers
    (``equation_numbers``, ``document_figure_numbers``), and the other roles that ``resolve`` knows read as the book
    shows them.
    Return (copy, glue roles rewritten, where its numbers came from: "build", "run" or "") per chapter."""
    written, images = [], []
    equations, figures = equation_numbers(book), document_figure_numbers(book)
    resolve = figure_references(book, equation_references(book, resolve))
    for source in chapters(book):
        relative = source.relative_to(book.parent)
        target = (out / relative).with_suffix(".ipynb")
        target.parent.mkdir(parents=True, exist_ok=True)
        values = (
            None if executed is None else glued_values((executed / relative).with_suffix(""), jupytext.read(source))
        )
        origin = "build" if values is not None else ""
        if values is None and execute and "{glue" in source.read_text(encoding="utf-8"):
            try:
                cache = (out / ".glued" / relative).with_suffix(".json")
                values, origin = computed_values(source, cache, log), "run"
            except RuntimeError as error:
                log(f"  {error}: its numbers appear once its cells run")
        notebook, count = lab_notebook(source, book, values, resolve, equations, images, figures)
        nbformat.write(notebook, target)
        written.append((target, count, origin))
    for image in dict.fromkeys(images):
        if not image.resolve().is_relative_to(book.parent.resolve()):
            log(f"  {image} is outside {book.parent}: the lab copies cannot show it")
            continue
        copy = out / image.resolve().relative_to(book.parent.resolve())
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(image, copy)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--book", type=Path, default=ROOT / "book", help="the chapters' folder (default: book)")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "lab", help="where the copies go")
    parser.add_argument(
        "--executed",
        type=Path,
        default=ROOT / "_build" / "jupyter_execute",
        help="the last build's executed notebooks, for numbers before a cell is run",
    )
    parser.add_argument(
        "--no-execute", action="store_true", help="do not run a chapter the last build did not run as it is now"
    )
    args = parser.parse_args(argv)
    written = write_lab_copies(
        args.book.resolve(),
        args.out.resolve(),
        args.executed.resolve(),
        execute=not args.no_execute,
        resolve=book_references(ROOT / "_build" / ".doctrees"),
    )
    origins = [origin for _, _, origin in written]
    roles = sum(count for _, count, _ in written)
    print(
        f"lab copies: {len(written)} chapters, {roles} glue roles as {{eval}} expressions, in {args.out}; "
        f"numbers filled in from the last build for {origins.count('build')}, from running the chapter for "
        f"{origins.count('run')}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
