"""The book's Sphinx extension: repository buttons come from the `origin` remote."""

import importlib.util
import subprocess
import types
from pathlib import Path

import pytest

SPEC = importlib.util.spec_from_file_location("book_html", Path(__file__).parents[1] / "book" / "_ext" / "book_html.py")
book_html = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(book_html)


def _origin(monkeypatch, url):
    def run(*args, **kwargs):
        if url is None:
            raise subprocess.CalledProcessError(2, args[0])
        return types.SimpleNamespace(stdout=url + "\n")

    monkeypatch.setattr(book_html.subprocess, "run", run)


@pytest.mark.parametrize(
    ("origin", "expected"),
    [
        ("git@github.com:org/book.git", "https://github.com/org/book"),
        ("https://gitlab.com/org/book.git", "https://gitlab.com/org/book"),
        ("/work/main", ""),
        (None, ""),
    ],
)
def test_repository_url_from_origin(monkeypatch, origin, expected):
    _origin(monkeypatch, origin)
    assert book_html._repository_url() == expected


def test_launch_buttons_only_for_a_web_repository(monkeypatch):
    config = types.SimpleNamespace(html_theme_options={}, myst_substitutions={})
    _origin(monkeypatch, "/work/main")
    book_html._repository_buttons(None, config)
    assert config.html_theme_options == {} and config.myst_substitutions == {"repository": "the repository"}
    _origin(monkeypatch, "git@github.com:org/book.git")
    monkeypatch.setenv("BOOK_JUPYTERHUB_URL", "https://hub.example.edu")
    book_html._repository_buttons(None, config)
    options = config.html_theme_options
    assert config.myst_substitutions["repository"] == "[the repository](https://github.com/org/book)"
    assert options["repository_url"] == "https://github.com/org/book" and options["use_repository_button"]
    assert (
        options["launch_buttons"]["binderhub_url"]
        and options["launch_buttons"]["jupyterhub_url"] == "https://hub.example.edu"
    )


# --- a downloaded notebook says how to install hwlib; the wheel is offered beside it ---

WHEEL = "hwlib-0.2.0-py3-none-any.whl"


def _chapter_build(tmp_path, markdown="# Rooflines"):
    import nbformat

    outdir = tmp_path / "_build" / "html"
    executed = tmp_path / "_build" / "jupyter_execute" / "book" / "rooflines.ipynb"
    executed.parent.mkdir(parents=True)
    nbformat.write(
        nbformat.v4.new_notebook(
            cells=[nbformat.v4.new_markdown_cell(markdown), nbformat.v4.new_code_cell("import hwlib as hw")]
        ),
        executed,
    )
    (outdir / "_downloads").mkdir(parents=True)
    (outdir / "_downloads" / WHEEL).write_bytes(b"PK")
    app = types.SimpleNamespace(
        outdir=str(outdir),
        hwlib_wheel=WHEEL,
        config=types.SimpleNamespace(html_title="Accelerator performance, computed", project="Project name not set"),
    )
    return app, outdir, executed


def test_a_downloaded_notebook_says_first_how_to_install_hwlib(tmp_path, monkeypatch):
    import nbformat

    app, outdir, executed = _chapter_build(tmp_path)
    monkeypatch.setattr(book_html, "_repository_url", lambda: "https://github.com/org/book")
    context = {}
    for _ in range(2):  # a second write of the page does not add a second cell
        book_html._offer_notebook(app, "book/rooflines", "page.html", context, doctree=object())
    target = outdir / "_sources" / "book" / "rooflines.ipynb"
    assert context["ipynb_source"] == "book/rooflines.ipynb"
    copy = nbformat.read(target, as_version=4)
    first = copy.cells[0]
    assert first.cell_type == "markdown" and first.id == book_html.INSTALL_CELL_ID and len(copy.cells) == 4
    install = copy.cells[1]
    assert install.cell_type == "code" and install.id == book_html.INSTALL_CODE_ID and not install.outputs
    assert '"hwlib @ git+https://github.com/org/book"' in install.source and 'find_spec("hwlib") is None' in (
        install.source
    )
    assert f"pip install {WHEEL}" in first.source and "*Accelerator performance, computed*" in first.source
    assert "`git clone https://github.com/org/book`" in first.source and "make lab" in first.source
    link = first.source.split(f"[{WHEEL}](")[1].split(")")[0]
    assert (target.parent / link).resolve() == (outdir / "_downloads" / WHEEL).resolve()  # resolves in the site
    nbformat.validate(copy)
    assert len(nbformat.read(executed, as_version=4).cells) == 2  # the executed notebook itself is untouched


def test_the_reading_copy_is_written_again_after_the_theme_copies_its_own(tmp_path, monkeypatch):
    """With launch buttons (a web origin) sphinx-book-theme copies the executed notebook over the download at
    priority 501; the copy is written again after it, once."""
    import shutil

    import nbformat

    app, outdir, executed = _chapter_build(tmp_path)
    monkeypatch.setattr(book_html, "_repository_url", lambda: "https://github.com/org/book")
    book_html._offer_notebook(app, "book/rooflines", "page.html", {}, doctree=object())
    target = outdir / "_sources" / "book" / "rooflines.ipynb"
    shutil.copy2(executed, target)  # what the theme's launch buttons do
    book_html._offer_notebook_again(app, "book/rooflines", "page.html", {}, doctree=object())
    assert nbformat.read(target, as_version=4).cells[0].id == book_html.INSTALL_CELL_ID
    colab = nbformat.read(outdir / "_colab" / "book" / "rooflines.ipynb", as_version=4)
    assert colab.cells[0].source.endswith(book_html.COLAB_NOTE)  # the Colab copy, which the theme does not touch
    written = target.stat().st_mtime_ns
    book_html._offer_notebook_again(app, "book/rooflines", "page.html", {}, doctree=object())
    assert target.stat().st_mtime_ns == written  # not written again when it is already the reading copy
    connected = {}
    fake = types.SimpleNamespace(
        config=types.SimpleNamespace(html_static_path=[]),
        connect=lambda event, handler, priority=500: connected.setdefault(handler.__name__, priority),
        **{name: lambda *a, **k: None for name in ("add_css_file", "add_js_file", "add_config_value")},
    )
    book_html.setup(fake)
    assert connected["_offer_notebook"] < 501 < connected["_offer_notebook_again"] <= connected["_colab_button"]


def test_a_downloaded_notebook_has_the_outputs_of_the_execution_cache(tmp_path, monkeypatch):
    """MyST-NB writes a chapter it took from its cache without outputs; the download copy takes them from the cache."""
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    monkeypatch.setattr(book_html, "_repository_url", lambda: "")  # no install code cell: the chapter's cells follow
    app, outdir, executed = _chapter_build(tmp_path)
    ran = nbformat.read(executed, as_version=4)
    ran.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="ran\n")]
    ran.cells[1].execution_count = 1
    cache = tmp_path / "_build" / ".jupyter_cache"
    get_cache(str(cache)).cache_notebook_bundle(CacheBundleIn(ran, str(executed)), check_validity=False)
    book_html._offer_notebook(app, "book/rooflines", "page.html", {}, doctree=object())
    copy = nbformat.read(outdir / "_sources" / "book" / "rooflines.ipynb", as_version=4)
    assert copy.cells[0].id == book_html.INSTALL_CELL_ID and copy.cells[2].outputs[0].text == "ran\n"
    assert not nbformat.read(executed, as_version=4).cells[1].outputs  # MyST-NB's own file is untouched


def test_the_install_code_installs_only_where_hwlib_is_missing(tmp_path, monkeypatch):
    """The code cell runs: it calls pip with the repository where hwlib cannot be found, and not where it can."""
    import importlib.util
    import subprocess

    calls = []
    monkeypatch.setattr(subprocess, "check_call", lambda args: calls.append(args))
    code = book_html.install_code("https://github.com/org/book")
    exec(compile(code, "install", "exec"), {})
    assert calls == []  # hwlib is importable here
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    exec(compile(code, "install", "exec"), {})
    assert calls[0][1:] == ["-m", "pip", "install", "-q", "hwlib @ git+https://github.com/org/book"]


def test_colab_opens_the_colab_copy_on_the_pages_branch(monkeypatch):
    monkeypatch.delenv("BOOK_PAGES_BRANCH", raising=False)
    url = book_html.colab_url("https://github.com/org/book", "book/serving")
    assert url == "https://colab.research.google.com/github/org/book/blob/gh-pages/_colab/book/serving.ipynb"
    assert book_html.published_files("https://github.com/org/book") == "https://org.github.io/book/"
    monkeypatch.setenv("BOOK_PAGES_BRANCH", "site")
    assert "/blob/site/_colab/book/serving.ipynb" in book_html.colab_url("https://github.com/org/book", "book/serving")
    monkeypatch.delenv("BOOK_SITE_URL", raising=False)
    assert book_html.published_files("https://github.com/Org/book") == "https://org.github.io/book/"
    monkeypatch.setenv("BOOK_SITE_URL", "https://book.example.org")  # a site with its own domain
    assert book_html.published_files("https://github.com/org/book") == "https://book.example.org/"
    assert book_html.colab_url("https://gitlab.com/org/book", "book/serving") == ""  # Colab opens GitHub only


COLAB_CHAPTER = """(ch-rooflines)=
# Rooflines

```{index} roofline
```

$$
t = F / \\pi
$$ (eq-roof)

:::{admonition} Takeaway
:class: tip
A {term}`roofline` bounds it.
:::"""


def test_the_colab_copy_is_the_reading_copy_in_plain_markdown(tmp_path, monkeypatch):
    """For a repository on GitHub, the Colab copy (``_colab/``) has the reading copy's install cells first, its
    install text linking the wheel on the published site and saying Colab does not fold solutions, and plain
    Markdown; the reading copy (``_sources/``) stays MyST, as JupyterLab reads it."""
    import nbformat

    monkeypatch.delenv("BOOK_PAGES_BRANCH", raising=False)
    app, outdir, executed = _chapter_build(tmp_path, COLAB_CHAPTER)
    monkeypatch.setattr(book_html, "_repository_url", lambda: "https://github.com/org/book")
    book_html._offer_notebook(app, "book/rooflines", "page.html", {}, doctree=object())
    reading = nbformat.read(outdir / "_sources" / "book" / "rooflines.ipynb", as_version=4)
    colab = nbformat.read(outdir / "_colab" / "book" / "rooflines.ipynb", as_version=4)
    assert reading.cells[0].source == book_html.install_text(
        "book/rooflines", WHEEL, "https://github.com/org/book", "Accelerator performance, computed"
    )
    assert reading.cells[2].source == COLAB_CHAPTER and book_html.COLAB_NOTE not in reading.cells[0].source
    assert [cell.get("id") for cell in colab.cells[:2]] == [book_html.INSTALL_CELL_ID, book_html.INSTALL_CODE_ID]
    assert colab.cells[1].source == reading.cells[1].source
    install = colab.cells[0].source
    assert install.endswith(book_html.COLAB_NOTE) and "solutions are not folded" in install
    assert f"](https://org.github.io/book/_downloads/{WHEEL})" in install
    assert colab.cells[2].source == "# Rooflines\n\n$$\nt = F / \\pi\n$$\n\n> **Takeaway**\n>\n> A roofline bounds it."
    nbformat.validate(colab)


def test_no_colab_copy_for_a_repository_off_github(tmp_path, monkeypatch):
    app, outdir, _ = _chapter_build(tmp_path, COLAB_CHAPTER)
    monkeypatch.setattr(book_html, "_repository_url", lambda: "https://gitlab.com/org/book")
    book_html._offer_notebook(app, "book/rooflines", "page.html", {}, doctree=object())
    assert (outdir / "_sources" / "book" / "rooflines.ipynb").exists() and not (outdir / "_colab").exists()


def test_the_colab_copy_is_numbered_as_the_page_is():
    """Figures and exercises as their captions show them (numfig_format), equations as "Eq. 8.1" counts them."""
    env = types.SimpleNamespace(
        toc_fignumbers={
            "book/serving_techniques": {
                "figure": {"fig-disaggregation": (8, 3)},
                "exercise": {"many-ex-split": (8, 2)},
                "displaymath": {"equation-eq-many-prefix": (8, 1)},
            }
        },
        toc_secnumbers={"book/serving_techniques": {"": (8,)}},
        domaindata={"math": {"objects": {"eq-many-prefix": ("book/serving_techniques", 1), "eq-x": ("book/x", 1)}}},
    )
    formats = {"figure": "Fig. %s", "table": "Table %s", "exercise": "Exercise %s"}
    app = types.SimpleNamespace(env=env, config=types.SimpleNamespace(numfig_format=formats))
    assert book_html._shown_numbers(app, "book/serving_techniques") == {
        "fig-disaggregation": "Fig. 8.3",
        "many-ex-split": "Exercise 8.2",
        "eq-many-prefix": "8.1",
    }
    assert book_html._shown_numbers(types.SimpleNamespace(), "book/serving_techniques") == {}


def test_the_colab_button_joins_the_launch_menu_of_a_chapter_only(monkeypatch):
    monkeypatch.setattr(book_html, "_repository_url", lambda: "https://github.com/org/book")
    menu = {"label": "launch-buttons", "buttons": [{"text": "Binder"}]}
    context = {"ipynb_source": "book/serving.ipynb", "header_buttons": [{"label": "download-buttons"}, menu]}
    book_html._colab_button(None, "book/serving", "page.html", context, doctree=object())
    assert [button["text"] for button in menu["buttons"]] == ["Binder", "Colab"]
    assert menu["buttons"][1]["url"].endswith("/_colab/book/serving.ipynb")
    page = {"header_buttons": [{"label": "launch-buttons", "buttons": []}]}  # a page without a notebook
    book_html._colab_button(None, "book/appendix/references", "page.html", page, doctree=object())
    assert page["header_buttons"][0]["buttons"] == []
    monkeypatch.setattr(book_html, "_repository_url", lambda: "")  # a local clone: no launch menu, no Colab
    context = {"ipynb_source": "book/serving.ipynb", "header_buttons": []}
    book_html._colab_button(None, "book/serving", "page.html", context, doctree=object())
    assert context["header_buttons"] == []


def test_without_a_wheel_or_a_web_remote_the_cell_still_says_what_to_do():
    text = book_html.install_text("book/appendix/glossary", "", "", "The book")
    assert "pip install hwlib" not in text and "a clone of the book's repository: `make lab`" in text
    text = book_html.install_text("book/appendix/glossary", WHEEL, "", "The book")
    assert f"](../../../_downloads/{WHEEL})" in text


def test_the_wheel_is_built_once_and_again_when_hwlib_changes(tmp_path, monkeypatch):
    calls = []

    def pip_wheel(command, **kwargs):
        calls.append(command)
        wheels = Path(command[command.index("--wheel-dir") + 1])
        wheels.mkdir(parents=True, exist_ok=True)
        assert (Path(command[-1]) / "hwlib" / "__init__.py").exists()  # built from a clean copy of the package
        (wheels / WHEEL).write_bytes(b"PK")

    source = tmp_path / "units.py"
    source.write_text("")
    monkeypatch.setattr(book_html, "_hwlib_sources", lambda: [source])
    monkeypatch.setattr(book_html.subprocess, "run", pip_wheel)
    folder = tmp_path / "html" / "_downloads"
    assert book_html.build_hwlib_wheel(folder) == WHEEL and len(calls) == 1
    assert "--no-deps" in calls[0] and "--no-build-isolation" in calls[0]
    assert book_html.build_hwlib_wheel(folder) == WHEEL and len(calls) == 1  # up to date: not built again
    import os

    later = (folder / WHEEL).stat().st_mtime + 10
    os.utime(source, (later, later))
    assert book_html.build_hwlib_wheel(folder) == WHEEL and len(calls) == 2

    def fails(command, **kwargs):
        raise subprocess.CalledProcessError(1, command, stderr="no setuptools")

    monkeypatch.setattr(book_html.subprocess, "run", fails)
    os.utime(source, (later + 10, later + 10))
    assert book_html.build_hwlib_wheel(tmp_path / "other") == ""


def test_the_download_menu_offers_the_wheel_beside_the_notebook():
    app = types.SimpleNamespace(hwlib_wheel=WHEEL)
    menu = {
        "label": "download-buttons",
        "buttons": [{"label": "download-notebook-button"}, {"label": "download-source-button"}],
    }
    context = {
        "ipynb_source": "book/rooflines.ipynb",
        "header_buttons": [menu],
        "pathto": lambda name, resource: f"../{name}",
    }
    book_html._wheel_in_download_menu(app, "book/rooflines", "page.html", context, None)
    labels = [button["label"] for button in menu["buttons"]]
    assert labels == ["download-notebook-button", "download-hwlib-button", "download-source-button"]
    assert menu["buttons"][1]["url"] == f"../_downloads/{WHEEL}"


def test_a_notebook_figure_is_described_by_its_caption_not_its_file_name():
    from docutils import nodes

    hashed = "../_images/" + "6c" * 32 + ".png"
    figure = nodes.figure("", nodes.image(uri=hashed, alt=hashed), nodes.caption("", "KV cache per  token."))
    loose = nodes.image(uri=hashed)
    named = nodes.image(uri="images/ring.svg", alt="A ring of four chips.")
    doctree = nodes.document(None, None)
    doctree += [figure, loose, named]
    book_html._describe_figures(None, doctree, "book/kv_cache")
    assert [image["alt"] for image in doctree.findall(nodes.image)] == [
        "KV cache per token.",
        "A figure computed by hwlib",
        "A ring of four chips.",
    ]


def test_the_pdf_leaves_out_html_only_pages_and_says_its_explorers_are_static():
    from docutils import nodes
    from sphinx import addnodes

    root = nodes.document(None, None)
    for docname in ("book/rooflines", *book_html.HTML_ONLY_PAGES):
        page = addnodes.start_of_file(docname=docname)
        section = nodes.section()
        section += nodes.title("", "Explore")
        section += nodes.paragraph("", "Pick a chip.")
        page += section
        root += page
    book_html._html_only_pages_left_out(root)
    book_html._explorers_said_static(root)
    kept = [page["docname"] for page in root.findall(addnodes.start_of_file)]
    assert kept == ["book/rooflines"]
    paragraphs = [p.astext() for p in root.findall(nodes.paragraph)]
    assert paragraphs == [book_html.EXPLORER_NOTE, "Pick a chip."]


def test_a_downloaded_chapter_has_its_numbers_filled_in(tmp_path):
    import json

    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("Costs {glue:text}`costs_usd:.2f` dollars."),
        nbformat.v4.new_code_cell("x = 1", metadata={"mystnb": {"figure": {"caption": "At {glue:text}`n` GPUs."}}}),
    ]
    path, glue = tmp_path / "chapter.ipynb", tmp_path / "chapter.glue.json"
    nbformat.write(notebook, path)
    glue.write_text(json.dumps({"costs_usd": {"data": {"text/plain": "1.4996"}}, "n": {"data": {"text/plain": "8"}}}))
    book_html._numbers_filled_in(path, glue)
    cells = nbformat.read(path, as_version=4).cells
    assert cells[0].source == "Costs 1.50 dollars." and cells[1].metadata["mystnb"]["figure"]["caption"] == "At 8 GPUs."
    assert "running the cells computes them again" in book_html.install_text("book/costs", "", "", "T")


def test_a_downloaded_chapter_names_its_references_as_the_page_does():
    env = types.SimpleNamespace(
        domaindata={
            "std": {"labels": {"ch-serving": ("book/serving", "ch-serving", "Serving a model")}},
            "math": {"objects": {"eq-bs-fixed": ("book/batch_squeeze", 1)}},
        },
        toc_secnumbers={"book/batch_squeeze": {"": (11,)}},
        toc_fignumbers={"book/costs": {"figure": {"fig-costs-batch": (14, 1)}}},
    )
    text = book_html._role_texts(types.SimpleNamespace(env=env))
    assert text("ref", "ch-serving") == "Serving a model" and text("ref", "its tables <ch-serving>") == "its tables"
    assert text("eq", "eq-bs-fixed") == "Eq. 11.1" and text("numref", "fig-costs-batch") == "Fig. 14.1"
    assert text("ref", "no-such-label") is None and text("term", "HBM") is None
    key, (who, year) = next(iter(book_html._bibliography().items()))
    assert text("cite:t", key) == f"{who} ({year})" and text("cite:p", key) == f"({who}, {year})"
