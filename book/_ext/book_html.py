"""Sphinx extension: what the book's HTML pages need beyond Jupyter Book's defaults.

- Layout: book/_static/layout.css (after web/css/book.css) lets wide tables, display equations and code
  scroll inside the page rather than run off it or get cut, at a desktop's width and a phone's.
- Offline: serves the book's own copies of MathJax, require.js and the widget manager
  (copied from npm into web/static by `make`), points require.js at them (so the manager
  finds its modules and fonts there, whatever the page's depth), and adds a shim that lets
  the widget manager talk to MathJax 3.
- One copy of each script: sphinx-thebe's configuration script is added twice under
  Sphinx 7 ("Identifier 'THEBE_JS_URL' has already been declared" in the browser).
- Notebook downloads: each chapter's executed notebook is copied next to its source so
  that the download menu offers ".ipynb" beside ".md" (the theme does this only when
  launch buttons are configured, and then over the copy, which is written again after it). The copy's first cell
  says how to install hwlib: from its
  wheel, built into `_downloads/` at the start of the build, or from the repository.
- Figures' alt text: a notebook figure's caption, not its hashed file name.
- Repository link and launch buttons, configured for the repository the book is built
  from: its `origin` remote, when that is a web URL (a local clone has none, and then no
  such buttons); the substitution `{{ repository }}` links it where a page sends readers
  to it. Binder runs the chapters from requirements.txt; a JupyterHub button
  appears when BOOK_JUPYTERHUB_URL names the hub; for a repository on GitHub, Colab opens a chapter's
  Colab copy from the published site's branch (gh-pages, or BOOK_PAGES_BRANCH): `_colab/<page>.ipynb`,
  written beside the reading copy with its Markdown plain, as Colab renders it (tools/colab_copies.py),
  its figures fetched from the published site's `_images/` (GitHub Pages, or BOOK_SITE_URL); its
  first code cell installs hwlib.
- The PDF book offered for download: once `make pdf` has built `_build/latex/book.pdf`, the
  HTML build copies it to the site's root and each page's download menu links to it (no PDF,
  no link).
- The PDF book (LaTeX builder): a table's `text/latex` form (hwlib.viz.latex) is printed as
  LaTeX, not as the display math MyST-NB makes of every `text/latex` output; a notebook's
  figures print at the width of the page (a tall one 14 cm high); a long Markdown table gets column
  widths from its content (Sphinx would set each column on one line); the bibliography is
  printed in the References appendix, not after the last appendix.
"""

import functools
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REQUIRE_CONFIG = 'var require = {baseUrl: document.documentElement.dataset.content_root + "_static/vendor/"};'


def _drop_repeated_scripts(app, pagename, templatename, context, doctree):
    seen, unique = set(), []
    for script in context.get("script_files", []):
        key = (getattr(script, "filename", None) or "", repr(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def _offer_notebook(app, pagename, templatename, context, doctree):
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if doctree is None or not executed.exists():
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(executed, target)
    _outputs_from_cache(target, _execution_cache(app))
    _numbers_filled_in(target, executed.with_suffix(".glue.json"), _role_texts(app))
    title = getattr(app.config, "html_title", "") or app.config.project
    wheel, repository = getattr(app, "hwlib_wheel", ""), _repository_url()
    _add_install_cell(target, pagename, wheel, repository, title)
    if colab_url(repository, pagename):
        install = install_text(pagename, wheel, repository, title, published=True)
        _offer_colab_copy(app, pagename, target, repository, install)
    context["ipynb_source"] = f"{pagename}.ipynb"


def _offer_notebook_again(app, pagename, templatename, context, doctree):
    """Where launch buttons are configured, the theme copies MyST-NB's executed notebook over the reading copy
    (priority 501): write the reading copy again after it."""
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    if target.exists() and f'"id": "{INSTALL_CELL_ID}"' not in target.read_text(encoding="utf-8"):
        _offer_notebook(app, pagename, templatename, context, doctree)


def _role_texts(app):
    """What the page shows for a cross-reference ({ref}: the section's title, or the role's own text), an
    equation's reference ({eq}: "Eq. 3.2"), a figure's ({numref}: "Fig. 3.1") and a citation ({cite:t}: "Dally
    (2023)", {cite:p}: "(Dally, 2023)"), for ``reading_markdown``; None for a role it does not know."""
    env = getattr(app, "env", None)
    if env is None:  # no build environment (a test's stand-in app): glue roles only
        return None
    labels, equations = env.domaindata["std"]["labels"], env.domaindata["math"]["objects"]
    chapter = {doc: numbers.get("", ()) for doc, numbers in env.toc_secnumbers.items()}
    figures = {
        label: ".".join(map(str, number))
        for numbers in env.toc_fignumbers.values()
        for label, number in numbers.get("figure", {}).items()
    }
    cited = _bibliography()

    def text(name: str, content: str) -> str | None:
        shown, _, target = content.partition("<")
        label = target.rstrip(">").strip() if target else content.strip()
        if name == "ref":
            return shown.strip() if target else (str(labels[label][2]) if label in labels else None)
        if name == "eq" and label in equations:
            doc, number = equations[label]
            return "Eq. " + ".".join(map(str, (*chapter.get(doc, ()), number)))
        if name == "numref" and label in figures:
            return f"Fig. {figures[label]}"
        if name in ("cite:t", "cite:p"):
            found = [cited.get(key.strip()) for key in label.split(",")]
            if None in found:
                return None
            if name == "cite:t":
                return "; ".join(f"{who} ({year})" for who, year in found)
            return "(" + "; ".join(f"{who}, {year}" for who, year in found) + ")"
        return None

    return text


def _bibliography() -> dict[str, tuple[str, str]]:
    """Each reference's key: (its authors as a citation names them, its year), from book/appendix/references.bib."""
    from pybtex.database import parse_file

    entries = {}
    for key, entry in parse_file(str(ROOT / "book" / "appendix" / "references.bib")).entries.items():
        people = entry.persons.get("author", [])
        last = [" ".join(person.last_names) for person in people]
        who = (
            last[0]
            if len(last) == 1
            else f"{last[0]} and {last[1]}"
            if len(last) == 2
            else f"{last[0]} et al."
            if last
            else entry.fields.get("organization", entry.fields.get("title", key))
        )
        entries[key] = (who.replace("{", "").replace("}", ""), entry.fields.get("year", "n.d."))
    return entries


def _shown_numbers(app, pagename: str) -> dict[str, str]:
    """What the page numbers, by label: a figure or an exercise as its caption shows it ("Fig. 8.3", "Exercise 8.1",
    ``numfig_format``), a display equation by its number ("8.1", as ``_role_texts`` counts it for "Eq. 8.1")."""
    env = getattr(app, "env", None)
    if env is None:  # a test's stand-in app
        return {}
    formats = app.config.numfig_format
    shown = {
        label: formats[kind] % ".".join(map(str, number))
        for kind, numbers in env.toc_fignumbers.get(pagename, {}).items()
        if kind in formats
        for label, number in numbers.items()
    }
    chapter = env.toc_secnumbers.get(pagename, {}).get("", ())
    for label, (doc, number) in env.domaindata["math"]["objects"].items():
        if doc == pagename:
            shown[label] = ".".join(map(str, (*chapter, number)))
    return shown


@functools.cache
def _tool(name: str):
    """The module ``tools/<name>.py``."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _numbers_filled_in(notebook_path: Path, glue_path: Path, resolve=None) -> None:
    """The downloaded notebook's prose reads as the page does: each glue role replaced by the number the page shows
    (``tools/lab_copies.py``'s ``reading_markdown``, from the build's glued values in ``glue_path``), and each
    cross-reference, equation reference and citation that ``resolve`` knows by the text the page shows."""
    import json

    import nbformat

    if not glue_path.exists():
        return
    lab_copies = _tool("lab_copies")
    values = {
        name: output["data"]["text/plain"]
        for name, output in json.loads(glue_path.read_text(encoding="utf-8")).items()
        if "text/plain" in output.get("data", {})
    }
    notebook = nbformat.read(notebook_path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = lab_copies.reading_markdown(cell.source, values, resolve)
        figure = cell.get("metadata", {}).get("mystnb", {}).get("figure", {})
        if isinstance(figure.get("caption"), str):  # a figure's caption, in its cell's metadata
            figure["caption"] = lab_copies.reading_markdown(figure["caption"], values, resolve)
    nbformat.write(notebook, notebook_path)


def _execution_cache(app) -> Path:
    config = getattr(getattr(app, "env", None), "mystnb_config", None)
    return Path(getattr(config, "execution_cache_path", "") or Path(app.outdir).parent / ".jupyter_cache")


def _outputs_from_cache(notebook_path: Path, cache: Path) -> None:
    """Where MyST-NB took a chapter from its execution cache it writes the notebook without outputs
    (``jupyter_execute/``); the copy offered for download gets them from the cache, as the page did."""
    import nbformat

    notebook = nbformat.read(notebook_path, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    if not code or any(cell.get("outputs") for cell in code) or not cache.is_dir():
        return
    from jupyter_cache import get_cache

    try:
        _, notebook = get_cache(str(cache)).merge_match_into_notebook(notebook)
    except KeyError:  # not in the cache: the notebook stays as MyST-NB wrote it
        return
    nbformat.write(notebook, notebook_path)


INSTALL_CELL_ID = "how-to-run-this-notebook"
INSTALL_CODE_ID = "install-hwlib-where-missing"
PAGES_BRANCH = "gh-pages"
"""The branch a published site lives on (``ghp-import``'s default); BOOK_PAGES_BRANCH names another. Colab opens
a chapter's Colab copy from there, ``_colab/<page>.ipynb``, and fetches its images from there."""
COLAB_FOLDER = "_colab"
"""Where in the HTML output each chapter's Colab copy is: its reading copy in plain Markdown."""
IMAGE_FOLDER = "_images"
"""Where the HTML build copies every image a page shows (Sphinx's ``imagedir``), by its file name."""
COLAB_NOTE = (
    "On Colab the exercises' solutions are not folded away as on the book's page: their code cells show as the "
    "questions' do."
)
WHEEL_FOLDER = "_downloads"
"""Where in the HTML output hwlib's wheel is offered, beside the notebooks (``_sources/``)."""


def install_text(pagename: str, wheel: str, repository: str, title: str, published: bool = False) -> str:
    """The first Markdown cell of a downloaded chapter notebook: how to install hwlib and run it. ``published``: for
    the Colab copy, which links the wheel on the published site (Colab resolves no link relative to the notebook)
    and says what Colab does not fold."""
    root = "../" * (pagename.count("/") + 1)  # the site's root, from _sources/<pagename>.ipynb
    if published:
        root = published_files(repository)
    clone = (
        f"a clone of the book's repository, {repository} (`git clone {repository}`)"
        if repository
        else "a clone of the book's repository"
    )
    ways = []
    if wheel:
        ways.append(
            f"- from hwlib's wheel, offered beside this notebook on the book's site "
            f"([{wheel}]({root}{WHEEL_FOLDER}/{wheel})): download it, then `pip install {wheel}` "
            "(it brings numpy, pandas, matplotlib and ipywidgets; a chapter that measures your machine "
            'also needs `pip install "jax[cpu]"`);'
        )
    ways.append(
        f"- or from {clone}: `make lab` there installs everything into `.venv` and opens every chapter in "
        "JupyterLab with the numbers in the prose filled in."
    )
    return (
        f"**How to run this notebook.** This is a chapter of *{title}*, executed when the book was built. "
        "Its code calls the book's library, hwlib (`import hwlib as hw`): install it in your kernel's "
        "Python environment first,\n\n" + "\n".join(ways) + "\n\nThe numbers in this notebook's prose are "
        "those the book printed when it was built; running the cells computes them again, in the outputs."
        + (" " + COLAB_NOTE if published else "")
    )


def install_code(repository: str) -> str:
    """A downloaded chapter's first code cell: install hwlib from ``repository`` where the kernel lacks it (Colab)."""
    return (
        "# hwlib, the book's library, installed from its repository where this kernel lacks it (on Colab)\n"
        "import importlib.util, subprocess, sys\n\n"
        'if importlib.util.find_spec("hwlib") is None:\n'
        f'    package = "hwlib @ git+{repository}"\n'
        '    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", package])'
    )


def _add_install_cell(notebook_path: Path, pagename: str, wheel: str, repository: str, title: str) -> None:
    """Insert the install cell first in the notebook at ``notebook_path`` (a copy, never a source), and after it,
    where the repository is known, a code cell that installs hwlib from it if missing."""
    import nbformat

    notebook = nbformat.read(notebook_path, as_version=4)
    if notebook.cells and notebook.cells[0].get("id") == INSTALL_CELL_ID:
        return
    cells = [nbformat.v4.new_markdown_cell(install_text(pagename, wheel, repository, title))]
    cells[0]["id"] = INSTALL_CELL_ID
    if repository:
        cells.append(nbformat.v4.new_code_cell(install_code(repository)))
        cells[1]["id"] = INSTALL_CODE_ID
    notebook.cells[:0] = cells
    nbformat.write(notebook, notebook_path)


def _published_site(repository: str) -> tuple[str, str] | None:
    """(``org/repo``, its pages branch) where the site of a repository on GitHub is published; None elsewhere."""
    if not repository.startswith("https://github.com/"):
        return None
    org, repo = repository.removeprefix("https://github.com/").split("/")[:2]
    return f"{org}/{repo}", os.environ.get("BOOK_PAGES_BRANCH", PAGES_BRANCH)


def colab_url(repository: str, pagename: str) -> str:
    """Where Colab opens ``pagename``'s Colab copy: the published site's ``_colab/`` on its pages branch, for a
    repository on GitHub; "" for one elsewhere."""
    site = _published_site(repository)
    if site is None:
        return ""
    repo, branch = site
    return f"https://colab.research.google.com/github/{repo}/blob/{branch}/{COLAB_FOLDER}/{pagename}.ipynb"


def published_files(repository: str) -> str:
    """The published site's root, where Colab fetches a file the site offers (an image, the wheel): GitHub Pages'
    address for the repository, or BOOK_SITE_URL where the site has its own domain. Pages serves each file with its
    type, so an SVG shows as an image."""
    org, repo = _published_site(repository)[0].split("/")
    return os.environ.get("BOOK_SITE_URL", f"https://{org.lower()}.github.io/{repo}").rstrip("/") + "/"


def _offer_colab_copy(app, pagename: str, reading_copy: Path, repository: str, install: str) -> None:
    """Write the chapter's Colab copy, ``_colab/<page>.ipynb``: its reading copy with the Markdown plain
    (``tools/colab_copies.py``), numbered as the page is, its figures fetched from the published site, and
    ``install`` as its install text."""
    import nbformat

    notebook = _tool("colab_copies").plain_notebook(
        nbformat.read(reading_copy, as_version=4),
        published_files(repository) + IMAGE_FOLDER + "/",
        numbers=_shown_numbers(app, pagename),
        folder=(ROOT / pagename).parent,
        substitutions=getattr(app.config, "myst_substitutions", None),
    )
    for cell in notebook.cells:
        if cell.get("id") == INSTALL_CELL_ID:
            cell.source = install
    target = Path(app.outdir) / COLAB_FOLDER / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, target)


def _colab_button(app, pagename, templatename, context, doctree):
    """Add Colab beside Binder in the page's launch menu, opening the chapter's Colab copy (its reading copy, with
    the numbers filled in and the install cells, in the plain Markdown Colab renders) rather than its MyST source,
    which Colab cannot read."""
    url = colab_url(_repository_url(), pagename) if context.get("ipynb_source") else ""
    for group in context.get("header_buttons", []) if url else []:
        if group.get("label") == "launch-buttons":
            group["buttons"].append(
                {
                    "type": "link",
                    "text": "Colab",
                    "tooltip": "Launch on Colab",
                    "icon": "_static/images/logo_colab.png",
                    "url": url,
                }
            )


def _hwlib_sources() -> list[Path]:
    return [
        ROOT / "pyproject.toml",
        ROOT / "README.md",
        *(path for path in (ROOT / "hwlib").rglob("*") if path.is_file() and "__pycache__" not in path.parts),
    ]


def build_hwlib_wheel(folder: Path) -> str:
    """hwlib's wheel in ``folder`` (built from a clean copy of the package, again only when a source file is
    newer than it): its file name, or "" when it could not be built (with a warning)."""
    folder.mkdir(parents=True, exist_ok=True)
    built = sorted(folder.glob("hwlib-*.whl"))
    newest = max(path.stat().st_mtime for path in _hwlib_sources())
    if built and built[-1].stat().st_mtime >= newest:
        return built[-1].name
    with tempfile.TemporaryDirectory() as scratch:
        source, wheels = Path(scratch) / "hwlib-source", Path(scratch) / "wheels"
        shutil.copytree(ROOT / "hwlib", source / "hwlib", ignore=shutil.ignore_patterns("__pycache__"))
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(ROOT / name, source / name)
        try:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "wheel",
                    "--no-deps",
                    "--no-build-isolation",
                    "--quiet",
                    "--wheel-dir",
                    str(wheels),
                    str(source),
                ],
                check=True,
                capture_output=True,
                text=True,
            )
        except (OSError, subprocess.CalledProcessError) as error:
            from sphinx.util import logging

            logging.getLogger(__name__).warning(
                f"hwlib's wheel could not be built, so the notebooks do not offer it: "
                f"{getattr(error, 'stderr', '') or error}"
            )
            return ""
        for old in built:
            old.unlink()
        (wheel,) = wheels.glob("hwlib-*.whl")
        shutil.copy2(wheel, folder / wheel.name)
        return wheel.name


def _offer_wheel(app):
    if app.builder.format == "html":
        app.hwlib_wheel = build_hwlib_wheel(Path(app.outdir) / WHEEL_FOLDER)


def _wheel_in_download_menu(app, pagename, templatename, context, doctree):
    """The download menu of a chapter offers hwlib's wheel beside its notebook."""
    wheel = getattr(app, "hwlib_wheel", "")
    if not wheel or not context.get("ipynb_source"):
        return
    for group in context.get("header_buttons", []):
        if group.get("label") == "download-buttons":
            group["buttons"].insert(
                1,
                {
                    "type": "link",
                    "url": f"{context['pathto'](WHEEL_FOLDER, 1)}/{wheel}",
                    "text": ".whl (hwlib)",
                    "icon": "fas fa-box",
                    "label": "download-hwlib-button",
                    "tooltip": "hwlib, the book's library, to run the notebook: pip install this file",
                },
            )


def _built_pdf(app) -> Path:
    return Path(app.outdir).parent / "latex" / "book.pdf"


def _edition(app, config):
    """The book's version is hwlib's (``hwlib.__version__``, the one version of the package, the citation and the
    changelog): the PDF's title page prints it."""
    text = (ROOT / "hwlib" / "__init__.py").read_text(encoding="utf-8")
    config.version = config.release = re.search(r'^__version__ = "([^"]+)"', text, re.M).group(1)


def _note_pdf(app, config):
    pdf = _built_pdf(app)  # a value the HTML pages depend on: they are all written again when the PDF changes
    config.book_pdf = str(pdf.stat().st_mtime_ns) if pdf.exists() else ""


def _offer_pdf(app, pagename, templatename, context, doctree):
    if not app.config.book_pdf:
        return
    for group in context.get("header_buttons", []):
        if group.get("label") == "download-buttons":
            group["buttons"].append(
                {
                    "type": "link",
                    "url": context["pathto"]("book.pdf", 1),
                    "text": "book (PDF)",
                    "tooltip": "Download the whole book as a PDF",
                    "icon": "fas fa-book",
                    "label": "download-book-pdf-button",
                }
            )


def _copy_pdf(app, exception):
    if exception is None and app.builder.format == "html" and app.config.book_pdf:
        shutil.copy2(_built_pdf(app), Path(app.outdir) / "book.pdf")


def _shown_width(node) -> tuple[float, float]:
    """A table cell's printed width and its widest word, in characters of the text font (roughly): code is
    wider, math (its symbols, not its LaTeX source) narrower."""
    from docutils import nodes

    words, total = [0.0], 0.0
    for part in node.findall(lambda n: isinstance(n, (nodes.math, nodes.Text))):
        if isinstance(part, nodes.math):
            text, scale = (
                re.sub(r"[{}_^\\ ]", "", re.sub(r"\\[a-zA-Z]+", "x", re.sub(r"\\(mathrm|text)", "", part.astext()))),
                0.8,
            )
        elif isinstance(part.parent, nodes.math):
            continue
        else:
            text, scale = part.astext(), 1.3 if isinstance(part.parent, nodes.literal) else 1.0
        total += scale * len(text)
        words += [scale * len(word) for word in text.split()]
    return total, max(words)


def _bibliography_in_references(doctree):
    """Move the bibliography Sphinx gathers at the end of the PDF into the References appendix (label
    app-references), without a chapter of its own (hwbook.sty's \\hwbibliographyhere)."""
    from docutils import nodes
    from sphinx.builders.latex.nodes import thebibliography

    bibliography = next(iter(doctree.findall(thebibliography)), None)
    section = next(iter(doctree.findall(lambda n: isinstance(n, nodes.section) and "app-references" in n["ids"])), None)
    if bibliography is None or section is None:
        return
    bibliography.parent.remove(bibliography)
    section += [
        nodes.raw("", r"\begingroup\hwbibliographyhere", format="latex"),
        bibliography,
        nodes.raw("", r"\endgroup", format="latex"),
    ]


HTML_ONLY_PAGES = ("book/appendix/status",)
"""Pages of the HTML edition only: the build status describes the build that made the HTML pages, not the book."""
EXPLORER_NOTE = (
    "In this PDF the explorer below is printed as it first appears, at its default settings; in the HTML edition "
    "(with a live kernel) and in make lab's notebooks its controls redraw it."
)
"""What the PDF says above each chapter's explorers, whose controls a page cannot move."""


def _html_only_pages_left_out(doctree):
    """The PDF's one doctree without the pages of ``HTML_ONLY_PAGES`` (the LaTeX builder inlines every page)."""
    from sphinx import addnodes

    for page in list(doctree.findall(addnodes.start_of_file)):
        if page.get("docname") in HTML_ONLY_PAGES:
            page.parent.remove(page)


def _explorers_said_static(doctree):
    """A note at the head of each "Explore" section of the PDF (``EXPLORER_NOTE``)."""
    from docutils import nodes

    for section in list(doctree.findall(nodes.section)):
        title = section.next_node(nodes.title)
        if title is not None and title.parent is section and title.astext().rstrip(".").endswith("Explore"):
            note = nodes.paragraph("", "", nodes.emphasis("", EXPLORER_NOTE))
            section.insert(section.index(title) + 1, note)


def _tables_as_latex(app, doctree, docname):
    if app.builder.format != "latex":
        return
    from docutils import nodes

    from hwlib.viz.latex import LATEX_MARK, share_width

    for node in list(doctree.findall(nodes.math_block)):
        if node.astext().lstrip().startswith(LATEX_MARK):
            node.replace_self(nodes.raw("", node.astext(), format="latex"))
    for image in doctree.findall(nodes.image):  # a notebook's figures at the width of the page
        path = Path(app.srcdir, image["uri"]).resolve()
        if "jupyter_execute" in path.parts and path.suffix == ".png" and not {"width", "scale"} & set(image):
            from PIL import Image

            with Image.open(path) as png:
                if png.height <= 0.85 * png.width:
                    image["width"] = "100%"
                else:  # a tall one as tall as leaves room for its caption
                    image["height"] = "14cm"
    _bibliography_in_references(doctree)
    _html_only_pages_left_out(doctree)
    _explorers_said_static(doctree)
    for table in doctree.findall(nodes.table):  # Sphinx would set a long table's columns on one line each
        rows, colspecs = list(table.findall(nodes.row)), list(table.findall(nodes.colspec))
        if len(rows) > 30 and "colwidths-given" not in table["classes"]:
            sizes = [[_shown_width(entry) for entry in row.children[: len(colspecs)]] for row in rows]
            natural = {j: max(row[j][0] for row in sizes if j < len(row)) + 3 for j in range(len(colspecs))}
            least = {
                j: max(max(row[j][1] for row in sizes if j < len(row)), 3) + 4 for j in range(len(colspecs))
            }  # characters, with 3-4 for the space between columns
            width = share_width(least, natural, 100 - sum(least.values()))
            for j, colspec in enumerate(colspecs):
                colspec["colwidth"] = max(round(10 * width[j]), 1)
            table["classes"].append("colwidths-given")


HASHED_NAME = re.compile(r"(?:.*/)?[0-9a-f]{32,}\.\w+")


def _describe_figures(app, doctree, docname):
    """A notebook figure has no alt text, so the page shows its hashed file name; give it the figure's caption."""
    from docutils import nodes

    for image in doctree.findall(nodes.image):
        if not HASHED_NAME.fullmatch(image.get("alt") or image.get("uri", "")):
            continue
        figure = next((n for n in _ancestors(image) if isinstance(n, nodes.figure)), None)
        caption = next(iter(figure.findall(nodes.caption)), None) if figure is not None else None
        image["alt"] = " ".join(caption.astext().split()) if caption is not None else "A figure computed by hwlib"


def _ancestors(node):
    while node.parent is not None:
        node = node.parent
        yield node


def _repository_url() -> str:
    """The `origin` remote as an https URL, or "" when there is none."""
    try:
        url = subprocess.run(
            ["git", "remote", "get-url", "origin"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""
    url = re.sub(r"^git@([^:]+):", r"https://\1/", url).removesuffix(".git")
    return url if url.startswith("https://") else ""


def _repository_buttons(app, config):
    url = _repository_url()
    link = f"[the repository]({url})" if url else "the repository"
    config.myst_substitutions = {**config.myst_substitutions, "repository": link}
    if not url:
        return
    config.html_theme_options.update(
        repository_url=url,
        repository_branch="main",
        path_to_docs="",
        use_repository_button=True,
        use_issues_button=True,
        launch_buttons={
            "notebook_interface": "jupyterlab",
            "binderhub_url": "https://mybinder.org",
            "jupyterhub_url": os.environ.get("BOOK_JUPYTERHUB_URL", ""),
        },
    )


def setup(app):
    app.config.html_static_path.extend(
        [
            str(ROOT / "web" / "static"),
            str(ROOT / "web" / "js"),
            str(ROOT / "web" / "css"),
            str(ROOT / "book" / "_static"),
        ]
    )
    app.add_css_file("book.css")
    app.add_css_file("layout.css")  # book/_static: wide tables, equations and code on a wide screen and a phone
    app.add_js_file(None, priority=100, body=REQUIRE_CONFIG)
    app.add_js_file("mathjax2-hub-shim.js", priority=600, defer="defer")
    app.connect("html-page-context", _drop_repeated_scripts, priority=900)
    app.connect("html-page-context", _offer_notebook, priority=500)
    app.connect("builder-inited", _offer_wheel)
    app.connect("html-page-context", _wheel_in_download_menu, priority=502)
    app.connect("html-page-context", _offer_notebook_again, priority=502)  # after the theme's launch menu (501)
    app.connect("html-page-context", _colab_button, priority=502)
    app.connect("config-inited", _repository_buttons)
    app.connect("doctree-resolved", _tables_as_latex)
    app.connect("doctree-resolved", _describe_figures)
    app.add_config_value("book_pdf", "", "html")
    app.connect("config-inited", _note_pdf)
    app.connect("config-inited", _edition)
    app.connect("html-page-context", _offer_pdf, priority=502)
    app.connect("build-finished", _copy_pdf)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
