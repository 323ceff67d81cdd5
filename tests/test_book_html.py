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
    config = types.SimpleNamespace(html_theme_options={})
    _origin(monkeypatch, "/work/main")
    book_html._repository_buttons(None, config)
    assert config.html_theme_options == {}
    _origin(monkeypatch, "git@github.com:org/book.git")
    monkeypatch.setenv("BOOK_JUPYTERHUB_URL", "https://hub.example.edu")
    book_html._repository_buttons(None, config)
    options = config.html_theme_options
    assert options["repository_url"] == "https://github.com/org/book" and options["use_repository_button"]
    assert options["launch_buttons"]["binderhub_url"] and options["launch_buttons"]["jupyterhub_url"] == "https://hub.example.edu"
