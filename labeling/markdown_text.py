"""A lead's Markdown (project instructions and description) as HTML that is safe in a page.

One renderer for the workspace's instructions (labeling/api/work_serializers.py) and the home
page's project cards (labeling/web/pages.py). Raw HTML in the text is shown as text, not as
markup (a description that says ``<img onerror=...>`` shows those characters), and nh3 cleans
what Markdown made, a second guard (scripts, event handlers, ``javascript:`` links). Math stays
as text here: the browser draws it (frontend/src/workspace/instructions.js).
"""
import functools

import markdown
import nh3


class _TextOnlyHtml(markdown.Extension):
    """Markdown without its raw-HTML passthrough: an HTML block or tag is escaped like any text."""

    def extendMarkdown(self, md):
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")


@functools.lru_cache(maxsize=64)
def render_markdown(text):
    """Markdown to HTML that is safe to insert into a page.

    Cached by text: a project's instructions go out with every assignment, and rendering them costs
    more than the rest of the payload.
    """
    return nh3.clean(markdown.markdown(text or "", extensions=["sane_lists", _TextOnlyHtml()]))
