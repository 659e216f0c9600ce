"""How the API picks and draws its answers: the browsable API's HTML renderer, fit for the site's
Content-Security-Policy, and a negotiation for views whose ``?format=`` means something else.

DRF's page puts the colours of highlighted code in an inline ``<style>`` element when Pygments
is installed, and the policy (annotator/settings.py SECURE_CSP) allows no inline style: code
in the views' descriptions shows uncoloured instead of the browser reporting a violation.
"""
from rest_framework import renderers
from rest_framework.negotiation import DefaultContentNegotiation


class BrowsableAPIRenderer(renderers.BrowsableAPIRenderer):
    def get_context(self, *args, **kwargs):
        context = super().get_context(*args, **kwargs)
        context["code_style"] = None
        return context


class IgnoreFormatParameter(DefaultContentNegotiation):
    """The view's first renderer, whatever ``?format=`` or ``Accept`` says.

    ``?format=`` names the export format (exports.py) or JSON or CSV (dashboard.py) there, not
    DRF's renderer override; a file download is the answer whatever the Accept header asks for.
    """

    def select_renderer(self, request, available, format_suffix=None):
        return available[0], available[0].media_type
