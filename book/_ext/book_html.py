"""Sphinx extension: what the book's HTML pages need beyond Jupyter Book's defaults.

- Offline: serves the book's own copies of MathJax, require.js and the widget manager
  (copied from npm into web/static by `make`), points require.js at them (so the manager
  finds its modules and fonts there, whatever the page's depth), and adds a shim that lets
  the widget manager talk to MathJax 3.
- One copy of each script: sphinx-thebe's configuration script is added twice under
  Sphinx 7 ("Identifier 'THEBE_JS_URL' has already been declared" in the browser).
- Notebook downloads: each chapter's executed notebook is copied next to its source so
  that the download menu offers ".ipynb" beside ".md" (the theme does this only when
  launch buttons are configured).
- Repository link and launch buttons, configured for the repository the book is built
  from: its `origin` remote, when that is a web URL (a local clone has none, and then no
  such buttons). Binder runs the chapters from requirements.txt; a JupyterHub button
  appears when BOOK_JUPYTERHUB_URL names the hub.
"""

import os
import re
import shutil
import subprocess
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
    context["ipynb_source"] = f"{pagename}.ipynb"


def _repository_url() -> str:
    """The `origin` remote as an https URL, or "" when there is none."""
    try:
        url = subprocess.run(["git", "remote", "get-url", "origin"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""
    url = re.sub(r"^git@([^:]+):", r"https://\1/", url).removesuffix(".git")
    return url if url.startswith("https://") else ""


def _repository_buttons(app, config):
    url = _repository_url()
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
    app.config.html_static_path.extend([str(ROOT / "web" / "static"), str(ROOT / "web" / "js"), str(ROOT / "web" / "css")])
    app.add_css_file("book.css")
    app.add_js_file(None, priority=100, body=REQUIRE_CONFIG)
    app.add_js_file("mathjax2-hub-shim.js", priority=600, defer="defer")
    app.connect("html-page-context", _drop_repeated_scripts, priority=900)
    app.connect("html-page-context", _offer_notebook, priority=500)
    app.connect("config-inited", _repository_buttons)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
