"""``{% vite_assets "src/main.js" %}``: the tags that load one built frontend entry.

Vite writes hashed file names and lists them in ``frontend/dist/.vite/manifest.json``; this
tag reads that manifest so templates name the source entry and get the current build.
"""
import json
from functools import lru_cache
from pathlib import Path

from django import template
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.templatetags.static import static
from django.utils.html import format_html, format_html_join

register = template.Library()

MANIFEST = Path(settings.BASE_DIR) / "frontend" / "dist" / ".vite" / "manifest.json"


def load_manifest():
    """The parsed manifest; re-read on every call in DEBUG so a rebuild shows at once."""
    if settings.DEBUG:
        return _read_manifest()
    return _cached_manifest()


@lru_cache(maxsize=1)
def _cached_manifest():
    return _read_manifest()


def _read_manifest():
    try:
        return json.loads(MANIFEST.read_text())
    except FileNotFoundError:
        raise ImproperlyConfigured(
            f"The frontend is not built ({MANIFEST} is missing): run `make frontend`."
        ) from None


def entry_files(entry):
    """``(css_files, js_file)`` for a manifest entry such as ``"src/main.js"``."""
    manifest = load_manifest()
    try:
        chunk = manifest[entry]
    except KeyError:
        raise ImproperlyConfigured(f"{entry!r} is not an entry of {MANIFEST}") from None
    css = list(chunk.get("css", []))
    # CSS of statically imported chunks belongs to the page too.
    for name in chunk.get("imports", []):
        css.extend(manifest.get(name, {}).get("css", []))
    return css, chunk["file"]


@register.simple_tag
def vite_assets(entry):
    css, js = entry_files(entry)
    links = format_html_join("", '<link rel="stylesheet" href="{}">', ((static(f),) for f in css))
    return links + format_html('<script type="module" src="{}"></script>', static(js))
