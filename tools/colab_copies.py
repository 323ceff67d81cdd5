"""The copies of the book's chapters that Colab opens: their Markdown plain, as Colab renders it, not MyST.

The HTML build offers each chapter's executed notebook as a reading copy (``_sources/<page>.ipynb``), whose prose reads
as the page does (numbers and cross-references filled in) but is still MyST, for JupyterLab with jupyterlab-myst.
Colab renders CommonMark (GitHub's tables, ``$``/``$$`` math, raw HTML), so it would show the MyST as written.
``plain_notebook`` writes each Markdown cell as the page reads:

- ``(label)=`` targets, ``%`` comments, ``{index}`` directives and the ``-end`` fences of exercises and solutions are
  dropped;
- a ``{figure}`` is its image, fetched from the published site (``image_base``), and its caption after the number the
  page gives it ("**Fig. 8.3** ..."); a code cell's figure caption (MyST-NB's ``mystnb.figure`` metadata, which Colab
  ignores) becomes such a Markdown cell after it, as in the lab copies (``lab_copies.caption_cell``);
- an admonition is a quote headed by its title in bold, a dropdown one a ``<details>`` block that opens on its title;
- ``{exercise-start}`` is a bold "**Exercise 8.1**" line, ``{solution-start}`` "**Solution to Exercise 8.1**";
- a ``{glossary}`` is a list of its terms in bold, each followed by its definition;
- a labelled display equation (``$$ ... $$ (label)``, ``{math}``) keeps its LaTeX with the page's number as
  ``\\tag{8.1}``;
- a ``{math}`` role is ``$...$``, any other role its visible text, a ``{{ name }}`` substitution its value.
"""

from __future__ import annotations

import copy
import re
import sys
import textwrap
from pathlib import Path

import nbformat
from markdown_it.token import Token

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import lab_copies  # noqa: E402 (beside this file)

BOOK = ROOT / "book"
ADMONITIONS = {
    "attention": "Attention",
    "caution": "Caution",
    "danger": "Danger",
    "error": "Error",
    "hint": "Hint",
    "important": "Important",
    "note": "Note",
    "seealso": "See also",
    "tip": "Tip",
    "warning": "Warning",
}
"""Docutils' named admonitions and the title each shows."""
DROPPED = {"{index}", "{exercise-end}", "{solution-end}"}
CODE = {"{code}", "{code-block}", "{sourcecode}"}
MYST_NB_METADATA = ("mystnb", "render")
"""Code cells' metadata that only MyST-NB reads (``render``: its old name)."""
_SUBSTITUTION = re.compile(r"\{\{\s*([\w.-]+)\s*\}\}")


def plain_markdown(
    markdown: str,
    image_base: str,
    *,
    numbers: dict[str, str] | None = None,
    folder: Path = BOOK,
    substitutions: dict[str, str] | None = None,
) -> str:
    """A Markdown cell of a reading copy (MyST, its roles as ``reading_markdown`` left them) as plain Markdown that
    reads as the page does. ``image_base``: the URL of the published site's image folder; ``numbers``: what the page
    numbers, by label ("Fig. 8.3", "Exercise 8.1", an equation's "8.1"); ``folder``: the chapter's, where its image
    paths start; ``substitutions``: the values of ``{{ name }}``."""
    blocks = _plain_blocks(markdown, image_base, numbers or {}, folder)
    return _plain_inline(blocks, substitutions or {}).strip("\n")


def plain_notebook(
    notebook: nbformat.NotebookNode,
    image_base: str,
    *,
    numbers: dict[str, str] | None = None,
    folder: Path = BOOK,
    substitutions: dict[str, str] | None = None,
) -> nbformat.NotebookNode:
    """A copy of a reading copy with every Markdown cell plain (``plain_markdown``), each code cell's figure caption in
    a Markdown cell after it, and without the metadata only MyST-NB reads."""
    numbers = numbers or {}

    def plain(markdown: str) -> str:
        return plain_markdown(markdown, image_base, numbers=numbers, folder=folder, substitutions=substitutions)

    notebook = copy.deepcopy(notebook)
    cells = []
    for cell in notebook.cells:
        cells.append(cell)
        if cell.cell_type == "markdown":
            cell.source = plain(cell.source)
        figure = lab_copies.code_figure(cell) if cell.cell_type == "code" else None
        if figure is not None:
            label, caption = figure
            shown = numbers.get(label or "")
            caption_cell = nbformat.v4.new_markdown_cell(plain(f"**{shown}** {caption}" if shown else caption))
            if "id" in cell:
                caption_cell["id"] = f"{cell.id}-caption"[:64]
            cells.append(caption_cell)
        for key in MYST_NB_METADATA:
            cell.metadata.pop(key, None)
    notebook.cells = cells
    notebook.metadata.pop("source_map", None)  # MyST-NB's lines of the source, which the caption cells shift
    return notebook


def _plain_blocks(markdown: str, image_base: str, numbers: dict[str, str], folder: Path) -> str:
    """``markdown`` with its MyST blocks (targets, comments, labelled equations, directives) written in plain
    Markdown, each directive's body too; the rest as it is."""
    lines = markdown.splitlines(keepends=True)
    for token in reversed(lab_copies._parser().parse(markdown)):
        if not token.map or not (
            token.type in ("myst_target", "myst_line_comment", "math_block_label") or lab_copies._directive(token)
        ):
            continue
        if token.type == "math_block_label":
            text = _display_math(token.content, numbers.get(token.info.strip()))
        elif token.type.startswith("myst_"):
            text = ""
        else:
            text = _plain_directive(token, image_base, numbers, folder)
        start, end = token.map
        if not text and _blank(lines, start - 1) and _blank(lines, end):  # one blank line left where it was
            start, end = (start, end + 1) if end < len(lines) else (max(start - 1, 0), end)
        lines[start:end] = [_in_place(text, lines, start, end)]
    return "".join(lines)


def _blank(lines: list[str], at: int) -> bool:
    """Whether ``lines[at]`` is blank (inside a quote too) or outside the cell."""
    return not 0 <= at < len(lines) or not lines[at].strip(" \t>\n")


def _in_place(text: str, lines: list[str], start: int, end: int) -> str:
    """``text`` to stand for ``lines[start:end]``: inside the same containers (a list item's indent, a quote's ``>``),
    and apart from the blocks around it by blank lines, so that none runs into another."""
    first = lines[start]
    marker = first[: len(first) - len(first.lstrip(" \t>-*+0123456789.)"))]
    indent = re.sub(r"[^>\s]", " ", marker)
    before = "" if _blank(lines, start - 1) else indent.rstrip() + "\n"
    after = "" if _blank(lines, end) else indent.rstrip() + "\n"
    if not text:
        return before if before and after else ""
    body = "\n".join(
        (marker if i == 0 else indent) + line if line else indent.rstrip() for i, line in enumerate(text.split("\n"))
    )
    return before + body + ("\n" if lines[end - 1].endswith("\n") or after else "") + after


def _display_math(latex: str, number: str | None) -> str:
    """A display equation, with the page's number where it has one."""
    tag = f"\n\\tag{{{number}}}" if number else ""
    return f"$$\n{textwrap.dedent(latex).strip()}{tag}\n$$"


def _plain_directive(token: Token, image_base: str, numbers: dict[str, str], folder: Path) -> str:
    name = lab_copies._directive(token)
    argument = token.info[len(name) :].strip()
    options, _, body = lab_copies._directive_options(token.content)
    if name in DROPPED:
        return ""
    if name in CODE:
        fence = "`" * max([3, *(len(run) + 1 for run in re.findall(r"`{3,}", body))])
        code = body.rstrip("\n")
        return f"{fence}{argument}\n{code}\n{fence}"
    if name == "{math}":
        return _display_math(
            "\n".join(part for part in (argument, body.strip("\n")) if part), numbers.get(options.get("label", ""))
        )
    if name == "{glossary}":
        return _glossary(body)
    body = _plain_blocks(body, image_base, numbers, folder).strip("\n")
    if name in ("{figure}", "{image}"):
        image = _image(argument, options.get("alt", ""), image_base, folder)
        shown = numbers.get(options.get("name", ""))
        caption = f"**{shown}** {body}" if shown and body else body
        return f"{image}\n\n{caption}" if caption else image
    if name in ("{exercise-start}", "{exercise}"):
        title = numbers.get(options.get("label", ""), "Exercise") + (f" ({argument})" if argument else "")
        return _titled(title, body)
    if name in ("{solution-start}", "{solution}"):
        return _titled(f"Solution to {numbers[argument]}" if argument in numbers else "Solution", body)
    if name == "{admonition}" or name.strip("{}") in ADMONITIONS:
        title = argument or ADMONITIONS.get(name.strip("{}"), "")
        if "dropdown" in options.get("class", "").split():
            return f"<details>\n<summary><strong>{title}</strong></summary>\n\n{body}\n\n</details>"
        return "\n".join(f"> {line}".rstrip() for line in _titled(title, body).split("\n"))
    return _titled(argument, body)


def _titled(title: str, body: str) -> str:
    return "\n\n".join(part for part in (f"**{title}**" if title else "", body) if part)


def _image(src: str, alt: str, image_base: str, folder: Path) -> str:
    """A Markdown image of the file the page shows for ``src`` (``images/NAME.*``: the one Sphinx's HTML builder picks),
    from ``image_base``, where the HTML build copies every image (by its file name); a URL as it is."""
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:|^//", src):
        url = src
    else:
        found = lab_copies.image_file(src, folder, ROOT)
        url = image_base + (found.name if found is not None else Path(src).name)
    alt = re.sub(r"([\\\[\]])", r"\\\1", " ".join(alt.split()))
    return f"![{alt}]({url})"


def _glossary(body: str) -> str:
    """A glossary's terms (lines at the margin) and their definitions (indented lines under them) as a list."""
    entries: list[tuple[list[str], list[str]]] = []
    for line in body.splitlines():
        if line.strip() and not line[0].isspace():
            if not entries or entries[-1][1]:
                entries.append(([], []))
            entries[-1][0].append(line.strip())
        elif entries:
            entries[-1][1].append(line)
    items = []
    for terms, definition in entries:
        text = textwrap.dedent("\n".join(definition)).strip("\n")
        first, *rest = text.split("\n")
        items.append("\n".join([f"- **{', '.join(terms)}**: {first}", *(f"  {line}" if line else "" for line in rest)]))
    return "\n\n".join(items)


def _plain_inline(markdown: str, substitutions: dict[str, str]) -> str:
    """``markdown`` with every role in its prose replaced by what the page shows and every known substitution by its
    value; code as it is."""
    out = []
    for prose, block in lab_copies._prose_blocks(markdown):
        if not prose:
            out.append(block)
            continue
        for kind, raw, extra in lab_copies._inline_pieces(block):
            if kind == "role":
                out.append(_role_text(*extra.split("\0", 1)))
            else:
                out.append(_SUBSTITUTION.sub(lambda match: substitutions.get(match.group(1), match.group(0)), raw))
    return "".join(out)


def _role_text(name: str, content: str) -> str:
    """What the page shows for a role that ``reading_markdown`` left: ``{math}`` as math, an abbreviation without its
    explanation, a reference's own text (``text <target>``), else its content."""
    if name == "math":
        return f"${content}$"
    if name == "abbr":
        return re.sub(r"\s*\(.*\)\s*$", "", content, flags=re.DOTALL)
    match = re.match(r"^(.*?)\s*<([^<>]*)>\s*$", content, re.DOTALL)
    return match.group(1) if match and match.group(1) else content
