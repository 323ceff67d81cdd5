"""Run `make lab`'s chapter copies as JupyterLab does and check every number their prose shows.

For each lab copy (tools/lab_copies.py) a fresh kernel runs the cells in order; at each Markdown cell
its ``{eval}`` expressions are evaluated in that kernel, as jupyterlab-myst does when the cell is run
(an execute request with ``user_expressions``). Each result must be the text the built book shows
for the same glue role: the value glued under that name when the chapter has run to its end (what
MyST-NB pastes), formatted by MyST-NB's rule. A number glued only below the paragraph that shows it,
or glued twice with different values, is reported: a lab reader running the cells in order would
see something else than the book.

Usage: ``python tools/check_lab_copies.py [--out _build/lab] [CHAPTER ...]`` (chapter names such as
``rooflines`` or ``appendix/glossary``; default: all). Exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from jupyter_client.manager import start_new_kernel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import lab_copies  # noqa: E402

_FINAL = "__import__('hwlib.viz.gluing', fromlist=['GLUED']).GLUED"


def _run(client, code: str, **options) -> dict:
    reply = client.execute_interactive(code, timeout=600, store_history=False, output_hook=lambda msg: None, **options)
    return reply["content"]


def check_notebook(path: Path) -> tuple[int, list[str]]:
    """(expressions checked, problems) for one lab copy, run top to bottom in a fresh kernel."""
    notebook = nbformat.read(path, as_version=4)
    manager, client = start_new_kernel(kernel_name="python3", cwd=str(path.parent))
    seen, problems = [], []
    try:
        for index, cell in enumerate(notebook.cells):
            if cell.cell_type == "code":
                content = _run(client, cell.source)
                if content["status"] != "ok":
                    problems.append(f"cell {index}: {content.get('ename')}: {content.get('evalue')}")
                    break
            elif cell.cell_type == "markdown":
                roles = lab_copies.glue_roles(cell.source)  # none left: the copy holds {eval} roles
                assert not roles, f"{path}: cell {index} still has glue roles {roles}"
                expressions = lab_copies.eval_roles(cell.source)
                if expressions:
                    content = _run(client, "", user_expressions={str(i): e for i, e in enumerate(expressions)})
                    for i, expression in enumerate(expressions):
                        result = content["user_expressions"][str(i)]
                        shown = (
                            result["data"]["text/plain"]
                            if result["status"] == "ok"
                            else f"{result['ename']}: {result['evalue']}"
                        )
                        seen.append((index, expression, shown))
        final = _run(client, "", user_expressions={"glued": f"dict({_FINAL})"})["user_expressions"]["glued"]
        glued = eval(final["data"]["text/plain"])  # a dict of str -> str, printed by the kernel  # noqa: S307
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    for index, expression, shown in seen:
        name, fmt, *_ = eval(expression.removeprefix("hw.viz.glued_text"))  # ('name', 'fmt'[, 'fallback'])  # noqa: S307
        if name not in glued:
            problems.append(f"cell {index}: {name!r} is never glued")
            continue
        book = lab_copies.format_glued_text(glued[name], fmt)
        if shown != book:
            problems.append(f"cell {index}: {expression} shows {shown!r} where the book shows {book!r}")
    return len(seen), problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "lab", help="where the lab copies are")
    parser.add_argument("chapters", nargs="*", help="chapter names (default: every copy under --out)")
    args = parser.parse_args(argv)
    paths = [args.out / "book" / f"{name}.ipynb" for name in args.chapters] or sorted(
        (args.out / "book").rglob("*.ipynb")
    )
    failed = 0
    for path in paths:
        count, problems = check_notebook(path)
        failed += bool(problems)
        print(f"{path.relative_to(args.out)}: {count} expressions, {len(problems)} differences from the book")
        for problem in problems:
            print(f"    {problem}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
