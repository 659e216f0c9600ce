"""The web process stays free of the model stack (and of the LLM judge's client, which only a worker calls)."""
import json
import os
import subprocess
import sys

from tests.conftest import ROOT

PROBE = """
import json, sys, django
django.setup()
import annotator.wsgi, annotator.urls
from django.urls import get_resolver
get_resolver().url_patterns  # resolve every include
print(json.dumps(sorted(m for m in ("torch", "transformers", "openai") if m in sys.modules)))
"""


def test_web_process_never_imports_torch_transformers_or_openai():
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="annotator.settings")
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
