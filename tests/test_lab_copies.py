"""`make lab`'s chapter copies (tools/lab_copies.py): every glue role becomes an {eval} expression that
renders the same text in JupyterLab (jupyterlab-myst) as the glue role renders in the built book."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import jupytext
import nbformat
import numpy as np
import pytest
from markdown_it import MarkdownIt
from mdit_py_plugins.amsmath import amsmath_plugin
from mdit_py_plugins.colon_fence import colon_fence_plugin
from mdit_py_plugins.deflist import deflist_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.myst_blocks import myst_block_plugin
from mdit_py_plugins.myst_role import myst_role_plugin
from myst_nb.core.variables import format_plain_text

import hwlib as hw
from hwlib.viz import gluing as glue_module

ROOT = Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location("lab_copies", ROOT / "tools" / "lab_copies.py")
lab_copies = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(lab_copies)
CHAPTERS = lab_copies.chapters(ROOT / "book")
MYST = (
    MarkdownIt("commonmark")
    .enable("table")
    .use(myst_role_plugin)
    .use(myst_block_plugin)
    .use(colon_fence_plugin)
    .use(dollarmath_plugin)
    .use(amsmath_plugin)
    .use(deflist_plugin)
)
"""The Markdown parser with the book's MyST extensions (_config.yml), to find roles as MyST does."""


def myst_roles(markdown: str) -> list[tuple[str, str]]:
    """(role name, content) of every role MyST sees, directive bodies included (code blocks excluded)."""
    roles = []
    for token in MYST.parse(markdown):
        if token.type == "inline":
            roles += [(child.meta["name"], child.content) for child in token.children if child.type == "myst_role"]
        elif token.type in ("fence", "colon_fence") and token.info.startswith("{"):
            name = token.info.split("}")[0] + "}"
            if name not in lab_copies._CODE_DIRECTIVES:
                body = "\n".join(line for line in token.content.splitlines() if not line.startswith(":"))
                roles += myst_roles(body)
    return roles


def markdown_cells(path: Path) -> list[str]:
    return [cell.source for cell in jupytext.read(path).cells if cell.cell_type == "markdown"]


def test_every_chapter_is_copied():
    names = {path.relative_to(ROOT / "book").as_posix() for path in CHAPTERS}
    assert {"intro.md", "rooflines.md", "hbm_budgets.md"} <= names
    assert all(
        "import hwlib as hw" in path.read_text(encoding="utf-8")
        for path in CHAPTERS
        if "{glue" in path.read_text(encoding="utf-8")
    )  # the expressions call hw.viz.glued_text


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.relative_to(ROOT / "book").as_posix())
def test_every_glue_role_becomes_the_expression_for_the_same_value_and_format(path):
    for source in markdown_cells(path):
        roles = [(name, content) for name, content in myst_roles(source) if name.startswith("glue")]
        assert lab_copies.glue_roles(source) == roles  # found exactly where MyST finds them
        copied = lab_copies.lab_markdown(source)
        after = myst_roles(copied)
        assert [role for role in after if role[0].startswith("glue")] == []
        expressions = [content for name, content in after if name == "eval"]
        assert expressions == [lab_copies.eval_expression(name, content) for name, content in roles]
        for (name, content), expression in zip(roles, expressions):
            key, fmt = lab_copies.glue_key(name, content)
            assert expression == f"hw.viz.glued_text({key!r}, {fmt!r})"
        others = [role for role in myst_roles(source) if not role[0].startswith("glue")]
        assert [role for role in after if role[0] != "eval"] == others  # every other role untouched


def test_glue_keys_follow_myst_nb():
    assert lab_copies.glue_key("glue:text", "roof_ridge:.1f") == ("roof_ridge", ".1f")
    assert lab_copies.glue_key("glue:text", "roof_chip") == ("roof_chip", "s")
    assert lab_copies.glue_key("glue:text", "roof_n:") == ("roof_n", "")
    assert lab_copies.glue_key("glue:text", "bs_fixed_hgx-a100-hdr:,.0f") == ("bs_fixed_hgx-a100-hdr", ",.0f")
    assert lab_copies.glue_key("glue", "roof_n") == ("roof_n", "")
    with pytest.raises(ValueError, match="another document"):
        lab_copies.eval_expression("glue:text", "rooflines::roof_n:.0f")


def test_code_spans_fences_and_escapes_are_left_alone():
    source = (
        "Ridge {glue:text}`roof_ridge:.1f` FLOP/B; write `` {glue:text}`name:.1f` `` in prose.\n"
        "\\{glue:text}`escaped`\n\n```md\n{glue:text}`in_code:.1f`\n```\n\n"
        ":::{admonition} Box\nInside {glue:text}`boxed:,.0f`.\n:::\n\n```{note}\nNoted {glue}`noted`.\n```\n"
    )
    copied = lab_copies.lab_markdown(source)
    assert "{eval}`hw.viz.glued_text('roof_ridge', '.1f')`" in copied
    assert "`` {glue:text}`name:.1f` ``" in copied and "\\{glue:text}`escaped`" in copied
    assert "```md\n{glue:text}`in_code:.1f`\n```" in copied
    assert "{eval}`hw.viz.glued_text('boxed', ',.0f')`" in copied and "{eval}`hw.viz.glued_text('noted', '')`" in copied
    assert lab_copies.glue_roles(source) == [r for r in myst_roles(source) if r[0].startswith("glue")]


FORMATS = sorted(
    {
        lab_copies.glue_key(name, content)[1]
        for path in CHAPTERS
        for source in markdown_cells(path)
        for name, content in lab_copies.glue_roles(source)
    }
    | {"s", "", ".0f", ",.2f", ".1%", "d", ".3g"}
)
VALUES = [
    0,
    7,
    -3,
    1024,
    8_030_261_248,
    0.25,
    240.53724053724054,
    1e-7,
    2.75e14,
    -0.5,
    1.0,
    np.float64(819e9),
    np.int64(4096),
    "TPU v5e",
    "Llama 3 8B",
    "it's",
    "µs",
    "12.5",
]


@pytest.mark.parametrize("fmt", FORMATS)
def test_glued_text_renders_what_glue_text_renders(monkeypatch, fmt):
    """hw.viz.glued_text(name, fmt) in a kernel == MyST-NB's {glue:text}`name:fmt` in the book, for every
    format the chapters use and values of every kind that glue takes."""
    import IPython.display

    monkeypatch.setattr(IPython.display, "display", lambda *args, **kwargs: None)
    for index, value in enumerate(VALUES):
        name = f"value_{index}"
        hw.viz.glue(**{name: value})
        text_plain = glue_module.GLUED[name]
        try:
            expected = format_plain_text(text_plain, fmt)
        except (TypeError, ValueError):  # a format that does not apply to this value fails in the book too
            with pytest.raises((TypeError, ValueError)):
                hw.viz.glued_text(name, fmt)
            continue
        got = hw.viz.glued_text(name, fmt)
        assert got == expected and repr(got) == expected  # shown bare by jupyterlab-myst, no quotes


def test_glued_text_says_what_to_run_when_nothing_is_glued_yet():
    with pytest.raises(KeyError, match="computed further down; run the chapter's cells"):
        hw.viz.glued_text("never_glued_name", ".1f")


def test_a_lab_copy_hides_what_the_book_hides_and_fills_in_the_last_build(tmp_path):
    book = tmp_path / "book"
    (book / "images").mkdir(parents=True)
    for name in ("logo.svg", "logo.pdf", "unused.svg"):
        (book / "images" / name).write_text("<svg/>")
    chapter = book / "tiny.md"
    header = (ROOT / "book" / "intro.md").read_text(encoding="utf-8").split("\n---\n")[0] + "\n---\n"
    chapter.write_text(
        header + "\n# Tiny\n\n![The logo](images/logo.*)\n\n```{code-cell} ipython3\n:tags: [remove-cell]\n"
        "import hwlib as hw\nhw.viz.glue(tiny_ridge=240.53724053724054, tiny_chip='TPU v5e')\n```\n\n"
        "The {glue:text}`tiny_chip` ridge is {glue:text}`tiny_ridge:.1f` FLOP/B.\n"
    )
    executed = tmp_path / "executed"
    (executed / "book").mkdir(parents=True)
    built = jupytext.read(chapter)
    nbformat.write(built, executed / "book" / "tiny.ipynb")
    glue = {
        name: {"output_type": "display_data", "data": {"text/plain": text}}
        for name, text in (("tiny_ridge", "240.53724053724054"), ("tiny_chip", "'TPU v5e'"))
    }
    (executed / "book" / "tiny.glue.json").write_text(json.dumps(glue))
    out = tmp_path / "lab"
    [(copy, count, origin)] = lab_copies.write_lab_copies(book, out, executed, execute=False)
    assert copy == out / "book" / "tiny.ipynb" and count == 2 and origin == "build"
    # the image the page shows (NAME.* is its SVG) beside the copy, and nothing the chapter does not show
    assert sorted(path.name for path in (out / "book" / "images").iterdir()) == ["logo.svg"]
    notebook = nbformat.read(copy, as_version=4)
    assert "![The logo](images/logo.svg)" in notebook.cells[2].source
    assert "make lab" in notebook.cells[0].source and "book/tiny.md" in notebook.cells[0].source
    setup, code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert setup.source.startswith("import hwlib as hw") and notebook.cells.index(setup) == 1
    assert code.metadata["jupyter"] == {"source_hidden": True, "outputs_hidden": True}
    prose = notebook.cells[-1]
    # the last build's text is the fallback until the kernel has glued the name (a number shown above its cell)
    assert "{glue" not in prose.source and "{eval}`hw.viz.glued_text('tiny_ridge', '.1f', '240.5')`" in prose.source
    results = {item["expression"]: item["result"]["data"]["text/plain"] for item in prose.metadata["user_expressions"]}
    assert results == {
        "hw.viz.glued_text('tiny_chip', 's', 'TPU v5e')": "TPU v5e",
        "hw.viz.glued_text('tiny_ridge', '.1f', '240.5')": "240.5",
    }
    assert hw.viz.glued_text("tiny_never_glued", ".1f", "240.5") == "240.5"
    # code that changed since the last build: no numbers filled in from it (they come when the cells run)
    chapter.write_text(chapter.read_text().replace("240.53724053724054", "197.0"))
    [(copy, count, origin)] = lab_copies.write_lab_copies(book, out, executed, execute=False)
    assert count == 2 and origin == ""
    prose = nbformat.read(copy, as_version=4).cells[-1]
    assert "user_expressions" not in prose.metadata and "{eval}`hw.viz.glued_text('tiny_ridge', '.1f')`" in prose.source
    assert "{glue" in chapter.read_text()  # the source is never touched


def test_a_chapter_the_build_did_not_run_is_run_once_for_its_numbers(tmp_path):
    """No build at all (a fresh clone's `make lab`): the chapter runs once in a kernel, and again only when its
    code changes; a number shown above the cell that computes it then shows the same text as the book."""
    book = tmp_path / "book"
    book.mkdir()
    header = (ROOT / "book" / "intro.md").read_text(encoding="utf-8").split("\n---\n")[0] + "\n---\n"
    chapter = book / "ahead.md"
    chapter.write_text(
        header + "\n# Ahead\n\nThe ridge is {glue:text}`ahead_ridge:.1f` FLOP/B.\n\n"
        "```{code-cell} ipython3\nimport hwlib as hw\n"
        "hw.viz.glue(ahead_ridge=hw.ridge_point(hw.chip('TPU v5e')))\n```\n"
    )
    logs = []
    [(copy, count, origin)] = lab_copies.write_lab_copies(book, tmp_path / "lab", None, log=logs.append)
    assert origin == "run" and count == 1 and len(logs) == 1
    expected = f"{hw.ridge_point(hw.chip('TPU v5e')):.1f}"
    prose = nbformat.read(copy, as_version=4).cells[2]
    assert f"{{eval}}`hw.viz.glued_text('ahead_ridge', '.1f', '{expected}')`" in prose.source
    assert prose.metadata["user_expressions"][0]["result"]["data"]["text/plain"] == expected
    lab_copies.write_lab_copies(book, tmp_path / "lab", None, log=logs.append)
    assert len(logs) == 1  # kept: not run again


def test_a_format_that_cannot_format_the_value_names_itself():
    from hwlib.viz.gluing import format_glued_text

    with pytest.raises(ValueError, match=r"fmt '\.2f' cannot format the glued value \"'abc'\""):
        format_glued_text("'abc'", ".2f")
    with pytest.raises(ValueError, match="fmt 'q'"):
        format_glued_text("3.5", "q")


def test_the_downloaded_notebook_reads_as_the_page_does():
    """The download's prose: every glue role is the text the book shows, as MyST-NB formats it; code and roles the
    build did not glue stay as they are."""
    values = {"roof_ridge": "240.4567", "chip": "'H100'"}
    markdown = (
        "The ridge is {glue:text}`roof_ridge:.1f` FLOP/B on {glue:text}`chip`, {glue:text}`other:.0f`.\n\n"
        "```python\nx = '{glue:text}`roof_ridge:.1f`'\n```\n"
    )
    read = lab_copies.reading_markdown(markdown, values)
    assert read.startswith("The ridge is 240.5 FLOP/B on H100, {glue:text}`other:.0f`.")
    assert "x = '{glue:text}`roof_ridge:.1f`'" in read  # code is not prose
    assert format_plain_text(240.4567, ".1f") == "240.5"


def test_a_lab_copy_names_references_as_the_book_does():
    """Beside the glue roles, the roles a resolver knows (the build's references) become the book's text."""
    resolve = {("ref", "ch-serving"): "Serving a model", ("eq", "eq-x"): "Eq. 2.1"}.get
    markdown = "See {ref}`ch-serving` and {eq}`eq-x`; {term}`HBM` stays; {glue:text}`n:.0f`."
    lab = lab_copies.lab_markdown(markdown, {"n": "3"}, lambda name, content: resolve((name, content)))
    assert lab.startswith("See Serving a model and Eq. 2.1; {term}`HBM` stays; {eval}`hw.viz.glued_text('n'")
    assert lab_copies.book_references(ROOT / "no-build-here") is None


def myst_blocks(markdown: str):
    """Every token MyST parses in a Markdown cell, directive bodies included (code directives and {math} excluded)."""
    for token in MYST.parse(markdown):
        yield token
        if token.type in ("fence", "colon_fence") and token.info.startswith("{"):
            if token.info.split("}")[0] + "}" not in lab_copies._CODE_DIRECTIVES:
                yield from myst_blocks(token.content)


def myst_images(markdown: str) -> list[str]:
    """The path of every image MyST shows in a Markdown cell: {figure} and {image} directives, Markdown images."""
    found = []
    for token in myst_blocks(markdown):
        if token.type in ("fence", "colon_fence") and token.info.startswith(("{figure}", "{image}")):
            found.append(token.info.split("}", 1)[1].strip())
        elif token.type == "inline":
            found += [child.attrGet("src") for child in token.children if child.type == "image"]
    return found


def myst_equations(markdown: str) -> list[tuple[str, dict[str, str]]]:
    """Every display equation MyST sees in a Markdown cell: ("$$", {"label": ...}) for dollar math, ("{math}",
    its options) for a math directive."""
    found = []
    for token in myst_blocks(markdown):
        if token.type == "math_block_label":
            found.append(("$$", {"label": token.info.strip()}))
        elif token.type in ("math_block", "amsmath"):
            found.append(("$$", {}))
        elif token.type in ("fence", "colon_fence") and token.info.startswith("{math}"):
            options = {}
            for line in token.content.splitlines():
                if not line.startswith(":"):
                    break
                name, _, value = line[1:].partition(":")
                options[name] = value.strip()
            found.append(("{math}", options))
    return found


BOOK_CHAPTERS = [path for path in CHAPTERS if "appendix" not in path.parts]


@pytest.fixture(scope="module")
def lab_book(tmp_path_factory):
    """The book's lab copies as `make lab` writes them (numbers from the kernel only: no build, nothing run)."""
    out = tmp_path_factory.mktemp("lab")
    lab_copies.write_lab_copies(ROOT / "book", out, None, execute=False, log=lambda message: None)
    return out


def copy_of(out: Path, source: Path) -> Path:
    return (out / source.relative_to(ROOT)).with_suffix(".ipynb")


def book_equation_numbers() -> dict[str, str]:
    """Each labelled equation's number as the built book shows it, counted here from the sources as Sphinx does
    (numfig): the chapter's number, continuing across the numbered parts of _toc.yml, a dot, and the equation's place
    among the chapter's labelled display equations; unlabelled ones get none."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    numbered = [chapter["file"] for part in toc["parts"] if part.get("numbered") for chapter in part["chapters"]]
    numbers = {}
    for chapter_number, name in enumerate(numbered, 1):
        labels = [
            options["label"]
            for source in markdown_cells(ROOT / f"{name}.md")
            for _, options in myst_equations(source)
            if options.get("label")
        ]
        numbers.update({label: f"{chapter_number}.{index}" for index, label in enumerate(labels, 1)})
    return numbers


def test_the_book_numbers_its_equations_by_chapter():
    numbers = book_equation_numbers()
    assert lab_copies.equation_numbers(ROOT / "book") == numbers
    assert len(numbers) >= 60 and numbers["eq-intensity"] == "1.1" and numbers["eq-roofline"] == "1.2"
    assert numbers["eq-bs-fixed"] == "14.1" and numbers["eq-bs-hier"] == "14.7"  # the chapter's first and last


@pytest.mark.parametrize("path", BOOK_CHAPTERS, ids=lambda p: p.relative_to(ROOT / "book").as_posix())
def test_each_equation_in_a_lab_copy_carries_the_books_number(lab_book, path):
    """jupyterlab-myst numbers every display equation 1, 2, 3 ... unless told otherwise: in the copy each labelled
    one carries the book's number (11.2), each unlabelled one none, and each {eq} reads as the book's "Eq. 11.2"."""
    numbers = book_equation_numbers()
    copy = nbformat.read(copy_of(lab_book, path), as_version=4)
    sources = jupytext.read(path).cells
    cells = [cell for cell in copy.cells[2:] if "figure_caption" not in cell.metadata]  # figure captions added
    assert len(cells) == len(sources) and len(copy.cells) == len(sources) + 2 + len(copy.cells[2:]) - len(cells)
    for source, cell in zip(sources, cells):
        if source.cell_type != "markdown":
            continue
        before, after = myst_equations(source.source), myst_equations(cell.source)
        assert [kind for kind, _ in after] == ["{math}"] * len(before)  # no $$ left for jupyterlab-myst to number
        for (_, options), (_, copied) in zip(before, after):
            if options.get("label"):
                label = options["label"]
                assert copied == {"label": label, "enumerator": numbers[label]}
            else:
                assert copied == {"enumerated": "false"}
        references = [content for name, content in myst_roles(source.source) if name == "eq"]
        assert [name for name, _ in myst_roles(cell.source) if name == "eq"] == []
        for label in references:
            assert f"Eq. {numbers[label]}" in cell.source
        assert cell.source.count("Eq. ") >= len(references) + source.source.count("Eq. ")


def built_book() -> Path:
    """The last HTML build (``BOOK_HTML``, else _build/html) to compare with; the test is skipped where there is none,
    or where a chapter changed since it was built (its numbers may have moved: ``make book`` rebuilds it)."""
    import os

    html = Path(os.environ.get("BOOK_HTML", ROOT / "_build" / "html"))
    if not html.is_dir():
        pytest.skip("no HTML build (make book) to compare with")
    built = min((page.stat().st_mtime for page in html.glob("book/*.html")), default=0.0)
    if any(path.stat().st_mtime > built for path in (ROOT / "book").rglob("*.md")):
        pytest.skip("the HTML build is older than a chapter: make book rebuilds it")
    return html


def test_the_lab_copies_number_as_the_built_book_does():
    """Against the last HTML build (``BOOK_HTML``, else _build/html), where there is one: each equation's number,
    (11.2), as its page shows it."""
    import re

    html = built_book()
    shown = {}
    for page in html.rglob("*.html"):
        for match in re.finditer(
            r'id="equation-([^"]+)">\s*<span class="eqno">\(([^)]*)\)', page.read_text(encoding="utf-8")
        ):
            shown[match.group(1)] = match.group(2)
    numbers = lab_copies.equation_numbers(ROOT / "book")
    assert {re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-"): n for label, n in numbers.items()} == shown


def test_unnumbered_pages_and_sections_number_as_sphinx_does(tmp_path):
    """The numbering rules beyond this book's table of contents: a chapter's sections count on its equations, and
    pages outside the numbered parts count one sequence (1, 2 ...) in the order of the table of contents."""
    header = (ROOT / "book" / "intro.md").read_text(encoding="utf-8").split("\n---\n")[0] + "\n---\n"
    book = tmp_path / "book"
    book.mkdir()
    for name, labels in (("front", ["f1"]), ("one", ["a", "b"]), ("one_s", ["c"]), ("two", []), ("back", ["z"])):
        math = "".join(f"$$\nx_{label}\n$$ ({label})\n\n$$\ny\n$$\n\n" for label in labels)
        (book / f"{name}.md").write_text(header + f"\n# {name}\n\n{math}See {{eq}}`a`.\n")
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: book/front\nparts:\n"
        "  - caption: A\n    numbered: true\n    chapters:\n"
        "      - file: book/one\n        sections:\n          - file: book/one_s\n      - file: book/two\n"
        "  - caption: B\n    chapters:\n      - file: book/back\n"
    )
    (tmp_path / "_config.yml").write_text("sphinx:\n  config:\n    math_eqref_format: 'Eq. {number}'\n")
    assert lab_copies.section_numbers(book) == [
        ("book/front", ()),
        ("book/one", (1,)),
        ("book/one_s", (1, 1)),
        ("book/two", (2,)),
        ("book/back", ()),
    ]
    assert lab_copies.equation_numbers(book) == {"f1": "1", "a": "1.1", "b": "1.2", "c": "1.3", "z": "2"}
    lab_copies.write_lab_copies(book, tmp_path / "lab", None, execute=False)
    text = (tmp_path / "lab" / "book" / "one.ipynb").read_text()
    assert ":enumerator: 1.2" in text and ":enumerated: false" in text and "See Eq. 1.1." in text


def test_equations_inside_directives_and_in_math_directives():
    markdown = (
        "Text\n\n$$ E = mc^2 $$ (eq-one)\n\n```{note}\n$$\nx\n$$ (eq-two)\n```\n\n"
        "````{admonition} Deep\n```{math}\n:label: eq-three\n:class: wide\na = b\n```\n````\n\n"
        "```python\n$$\nnot math\n$$\n```\n"
    )
    copied = lab_copies.lab_equations(markdown, {"eq-one": "2.1", "eq-two": "2.2", "eq-three": "2.3"})
    assert "```{math}\n:label: eq-one\n:enumerator: 2.1\nE = mc^2\n```\n" in copied
    assert "```{note}\n:::{math}\n:label: eq-two\n:enumerator: 2.2\nx\n:::\n```" in copied  # no fence closes early
    assert "```{math}\n:class: wide\n:label: eq-three\n:enumerator: 2.3\na = b\n```\n````" in copied
    assert "```python\n$$\nnot math\n$$\n```" in copied
    assert [options for _, options in myst_equations(copied)][0] == {"label": "eq-one", "enumerator": "2.1"}


def source_figures(path: Path) -> list[tuple[int, str | None, str | None]]:
    """(cell index, label, caption) of every figure the book shows for a chapter, found here independently: each
    {figure} directive MyST parses (its caption: the body after the options, None without one) and each code cell whose
    mystnb.figure metadata has a caption (MyST-NB wraps its output in a figure), in source order."""
    found = []
    for index, cell in enumerate(jupytext.read(path).cells):
        if cell.cell_type == "markdown":
            for token in myst_blocks(cell.source):
                if token.type in ("fence", "colon_fence") and token.info.startswith("{figure}"):
                    lines = token.content.splitlines()
                    options = [line for line in lines if line.startswith(":")]
                    label = next((line.split(":", 2)[2].strip() for line in options if line.startswith(":name:")), None)
                    caption = "\n".join(lines[len(options) :]).strip()
                    found.append((index, label, caption or None))
        elif cell.cell_type == "code":
            figure = cell.metadata.get("mystnb", {}).get("figure", {})
            removed = {"remove-output", "remove-cell"} & set(cell.metadata.get("tags", []))
            if figure.get("caption") and not removed:
                found.append((index, figure.get("name"), figure["caption"].strip()))
    return found


def book_figure_numbers() -> dict[str, str]:
    """Each labelled figure's number as the built book shows it (numfig): the chapter's number, continuing across
    the numbered parts of _toc.yml, a dot, and the figure's place among the chapter's captioned figures, {figure}
    directives and code cells' figures counted together; the appendices (unnumbered) count 1, 2 ... together."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    numbers, chapter_number, unnumbered = {}, 0, 0
    for part in toc["parts"]:
        for chapter in part["chapters"]:
            captioned = [label for _, label, caption in source_figures(ROOT / f"{chapter['file']}.md") if caption]
            if part.get("numbered"):
                chapter_number += 1
                numbers.update({label: f"{chapter_number}.{i}" for i, label in enumerate(captioned, 1) if label})
            else:
                numbers.update({label: str(unnumbered + i) for i, label in enumerate(captioned, 1) if label})
                unnumbered += len(captioned)
    return numbers


def test_the_book_numbers_its_figures_by_chapter():
    numbers = book_figure_numbers()
    assert lab_copies.figure_numbers(ROOT / "book") == numbers
    assert len(numbers) >= 40 and numbers["fig-bs-time"] == "14.1" and numbers["fig-smm-all-gather"] == "15.4"
    assert numbers["fig-ring-allreduce"] == "15.1"  # sharded_matmuls' first figure, then torus, hierarchy, all-gather
    assert numbers["fig-kv-cache-layout"] == "4.1" and numbers["fig-kv-per-token"] == "4.2"  # directive, then code
    assert numbers["fig-app-sources-tpu"] == "1" and numbers["fig-app-sources-wall"] == "2"  # the appendices


def test_figures_number_as_sphinx_does(tmp_path):
    """Sphinx numbers a figure only with a caption (``assign_figure_numbers`` skips an uncaptioned one), labelled or
    not; {figure} directives and code cells' figures (MyST-NB) share one counter per chapter; a code cell whose output
    is removed shows none. Checked against a Jupyter Book build of this very book (/tmp, by hand)."""
    header = (ROOT / "book" / "intro.md").read_text(encoding="utf-8").split("\n---\n")[0] + "\n---\n"
    book = tmp_path / "book"
    (book / "images").mkdir(parents=True)
    (book / "images" / "dot.svg").write_text("<svg/>")

    def figure(options: str, caption: str = "") -> str:
        return f"```{{figure}} images/dot.*\n{options}\n{caption}```\n\n"

    def code(figure: str, tags: str = "") -> str:
        return f"```{{code-cell}} ipython3\n---\nmystnb:\n  figure:\n{figure}{tags}---\nprint(1)\n```\n\n"

    chapters = {
        "front": figure(":name: fig-front", "\nFront.\n"),
        "one": figure(":name: fig-a\n:width: 50%", "\nA with $x$.\n")
        + figure(":name: fig-no-caption")
        + code(
            "    caption: |\n      Code, see {numref}`fig-a` and {glue:text}`n_runs:.0f` runs.\n    name: fig-code\n"
        )
        + figure("---\nname: fig-yaml\nalt: yaml options\n---", "\nYAML.\n")
        + figure(":alt: unlabelled", "\nUnlabelled.\n")
        + code("    name: fig-code-no-caption\n")
        + code("    caption: Removed.\n    name: fig-removed\n", "tags: [remove-output]\n")
        + code("    caption: Unlabelled code.\n")
        + "See {numref}`fig-code`, {numref}`Figure %s <fig-yaml>`, {numref}`Fig. {number} <fig-two>`.\n",
        "one_s": figure(":name: fig-section", "\nIn a section.\n"),
        "two": code("    caption: Two.\n    name: fig-two\n"),
        "back": figure(":name: fig-back", "\nBack.\n"),
    }
    for name, body in chapters.items():
        (book / f"{name}.md").write_text(header + f"\n# {name}\n\n" + body)
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: book/front\nparts:\n"
        "  - caption: A\n    numbered: true\n    chapters:\n"
        "      - file: book/one\n        sections:\n          - file: book/one_s\n      - file: book/two\n"
        "  - caption: B\n    chapters:\n      - file: book/back\n"
    )
    (tmp_path / "_config.yml").write_text("sphinx:\n  config:\n    numfig: true\n")
    assert lab_copies.document_figure_numbers(book) == {
        "book/front": ["1"],
        "book/one": ["1.1", "1.2", "1.3", "1.4", "1.5"],
        "book/one_s": ["1.6"],
        "book/two": ["2.1"],
        "book/back": ["2"],
    }
    assert lab_copies.figure_numbers(book) == {
        "fig-front": "1",
        "fig-a": "1.1",
        "fig-code": "1.2",
        "fig-yaml": "1.3",
        "fig-section": "1.6",
        "fig-two": "2.1",
        "fig-back": "2",
    }
    lab_copies.write_lab_copies(book, tmp_path / "lab", None, execute=False)
    copy = nbformat.read(tmp_path / "lab" / "book" / "one.ipynb", as_version=4)
    markdown = "\n".join(cell.source for cell in copy.cells if cell.cell_type == "markdown")
    assert "```{figure} images/dot.svg\n:enumerator: 1.1\n:name: fig-a\n:width: 50%\n\nA with $x$.\n```" in markdown
    assert "```{figure} images/dot.svg\n:enumerated: false\n:name: fig-no-caption\n```" in markdown
    assert "```{figure} images/dot.svg\n---\nenumerator: '1.3'\nname: fig-yaml\nalt: yaml options\n---\n" in markdown
    assert "```{figure} images/dot.svg\n:enumerator: 1.4\n:alt: unlabelled\n" in markdown
    # each code cell's figure: its caption in a Markdown cell right after it, numbered, its roles rewritten
    kinds = [
        (cell.cell_type, cell.metadata.get("figure_caption"))
        for cell in copy.cells
        if cell.cell_type == "code" or "figure_caption" in cell.metadata
    ]
    assert kinds == [
        ("code", None),  # the setup cell
        ("code", None),
        ("markdown", {"label": "fig-code", "number": "1.2"}),
        ("code", None),
        ("code", None),  # its output removed: no figure in the book
        ("code", None),
        ("markdown", {"label": None, "number": "1.5"}),
    ]
    caption = next(cell for cell in copy.cells if cell.metadata.get("figure_caption", {}).get("label") == "fig-code")
    assert caption.source == (
        "(fig-code)=\n**Fig. 1.2** Code, see [Fig. 1.1](#fig-a) and {eval}`hw.viz.glued_text('n_runs', '.0f')` runs."
    )
    # a figure of the same notebook: a link jupyterlab-myst resolves to its directive or caption cell
    assert "See [Fig. 1.2](#fig-code), [Figure 1.3](#fig-yaml), Fig. 2.1." in markdown
    assert copy.cells[copy.cells.index(caption) - 1].cell_type == "code"
    two = nbformat.read(tmp_path / "lab" / "book" / "two.ipynb", as_version=4)
    assert two.cells[-1].source == "(fig-two)=\n**Fig. 2.1** Two."


def test_numref_reads_as_the_book_shows_it():
    """Sphinx's numref text: numfig_format ('Fig. %s') or the role's own text, old style (%s) or new ({number});
    a text that needs the caption ({name}) or a label that is no figure is left to the build's resolver."""
    numbers = {"fig-x": "12.3"}
    assert lab_copies.numref_text("fig-x", numbers) == "Fig. 12.3"
    assert lab_copies.numref_text("Figure %s <fig-x>", numbers) == "Figure 12.3"
    assert lab_copies.numref_text("Fig. {number} shows <fig-x>", numbers) == "Fig. 12.3 shows"
    assert lab_copies.numref_text("FIG-X", numbers, "Figure %s") == "Figure 12.3"  # labels are case-insensitive
    assert lab_copies.numref_text("{name} <fig-x>", numbers) is None
    assert lab_copies.numref_text("tab-y", numbers) is None
    resolve = lab_copies.figure_references(ROOT / "book", lambda name, content: f"<{name}:{content}>")
    assert resolve("numref", "fig-bs-time") == "Fig. 14.1" and resolve("numref", "tab-y") == "<numref:tab-y>"


@pytest.mark.parametrize("path", BOOK_CHAPTERS, ids=lambda p: p.relative_to(ROOT / "book").as_posix())
def test_each_figure_in_a_lab_copy_carries_the_books_number(lab_book, path):
    """jupyterlab-myst numbers {figure} directives 1, 2 ... and knows nothing of a code cell's mystnb.figure: in the
    copy each directive carries the book's number, each code cell's figure is followed by its numbered caption, and
    each {numref} reads "Fig. 12.3"."""
    numbers = lab_copies.document_figure_numbers(ROOT / "book")[path.relative_to(ROOT).with_suffix("").as_posix()]
    copy = nbformat.read(copy_of(lab_book, path), as_version=4)
    source_cells = jupytext.read(path).cells
    added, shown = 0, []
    for index, label, caption in source_figures(path):
        number = numbers[len(shown)] if caption else None
        shown += [number] if caption else []
        cell = copy.cells[2 + index + added]
        if source_cells[index].cell_type == "code":
            assert cell.source == source_cells[index].source
            added += 1
            after = copy.cells[2 + index + added]
            assert after.metadata["figure_caption"] == {"label": label, "number": number}
            assert after.source.startswith(f"({label})=\n**Fig. {number}** " if label else f"**Fig. {number}** ")
            assert "{glue" not in after.source and "{eq}" not in after.source
        else:
            options = [opts for kind, opts in myst_figures(cell.source) if opts.get("name") == label]
            assert options and options[0].get("enumerator" if caption else "enumerated") == (number or "false")
    assert len(shown) == len(numbers)
    figures = lab_copies.figure_numbers(ROOT / "book")
    prose = "\n".join(cell.source for cell in copy.cells if cell.cell_type == "markdown")
    assert not [role for role in myst_roles(prose) if role[0] == "numref"]
    for source in (cell.source for cell in source_cells if cell.cell_type == "markdown"):
        for label in [content for name, content in myst_roles(source) if name == "numref"]:
            assert f"Fig. {figures[label]}" in prose


def myst_figures(markdown: str) -> list[tuple[str, dict[str, str]]]:
    """("{figure}", its options) of every figure directive MyST sees in a Markdown cell."""
    found = []
    for token in myst_blocks(markdown):
        if token.type in ("fence", "colon_fence") and token.info.startswith("{figure}"):
            options = {}
            for line in token.content.splitlines():
                if not line.startswith(":"):
                    break
                name, _, value = line[1:].partition(":")
                options[name] = value.strip()
            found.append(("{figure}", options))
    return found


def test_the_lab_copies_number_figures_as_the_built_book_does():
    """Against the last HTML build (``BOOK_HTML``, else _build/html), where there is one: each page's figure numbers
    in order (Fig. 12.3, labelled or not) and each labelled figure's."""
    import re

    html = built_book()
    pages, labelled = {}, {}
    for page in html.rglob("*.html"):
        for match in re.finditer(r'<figure[^>]*id="([^"]+)"[^>]*>(.*?)</figure>', page.read_text(), re.DOTALL):
            number = re.search(r'<span class="caption-number">Fig\. ([^ <]+) </span>', match.group(2))
            if number:
                pages.setdefault(page.relative_to(html).with_suffix("").as_posix(), []).append(number.group(1))
                if not re.fullmatch(r"id\d+", match.group(1)):
                    labelled[match.group(1)] = number.group(1)
    numbers = lab_copies.document_figure_numbers(ROOT / "book")
    assert {document: found for document, found in numbers.items() if found} == pages
    slugs = {
        re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-"): n
        for label, n in lab_copies.figure_numbers(ROOT / "book").items()
    }
    assert slugs == labelled


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.relative_to(ROOT / "book").as_posix())
def test_every_image_in_a_lab_copy_is_a_file_beside_it(lab_book, path):
    """Each image a chapter shows (``images/NAME.*``: the SVG its page shows) is in its lab copy as a path that
    resolves from where the copy lies, to the same file."""
    copy = copy_of(lab_book, path)
    shown = [src for source in markdown_cells(path) for src in myst_images(source)]
    copied = [src for cell in nbformat.read(copy, as_version=4).cells for src in myst_images(cell.source)]
    assert len(copied) == len(shown)
    for src, copied_src in zip(shown, copied):
        assert (copy.parent / copied_src).is_file(), f"{copied_src} in {copy.name}"
        assert (copy.parent / copied_src).read_bytes() == page_image(path, src).read_bytes()


def page_image(chapter: Path, src: str) -> Path:
    """The file the chapter's HTML page shows for an image path: NAME.* is its SVG, else PNG, GIF or JPEG."""
    order = [".svg", ".png", ".gif", ".jpg", ".jpeg"]
    found = [path for path in (chapter.parent / src).parent.glob(Path(src).name) if path.suffix.lower() in order]
    return min(found, key=lambda path: order.index(path.suffix.lower())).resolve()


def test_the_book_shows_images_and_only_those_are_copied(lab_book):
    shown = {
        page_image(path, src) for path in CHAPTERS for source in markdown_cells(path) for src in myst_images(source)
    }
    assert len(shown) >= 7
    copied = {path for path in lab_book.rglob("*") if path.is_file() and path.suffix not in (".ipynb", ".json")}
    assert {path.relative_to(lab_book) for path in copied} == {path.relative_to(ROOT) for path in shown}


def test_index_entries_feed_the_printed_index_and_stay_out_of_the_lab_copies(lab_book):
    """A chapter's ``{index}`` directives (the PDF's concept index) have no place in a notebook: the copy drops them,
    wherever they stand, and keeps everything around them."""
    cell = "Before.\n\n```{index} roofline; derivation\n```\n\nAfter.\n\n"
    cell += ":::{note}\n```{index} single: KV cache\n```\nIn.\n:::\n"
    assert lab_copies.lab_without_index(cell) == "Before.\n\n\nAfter.\n\n:::{note}\nIn.\n:::\n"
    indexed = [path for path in CHAPTERS if "{index}" in path.read_text(encoding="utf-8")]
    assert len(indexed) >= 10
    for path in indexed:
        copied = nbformat.read(copy_of(lab_book, path), as_version=4)
        assert not any("{index}" in cell.source for cell in copied.cells if cell.cell_type == "markdown"), path.name
