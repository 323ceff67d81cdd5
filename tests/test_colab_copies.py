"""The Colab copies of the chapters (tools/colab_copies.py): each MyST construct of a reading copy's Markdown in the
plain Markdown Colab renders, reading as the book's page does."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location("colab_copies", ROOT / "tools" / "colab_copies.py")
colab_copies = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(colab_copies)
lab_copies = colab_copies.lab_copies
BASE = "https://org.github.io/book/_images/"
NUMBERS = {"fig-ring": "Fig. 3.1", "ex-ring": "Exercise 3.1", "eq-ring": "3.2"}
KERNEL = {"display_name": "Python 3", "language": "python", "name": "python3"}
EXECUTED = ROOT / "_build" / "jupyter_execute"
MYST_LEFT = {
    "a (label)= target": re.compile(r"^[\s>]*\(.*\)=\s*$", re.M),
    "a fence opening with {": re.compile(r"^[\s>]*(`{3,}|~{3,}|:{3,})\s*\{", re.M),
    "a ::: fence": re.compile(r":::"),
    "a {role}": re.compile(r"\{[\w:+.-]+\}`"),
    "an equation's label": re.compile(r"\$\$[ \t]*\("),
    "a substitution": re.compile(r"\{\{\s*[\w.-]+\s*\}\}"),
}


def plain(markdown: str, **options) -> str:
    return colab_copies.plain_markdown(markdown, BASE, **{"numbers": NUMBERS, **options})


@pytest.fixture
def chapter_folder(tmp_path):
    """A chapter's folder whose images/ holds ring.pdf and ring.svg, of which the HTML page shows the SVG."""
    (tmp_path / "images").mkdir()
    for name in ("ring.pdf", "ring.svg"):
        (tmp_path / "images" / name).write_text("")
    return tmp_path


def test_targets_comments_and_index_entries_are_dropped_without_joining_paragraphs():
    assert plain("(sec-ring)=\n# Rings\n\nText.") == "# Rings\n\nText."
    assert plain("## Rings\n\n```{index} !ring, all-reduce; ring\n```\n\nText.") == "## Rings\n\nText."
    assert plain("Text.\n```{index} ring\n```\nMore.\n% a note to the authors\nEnd.") == "Text.\n\nMore.\n\nEnd."


def test_a_figure_is_its_image_from_the_site_and_its_numbered_caption(chapter_folder):
    figure = (
        "```{figure} images/ring.*\n:name: fig-ring\n:alt: Four chips [in a ring].\n:width: 80%\n\n"
        "A ring of $p$ chips.\n```"
    )
    assert plain(figure, folder=chapter_folder) == (
        f"![Four chips \\[in a ring\\].]({BASE}ring.svg)\n\n**Fig. 3.1** A ring of $p$ chips."
    )
    unnumbered = "```{figure} images/ring.svg\n\nA ring.\n```"
    assert plain(unnumbered, folder=chapter_folder) == f"![]({BASE}ring.svg)\n\nA ring."
    assert (
        plain("```{image} https://example.org/ring.png\n:alt: A ring.\n```")
        == "![A ring.](https://example.org/ring.png)"
    )


def test_an_admonition_is_a_quote_and_a_dropdown_one_folds():
    takeaway = ":::{admonition} Takeaway\n:class: tip\n**Rings pay.** At $p$ chips.\nAlways.\n:::"
    assert plain(takeaway) == "> **Takeaway**\n>\n> **Rings pay.** At $p$ chips.\n> Always."
    aside = ":::{admonition} In the source documents\n:class: source-aside dropdown\n\nTable 6.\n:::"
    assert plain(aside) == (
        "<details>\n<summary><strong>In the source documents</strong></summary>\n\nTable 6.\n\n</details>"
    )
    assert plain("```{note}\nMind the gap.\n```") == "> **Note**\n>\n> Mind the gap."


def test_directives_nest_at_any_depth_in_either_fence(chapter_folder):
    nested = (
        "::::{admonition} Outer\n:class: tip\nSee {term}`rings <ring>`.\n\n"
        ":::{note}\n```{index} ring\n```\nInner.\n:::\n\n"
        "```{figure} images/ring.*\n:name: fig-ring\n\nThe ring.\n```\n::::"
    )
    assert plain(nested, folder=chapter_folder) == (
        f"> **Outer**\n>\n> See rings.\n>\n> > **Note**\n> >\n> > Inner.\n>\n> ![]({BASE}ring.svg)\n>\n"
        "> **Fig. 3.1** The ring."
    )


def test_exercises_and_solutions_are_bold_lines_numbered_as_on_the_page():
    question = "```{exercise-start}\n:label: ex-ring\n```\n\n**Question 1.** How long?"
    assert plain(question) == "**Exercise 3.1**\n\n**Question 1.** How long?"
    assert plain(question, numbers={}) == "**Exercise**\n\n**Question 1.** How long?"
    assert plain("```{exercise-end}\n```\n\n```{solution-start} ex-ring\n:class: dropdown\n```") == (
        "**Solution to Exercise 3.1**"
    )
    answer = "It takes 3 ms.\n\n```{solution-end}\n```\n\n```{exercise-start}\n:label: ex-other\n```\n\nWhy?"
    assert plain(answer) == "It takes 3 ms.\n\n**Exercise**\n\nWhy?"
    assert plain("```{solution-start} ex-other\n```") == "**Solution**"


def test_a_labelled_equation_keeps_its_latex_and_the_pages_number():
    assert plain("$$\nt = \\frac{a}{b}\n$$ (eq-ring)") == "$$\nt = \\frac{a}{b}\n\\tag{3.2}\n$$"
    assert plain("$$\nt = 1\n$$ (eq-unnumbered)") == "$$\nt = 1\n$$"
    assert plain("$$\nt = 1\n$$") == "$$\nt = 1\n$$"
    assert plain("```{math}\n:label: eq-ring\nE = mc^2\n```") == "$$\nE = mc^2\n\\tag{3.2}\n$$"
    in_a_list = "- By hand:\n\n  $$\n  t = 1\n  $$ (eq-ring)\n- By hwlib."
    assert plain(in_a_list) == "- By hand:\n\n  $$\n  t = 1\n  \\tag{3.2}\n  $$\n\n- By hwlib."


def test_roles_are_their_visible_text_and_math_is_math():
    text = "A {math}`x^2`, {term}`ridge points <ridge point>`, {term}`HBM`, {abbr}`HBM (high-bandwidth memory)`."
    assert plain(text) == "A $x^2$, ridge points, HBM, HBM."
    assert plain("{ref}`sec-unknown` and `{ref}`code`` stay as code.") == "sec-unknown and `{ref}`code`` stay as code."
    assert plain("```python\nx = '{term}`not a role`'\n```") == "```python\nx = '{term}`not a role`'\n```"


def test_substitutions_code_directives_and_glossaries():
    link = {"repository": "[the repository](https://github.com/org/book)"}
    assert plain("See {{ repository }}.", substitutions=link) == "See [the repository](https://github.com/org/book)."
    assert plain("```{code-block} python\n:linenos:\nx = 1\n```") == "```python\nx = 1\n```"
    glossary = (
        "```{glossary}\nHBM\n  High-bandwidth memory,\n  stacked.\n\n  Its bandwidth is $\\beta$.\n\n"
        "GB\nGiB\n  Bytes.\n```"
    )
    assert plain(glossary) == (
        "- **HBM**: High-bandwidth memory,\n  stacked.\n\n  Its bandwidth is $\\beta$.\n\n- **GB, GiB**: Bytes."
    )


def test_a_code_cells_figure_caption_follows_it_in_a_markdown_cell():
    shown = {
        "mystnb": {"figure": {"caption": "Rings at {math}`p` chips.", "name": "fig-ring"}},
        "tags": ["remove-input"],
    }
    removed = {"mystnb": {"figure": {"caption": "Not shown.", "name": "fig-gone"}}, "tags": ["remove-output"]}
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("(sec-ring)=\n# Rings"),
            nbformat.v4.new_code_cell("plot()", metadata=shown),
            nbformat.v4.new_code_cell("plot()", metadata=removed),
        ],
        metadata={"source_map": [1, 2, 3], "kernelspec": KERNEL},
    )
    notebook.cells[1]["id"] = "plot-rings"
    copy = colab_copies.plain_notebook(notebook, BASE, numbers=NUMBERS)
    assert [cell.cell_type for cell in copy.cells] == ["markdown", "code", "markdown", "code"]
    assert copy.cells[0].source == "# Rings" and copy.cells[2].source == "**Fig. 3.1** Rings at $p$ chips."
    assert copy.cells[2].id == "plot-rings-caption"
    assert copy.cells[1].metadata == {"tags": ["remove-input"]} and copy.cells[3].metadata == {
        "tags": ["remove-output"]
    }
    assert copy.metadata == {"kernelspec": KERNEL}
    assert notebook.cells[0].source.startswith("(sec-ring)=") and "mystnb" in notebook.cells[1].metadata  # unchanged
    nbformat.validate(copy)


def _built_chapters() -> list[Path]:
    return sorted([*EXECUTED.glob("book/*.ipynb"), *EXECUTED.glob("book/appendix/*.ipynb")])


@pytest.mark.skipif(not _built_chapters(), reason="no built chapters: run jupyter-book build first")
def test_no_built_chapter_keeps_myst_syntax_in_its_colab_copy():
    """Every built chapter, its numbers and references filled in as for the reading copy, then plain: no MyST left
    in any Markdown cell, and every image names a file of the book's images folder, which the HTML build copies."""
    resolve = lab_copies.book_references(ROOT / "_build" / ".doctrees")
    found = []
    for executed in _built_chapters():
        glue = executed.with_suffix(".glue.json")
        values = {
            name: output["data"]["text/plain"]
            for name, output in (json.loads(glue.read_text()) if glue.exists() else {}).items()
            if "text/plain" in output.get("data", {})
        }
        notebook = nbformat.read(executed, as_version=4)
        for cell in notebook.cells:
            if cell.cell_type == "markdown":
                cell.source = lab_copies.reading_markdown(cell.source, values, resolve)
        folder = ROOT / executed.parent.relative_to(EXECUTED)
        copy = colab_copies.plain_notebook(notebook, BASE, folder=folder, substitutions={"repository": "it"})
        for index, cell in enumerate(copy.cells):
            if cell.cell_type != "markdown":
                continue
            found += [
                f"{executed.name} cell {index}: {what}" for what, seen in MYST_LEFT.items() if seen.search(cell.source)
            ]
            for name in re.findall(re.escape(BASE) + r"([^)\s]+)\)", cell.source):
                if not (ROOT / "book" / "images" / name).is_file():
                    found.append(f"{executed.name} cell {index}: image {name}")
    assert not found, "\n".join(found)


def test_no_chapter_source_keeps_myst_syntax_in_its_colab_copy():
    """The same check on every chapter's source, which needs no build (make test builds after its tests): a MyST
    construct a chapter starts to use and plain_markdown does not know fails here first."""
    import jupytext

    found = []
    for source in sorted([*(ROOT / "book").glob("*.md"), *(ROOT / "book" / "appendix").glob("*.md")]):
        notebook = jupytext.read(source)
        copy = colab_copies.plain_notebook(notebook, BASE, folder=source.parent, substitutions={"repository": "it"})
        for index, cell in enumerate(copy.cells):
            if cell.cell_type == "markdown":
                found += [
                    f"{source.name} cell {index}: {what}"
                    for what, seen in MYST_LEFT.items()
                    if seen.search(cell.source)
                ]
    assert not found, "\n".join(found)
