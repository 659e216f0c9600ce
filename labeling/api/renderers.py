"""The browsable API's HTML renderer, fit for the site's Content-Security-Policy.

DRF's page puts the colours of highlighted code in an inline ``<style>`` element when Pygments
is installed, and the policy (annotator/settings.py SECURE_CSP) allows no inline style: code
in the views' descriptions shows uncoloured instead of the browser reporting a violation.
"""
from rest_framework import renderers


class BrowsableAPIRenderer(renderers.BrowsableAPIRenderer):
    def get_context(self, *args, **kwargs):
        context = super().get_context(*args, **kwargs)
        context["code_style"] = None
        return context
