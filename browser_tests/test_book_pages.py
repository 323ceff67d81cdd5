"""Open every page of the built book in headless Chromium and check what a reader sees.

Run after the book is built (`make test` does both): `pytest browser_tests`. Each page
is served from _build/html on 127.0.0.1 and must load with no JavaScript error and no
request to any other host (the book works offline); figures load, math is typeset,
widgets render from their saved state, solutions stay folded until clicked, glued
numbers are present and internal links resolve. A full-page screenshot of each page is
written to _build/screenshots/ for a person to look at.

Without Chromium (Debian's `chromium` package) or Playwright these tests are skipped
with a message, except under CI=true, where a missing browser fails the run.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = Path(os.environ.get("BOOK_HTML", ROOT / "_build" / "html"))
SCREENSHOTS = SITE.parent / "screenshots"
BROWSER_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
    "--disable-background-networking", "--disable-component-update",
]
PAGES = sorted(path.relative_to(SITE).as_posix() for path in (SITE / "book").rglob("*.html"))


def _unavailable(reason: str):
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: the browser tests must run)", pytrace=False)
    pytest.skip(reason)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def site_url():
    if not PAGES:
        _unavailable(f"no built book in {SITE}: run `make book` first")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(SITE)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.fixture(scope="session")
def browser():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        _unavailable("Chromium is not installed: `apt-get install chromium` to run the browser tests")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright is not installed: `pip install -r requirements.txt`")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=BROWSER_ARGS)
        yield browser
        browser.close()


class PageVisit:
    """One page loaded in a fresh browser tab, with what went wrong while loading."""

    def __init__(self, browser, site_url: str, page_path: str):
        self.errors: list[str] = []
        self.outside: list[str] = []
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))
        self.page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        self.page.on("response", lambda r: r.status >= 400 and self.errors.append(f"HTTP {r.status} {r.url}"))
        self.page.route("**/*", self._only_local)
        self.url = urljoin(site_url, page_path)
        self.page.goto(self.url, wait_until="networkidle")
        self.page.wait_for_function("!window.MathJax || !MathJax.startup || MathJax.startup.promise")
        self.page.evaluate("window.MathJax && MathJax.startup ? MathJax.startup.promise : null")

    def _only_local(self, route):
        url = route.request.url
        if urlparse(url).hostname in ("127.0.0.1", None) or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()


@pytest.fixture(scope="module", params=PAGES or ["(none)"])
def visit(request, browser, site_url):
    page_visit = PageVisit(browser, site_url, request.param)
    yield page_visit
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    name = request.param.removesuffix(".html").replace("/", "_")
    page_visit.page.screenshot(path=SCREENSHOTS / f"{name}.png", full_page=True)
    page_visit.page.close()


def _source_of(visit: PageVisit) -> str:
    path = ROOT / urlparse(visit.url).path.lstrip("/").removesuffix(".html")
    return path.with_suffix(".md").read_text(encoding="utf-8")


def test_page_loads_offline_without_errors(visit):
    assert visit.outside == [], f"requests to other hosts: {visit.outside}"
    assert visit.errors == [], f"errors in the browser: {visit.errors}"


def test_figures_load(visit):
    broken = visit.page.eval_on_selector_all(
        "article img", "images => images.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)"
    )
    assert broken == []


def test_math_is_typeset(visit):
    if visit.page.locator("article .math").count() == 0:
        pytest.skip("no math on this page")
    assert visit.page.locator("article mjx-container").count() > 0
    untypeset = visit.page.eval_on_selector_all(
        "article .math", "nodes => nodes.filter(n => !n.querySelector('mjx-container')).map(n => n.textContent)"
    )
    assert untypeset == []


def test_widgets_render_from_saved_state(visit):
    views = visit.page.locator('script[type="application/vnd.jupyter.widget-view+json"]').count()
    if views == 0:
        pytest.skip("no widget on this page")
    visit.page.wait_for_selector(".jupyter-widgets", timeout=10_000)
    assert visit.page.locator(".widget-slider, .widget-dropdown").count() > 0
    pictures = visit.page.locator(".jupyter-widgets img")
    for index in range(pictures.count()):
        assert pictures.nth(index).evaluate("i => i.complete && i.naturalWidth > 0")
    # an explorer on a static page says that its controls do not recompute, and how to run it live
    notes = visit.page.locator(".jupyter-widgets", has_text="the controls do not recompute").count()
    assert notes > 0 and visit.page.get_by_text("make lab").count() > 0


def test_glued_numbers_are_present(visit):
    uses_glue = "{glue:" in _source_of(visit)
    pasted = visit.page.locator("span.pasted-text")
    if not uses_glue:
        pytest.skip("this page glues no numbers")
    assert pasted.count() > 0
    empty = pasted.evaluate_all("spans => spans.filter(s => !s.textContent.trim()).length")
    assert empty == 0


def test_internal_links_resolve(visit):
    hrefs = visit.page.eval_on_selector_all("a[href]", "links => links.map(a => a.href)")
    missing = []
    for href in hrefs:
        parsed = urlparse(href)
        if parsed.hostname != "127.0.0.1":
            continue
        target = SITE / unquote(parsed.path).lstrip("/")
        if target.is_dir():
            target = target / "index.html"
        if not target.exists():
            missing.append(href)
        elif parsed.fragment and target.suffix == ".html":
            if f'id="{parsed.fragment}"' not in target.read_text(encoding="utf-8"):
                missing.append(href)
    assert missing == []


def test_solutions_are_folded_until_clicked(visit):
    """Runs last for each page: it opens the solutions."""
    solutions = visit.page.locator("div.solution.dropdown")
    if solutions.count() == 0:
        pytest.skip("no exercise solutions on this page")
    for index in range(solutions.count()):
        solution = solutions.nth(index)
        body = solution.locator("section").first
        assert not body.is_visible(), f"solution {index} is open before a click"
        solution.locator(".admonition-title").click()
        body.wait_for(state="visible", timeout=5_000)
