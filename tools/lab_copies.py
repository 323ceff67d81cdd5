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

The copies live under ``_build/`` (which the book excludes), so the book, its glue checks and
nbval run on the untouched ``.md`` sources. A first hidden cell imports hwlib; cells the book hides
(``remove-cell``, ``hide-input`` ...) start collapsed. Edits made in a copy stay in the copy.

Usage: ``python tools/lab_copies.py [--out _build/lab] [--executed _build/jupyter_execute] [--no-execute]``;
``tools/check_lab_copies.py`` runs the copies and compares every number with the book's.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib.util
import json
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import jupytext
import nbformat

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
    source: Path, book: Path, values: dict[str, str] | None = None, resolve=None
) -> tuple[nbformat.NotebookNode, int]:
    """The lab copy of the chapter ``source`` and the number of glue roles rewritten; with the chapter's
    glued ``values`` (``text/plain`` by name), each Markdown cell carries its numbers already."""
    notebook = jupytext.read(source)
    count = 0
    for cell in notebook.cells:
        if cell.cell_type == "code":
            _hide(cell)
            continue
        if cell.cell_type != "markdown":
            continue
        roles = glue_roles(cell.source)
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
    """Write every chapter's lab copy under ``out`` (same folders as under the repository), with the book's
    images beside them. Each copy's numbers come from the last build (``executed``) where it ran this code,
    else from running the chapter once (``execute``; kept under ``out/.glued``), else from its kernel only.
    Return (copy, glue roles rewritten, where its numbers came from: "build", "run" or "") per chapter."""
    written = []
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
        notebook, count = lab_notebook(source, book, values, resolve)
        nbformat.write(notebook, target)
        written.append((target, count, origin))
    for folder in book.rglob("images"):
        if folder.is_dir() and "_build" not in folder.parts:
            shutil.copytree(folder, out / folder.relative_to(book.parent), dirs_exist_ok=True)
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
