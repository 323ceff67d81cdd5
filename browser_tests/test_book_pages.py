"""Open every page of the built book in headless Chromium and check what a reader sees.

Run after the book is built (`make test` does both): `pytest browser_tests`. Each page is served
from _build/html on 127.0.0.1 and loaded once, in one browser, and every check below reads that one
load: it must come with no JavaScript error and no request to any other host (the book works
offline; Chromium resolves no other host name); figures load, math is typeset, widgets render from
their saved state, explorers say they are saved and fit the page (and, with the same page narrowed
to 390 px, a phone), solutions stay folded until clicked, glued numbers are present and internal
links resolve; display equations, tables and code fit or scroll at 1200 px and at 390 px (the page
never scrolls sideways) and captions have WCAG AA contrast in light and dark mode. A full-page
screenshot of each page, taken as it loads, goes to _build/screenshots/.

Without Chromium (Debian's `chromium` package) or Playwright these tests are skipped with one
message, except under CI=true, where a missing browser fails the run.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import threading
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = Path(os.environ.get("BOOK_HTML", ROOT / "_build" / "html"))
SCREENSHOTS = SITE.parent / "screenshots"
BROWSER_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-sync",
    "--disable-background-networking",
    "--disable-component-update",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",  # offline: no other host resolves
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
        self.page.on("request", self._note_outside)
        self.url = urljoin(site_url, page_path)
        self.page.goto(self.url, wait_until="networkidle")
        self.page.wait_for_function("!window.MathJax || !MathJax.startup || MathJax.startup.promise")
        self.page.evaluate("window.MathJax && MathJax.startup ? MathJax.startup.promise : null")
        if self.page.locator(".hw-explorer").count():
            self.page.wait_for_selector(".hw-explorer img", timeout=15_000)

    def _note_outside(self, request):
        url = request.url
        if urlparse(url).hostname not in ("127.0.0.1", None) and not url.startswith(("data:", "blob:")):
            self.outside.append(url)


@pytest.fixture(scope="module", params=PAGES or ["(none)"])
def visit(request, browser, site_url):
    """The page, loaded once for all the checks below (they run in the order of this file); its screenshot is
    taken before any check clicks or narrows it."""
    page_visit = PageVisit(browser, site_url, request.param)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page_visit.page.screenshot(
        path=SCREENSHOTS / f"{_name(request.param)}.png", full_page=True, animations="disabled", timeout=120_000
    )  # the API appendix is some 100,000 px tall
    yield page_visit
    page_visit.page.close()


def _name(page_path: str) -> str:
    return page_path.removesuffix(".html").replace("/", "_")


@functools.cache
def _html(target: Path) -> str:
    return target.read_text(encoding="utf-8")


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
            if f'id="{parsed.fragment}"' not in _html(target):
                missing.append(href)
    assert missing == []


SOURCE_MENTIONS = re.compile(
    r"doc00\d|document\s+00\d|source\s+documents?|TPU\s+budgeting\s+notebook|memory-wall\s+script"
    r"|[0-9a-f]{16}\.txt",
    re.IGNORECASE,
)


def test_chapters_mention_the_source_documents_only_in_asides(visit):
    """A chapter teaches from real models and chips; the two source documents appear only in its boxed asides."""
    if "/appendix/" in visit.url:
        pytest.skip("the appendices may name the source documents")
    text = visit.page.evaluate("""() => {
        const article = document.querySelector("article").cloneNode(true);
        article.querySelectorAll(".source-aside, .prev-next-area").forEach(node => node.remove());
        return article.textContent;
    }""")
    mentions = sorted({match.group(0) for match in SOURCE_MENTIONS.finditer(text)})
    assert mentions == [], f"mentions of the source documents outside asides: {mentions}"


def test_a_downloaded_notebook_says_first_how_to_install_hwlib(visit):
    """The .ipynb in the download menu opens with a cell on installing hwlib; its wheel link resolves in the site."""
    import io
    import json
    import zipfile

    links = visit.page.locator('.dropdown-download-buttons a[href$=".ipynb"]')
    if links.count() == 0:
        pytest.skip("this page offers no notebook")
    notebook_url = links.first.evaluate("a => a.href")
    response = visit.page.request.get(notebook_url)
    assert response.ok, notebook_url
    cells = json.loads(response.body())["cells"]
    first = cells[0]
    assert any(cell.get("outputs") for cell in cells if cell["cell_type"] == "code"), "the notebook has no outputs"
    text = "".join(first["source"])
    assert first["cell_type"] == "markdown" and "How to run this notebook" in text and "make lab" in text
    wheel = text.split("](")[1].split(")")[0]
    assert wheel.endswith(".whl") and f"pip install {wheel.rsplit('/', 1)[-1]}" in text
    download = visit.page.request.get(urljoin(notebook_url, wheel))
    assert download.ok, urljoin(notebook_url, wheel)
    assert "hwlib/__init__.py" in zipfile.ZipFile(io.BytesIO(download.body())).namelist()
    menu = visit.page.locator('.dropdown-download-buttons a[href$=".whl"]')
    assert menu.count() == 1 and menu.first.evaluate("a => a.href") == urljoin(notebook_url, wheel)


# --- the explorers on a static page: honest, and fitting a phone ---

FITS = """root => {
  // every part inside the explorer's box, no read-out or label cut off, every dropdown label shown whole
  const problems = [], box = root.getBoundingClientRect(), measure = document.createElement("canvas").getContext("2d");
  for (const el of root.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width && r.height && (r.right > box.right + 1 || r.left < box.left - 1))
      problems.push(`${el.className || el.tagName} reaches ${Math.round(r.left)}..${Math.round(r.right)} px`);
  }
  for (const el of root.querySelectorAll(".widget-readout, .widget-label"))
    if (el.scrollWidth > el.clientWidth + 1) problems.push(`cut off: "${el.textContent}"`);
  for (const select of root.querySelectorAll("select")) {
    const style = getComputedStyle(select);
    measure.font = `${style.fontSize} ${style.fontFamily}`;
    const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    for (const option of select.options)
      if (measure.measureText(option.text).width > room) problems.push(`dropdown cuts "${option.text}"`);
  }
  if (box.right > window.innerWidth) problems.push(`explorer reaches ${box.right} px of ${window.innerWidth}`);
  return problems;
}"""


PHONE = {"width": 390, "height": 900}


def _explorers(visit: PageVisit):
    explorers = visit.page.locator(".hw-explorer")
    if explorers.count() == 0:
        pytest.skip("no explorer on this page")
    return explorers


def test_explorers_say_they_are_saved_and_offer_no_control_that_pretends(visit):
    explorers = _explorers(visit)
    for index in range(explorers.count()):
        explorer = explorers.nth(index)
        note = explorer.locator(".hw-explorer-note").text_content()
        assert "do not recompute" in note and "make lab" in note and "greyed out" in note
        assert explorer.evaluate(FITS) == [], f"explorer {index}"
        assert explorer.evaluate("""e => Array.from(e.querySelectorAll("select, input, button, textarea"))
                                         .every(c => c.disabled)""")
        assert explorer.evaluate("""e => Array.from(e.querySelectorAll(".widget-slider .noUi-target"))
                                         .every(s => s.hasAttribute("disabled"))""")
        assert explorer.evaluate("""e => Array.from(e.querySelectorAll(".widget-readout"))
                                         .every(r => r.contentEditable !== "true")""")
        handle = explorer.locator(".noUi-handle").first
        if handle.count():  # dragging a slider moves nothing
            readouts = explorer.locator(".widget-readout").all_text_contents()
            handle.scroll_into_view_if_needed()
            box = handle.bounding_box()
            visit.page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            visit.page.mouse.down()
            visit.page.mouse.move(box["x"] + 80, box["y"] + box["height"] / 2, steps=5)
            visit.page.mouse.up()
            assert explorer.locator(".widget-readout").all_text_contents() == readouts


def test_solutions_are_folded_until_clicked(visit):
    """Runs after the checks that read the page as it loaded: it opens the solutions."""
    solutions = visit.page.locator("div.solution.dropdown")
    if solutions.count() == 0:
        pytest.skip("no exercise solutions on this page")
    for index in range(solutions.count()):
        solution = solutions.nth(index)
        body = solution.locator("section").first
        assert not body.is_visible(), f"solution {index} is open before a click"
        solution.locator(".admonition-title").click()
        body.wait_for(state="visible", timeout=5_000)


# --- wide content at a desktop's width and a phone's: it fits or scrolls, never cut off or off the page ---

WIDTHS = {"desktop": {"width": 1200, "height": 900}, "phone": PHONE}
WIDE_CONTENT = """() => {
  // each display equation, table and code block: it fits its container, or an element around it (inside the
  // article, itself inside the article's column) scrolls sideways; and the page itself does not scroll sideways
  const problems = [], article = document.querySelector("article"), column = article.getBoundingClientRect();
  const describe = el => {
    const labelled = el.closest("[id]");
    const caption = el.querySelector(":scope > caption");
    return `${el.tagName.toLowerCase()}${labelled ? " in #" + labelled.id : ""}` +
           `${caption ? ' "' + caption.textContent.trim().slice(0, 50) + '"' : ""}`;
  };
  const scroller = el => {
    for (let node = el; node && node !== article; node = node.parentElement)
      if (["auto", "scroll"].includes(getComputedStyle(node).overflowX)) return node;
    return null;
  };
  const items = [
    ...Array.from(article.querySelectorAll("mjx-container[display]"), el => [el, el.querySelector("mjx-math") || el]),
    ...Array.from(article.querySelectorAll("table, pre"), el => [el, el]),
  ];
  for (const [el, content] of items) {
    const box = el.getBoundingClientRect();
    if (!box.width) continue;  // not shown (an unopened dropdown)
    const width = Math.max(content.getBoundingClientRect().width, el.scrollWidth);
    const around = scroller(el);
    if (around) {
      const r = around.getBoundingClientRect();
      if (r.left < column.left - 1 || r.right > column.right + 1)
        problems.push(`${describe(el)}: scrolls in a box at ${Math.round(r.left)}..${Math.round(r.right)} px, ` +
                      `outside the column ${Math.round(column.left)}..${Math.round(column.right)} px`);
    } else if (width > el.parentElement.clientWidth + 1 || box.right > column.right + 1) {
      problems.push(`${describe(el)}: ${Math.round(width)} px wide in ${el.parentElement.clientWidth} px ` +
                    "that does not scroll");
    }
  }
  const page = document.scrollingElement.scrollWidth;
  if (page > window.innerWidth + 1) problems.push(`the page scrolls sideways: ${page} px in ${window.innerWidth} px`);
  return problems;
}"""


@pytest.mark.parametrize("width", WIDTHS)
def test_wide_equations_tables_and_code_fit_or_scroll(visit, width):
    """At 1200 px and at 390 px, with every dropdown open: no display equation, table or code block is wider
    than its container unless that container scrolls sideways (inside the text's column), and the page does not
    scroll sideways. Runs after the solutions are opened."""
    visit.page.evaluate("document.querySelectorAll('article details').forEach(d => d.open = true)")
    visit.page.set_viewport_size(WIDTHS[width])
    try:
        problems = visit.page.evaluate(WIDE_CONTENT)
    finally:
        visit.page.set_viewport_size({"width": 1280, "height": 900})
    assert problems == [], f"at {WIDTHS[width]['width']} px: {problems}"


LAPTOP_WIDTHS = (1200, 1300)
"""Windows of a laptop, where both sidebars are shown beside the text."""
CODE_CELLS_THAT_SCROLL = """() => Array.from(document.querySelectorAll("article div.cell_input pre"))
  .filter(pre => pre.getBoundingClientRect().width && pre.scrollWidth > pre.clientWidth + 1)
  .map(pre => `${pre.closest("[id]") ? "#" + pre.closest("[id]").id + ": " : ""}` +
              pre.textContent.split("\\n").reduce((a, b) => (b.length > a.length ? b : a), "").slice(0, 60))"""


@pytest.mark.parametrize("width", LAPTOP_WIDTHS)
def test_code_cells_fit_the_column_on_a_laptop(visit, width):
    """At 1200 and 1300 px, beside both sidebars, every code cell (at most 80 characters a line) fits the text's
    column: none scrolls sideways."""
    visit.page.set_viewport_size({"width": width, "height": 900})
    try:
        scrolling = visit.page.evaluate(CODE_CELLS_THAT_SCROLL)
    finally:
        visit.page.set_viewport_size({"width": 1280, "height": 900})
    assert scrolling == [], f"at {width} px these code cells scroll sideways: {scrolling}"


CAPTION_CONTRAST = r"""() => {
  // WCAG contrast of each caption's text (figures, tables, code) against the background it is drawn on
  const rgba = c => { const m = c.match(/rgba?\(([^)]*)\)/); if (!m) return null;
    const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const over = (top, under) => [0, 1, 2].map(i => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
  const luminance = rgb => rgb.slice(0, 3).map(v => (v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)
                                .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  const background = el => {
    const layers = [];
    for (let node = el; node; node = node.parentElement) {
      const colour = rgba(getComputedStyle(node).backgroundColor);
      if (colour && colour[3] > 0) { layers.push(colour); if (colour[3] >= 1) break; }
    }
    return layers.reverse().reduce((under, layer) => over(layer, under), [255, 255, 255, 1]);
  };
  const found = [];
  for (const caption of document.querySelectorAll("article :is(figcaption, caption, .caption, .code-block-caption)"))
    for (const el of [caption, ...caption.querySelectorAll("*:not(.headerlink):not(.headerlink *)")]) {
      if (!Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim()) || !el.getClientRects().length)
        continue;
      const style = getComputedStyle(el), under = background(el);
      let colour = rgba(style.color);
      colour = over([...colour.slice(0, 3), colour[3] * Number(style.opacity)], under);
      const [light, dark] = [luminance(colour), luminance(under)].sort((a, b) => b - a);
      found.push({text: el.textContent.trim().slice(0, 50), ratio: (light + 0.05) / (dark + 0.05)});
    }
  return found;
}"""


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_captions_have_enough_contrast(visit, mode):
    """Every figure and table caption's text has at least WCAG AA's 4.5:1 contrast with its background, in the
    theme's light mode and its dark mode."""
    before = visit.page.evaluate("document.documentElement.dataset.theme")
    visit.page.evaluate(f"document.documentElement.dataset.theme = '{mode}'")
    try:
        captions = visit.page.evaluate(CAPTION_CONTRAST)
    finally:
        visit.page.evaluate(f"document.documentElement.dataset.theme = '{before}'")
    if not captions:
        pytest.skip("no caption on this page")
    low = [(c["text"], round(c["ratio"], 2)) for c in captions if c["ratio"] < 4.5]
    assert low == [], f"captions under 4.5:1 in {mode} mode: {low}"


def test_explorers_fit_a_phone_screen(visit):
    """Runs last for each page: the page narrowed to 390 px (a phone), each explorer fits the screen: nothing
    sticks out or is cut off, and each dropdown (its description above it there) shows its longest option
    whole. A screenshot of each explorer goes to screenshots/phone/."""
    explorers = _explorers(visit)
    visit.page.set_viewport_size(PHONE)
    (SCREENSHOTS / "phone").mkdir(parents=True, exist_ok=True)
    name = _name(urlparse(visit.url).path.lstrip("/"))
    for index in range(explorers.count()):
        explorer = explorers.nth(index)
        explorer.scroll_into_view_if_needed()
        explorer.screenshot(path=SCREENSHOTS / "phone" / f"{name}_explorer_{index}.png")
        assert explorer.evaluate(FITS) == [], f"explorer {index}"
