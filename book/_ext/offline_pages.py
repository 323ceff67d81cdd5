"""Sphinx extension: pages that work offline and load each script once.

- Serves the book's own copies of MathJax, require.js and the widget manager (copied
  from npm into web/static by `make`), points require.js at them (so the manager finds
  its modules and fonts there, whatever the page's depth), and adds a shim that lets
  the widget manager talk to MathJax 3.
- Drops repeated inline scripts: sphinx-thebe's configuration script is added twice
  under Sphinx 7 ("Identifier 'THEBE_JS_URL' has already been declared" in the browser).
"""

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


def setup(app):
    app.config.html_static_path.extend([str(ROOT / "web" / "static"), str(ROOT / "web" / "js")])
    app.add_js_file(None, priority=100, body=REQUIRE_CONFIG)
    app.add_js_file("mathjax2-hub-shim.js", priority=600, defer="defer")
    app.connect("html-page-context", _drop_repeated_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
