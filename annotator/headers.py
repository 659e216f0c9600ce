"""The Content-Security-Policy header on every response (settings.SECURE_CSP).

Why not django-csp: Stepmark needs one fixed policy and no nonces, and the header goes on
every request of the annotator loop; django-csp builds the header anew for each response, this
writes a string built once (docs/performance.md#the-web-server-gunicornconfpy). Django 6.0's
ContentSecurityPolicyMiddleware reads the same setting in the same form, so upgrading Django
means swapping this class for that one.
"""
from django.conf import settings

HEADER = "Content-Security-Policy"


def policy(directives):
    """``{"script-src": ["'self'"], ...}`` as a header value."""
    return "; ".join(" ".join([name, *sources]) for name, sources in directives.items())


class ContentSecurityPolicyMiddleware:
    """Adds ``SECURE_CSP`` to each response that does not set its own policy."""

    def __init__(self, get_response):
        self.get_response = get_response
        self.header = policy(settings.SECURE_CSP)

    def __call__(self, request):
        response = self.get_response(request)
        if self.header and HEADER not in response:
            response[HEADER] = self.header
        return response
