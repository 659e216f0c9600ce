"""WSGI entry point (gunicorn annotator.wsgi)."""
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotator.settings")
application = get_wsgi_application()
