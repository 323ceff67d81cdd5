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
    (book / "images" / "logo.svg").write_text("<svg/>")
    chapter = book / "tiny.md"
    header = (ROOT / "book" / "intro.md").read_text(encoding="utf-8").split("\n---\n")[0] + "\n---\n"
    chapter.write_text(
        header + "\n# Tiny\n\n```{code-cell} ipython3\n:tags: [remove-cell]\n"
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
    assert (out / "book" / "images" / "logo.svg").exists()
    notebook = nbformat.read(copy, as_version=4)
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
