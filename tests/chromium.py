"""The Chromium the browser tests drive (Playwright), with the flags every launch uses.

``tests/conftest.py`` launches one per test process, the first time a test asks for it, and
closes it when the process ends: a launch costs about 1.5 s of CPU in Chromium and as much again
in Playwright's driver on the 2-core machine, and each test gets a fresh browser context (its own
cookies and storage) all the same. ``bench/key_latency.py`` launches its own with these flags.
"""
import shutil

ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run",
]


def path():
    return shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
