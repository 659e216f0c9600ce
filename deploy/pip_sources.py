"""The package sources pip is configured with, written as uv's options (``make venv``).

``make venv`` installs with uv, which reads its own settings and not pip's (pip.conf, the
``PIP_*`` variables). On a machine whose pip is pointed at local wheels, a mirror or a
constraints file, uv would otherwise go to PyPI alone and resolve differently. This prints, one
a line, the options that hand uv what pip would use: ``--index-url``, ``--extra-index-url``,
``--find-links`` and ``--constraints``, from ``pip config list`` (the environment before the
files' ``install`` and then ``global`` sections, as pip ranks them), and pip's way of choosing
among indexes (the best version on any of them). Nothing configured: only that last option.

    .venv/bin/uv pip install $(.venv/bin/python deploy/pip_sources.py) -e ".[test]"
"""
import ast
import subprocess
import sys

# pip's option -> uv's option; pip's values are lists separated by white space.
OPTIONS = {
    "index-url": "--index-url",
    "extra-index-url": "--extra-index-url",
    "find-links": "--find-links",
    "constraint": "--constraints",
}
# pip ranks the environment over the files, and a command's section over [global].
RANK = (":env:", "install", "global")


def configured(listing):
    """{pip option: [values]} from ``pip config list``'s lines (``section.option='value'``)."""
    found = {}
    for line in listing.splitlines():
        name, sep, value = line.partition("=")
        section, dot, option = name.rpartition(".")
        if not sep or not dot or option not in OPTIONS or section not in RANK:
            continue
        found.setdefault(option, []).append((RANK.index(section), ast.literal_eval(value).split()))
    return {option: min(ranked)[1] for option, ranked in found.items()}


def main():
    listing = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True,
                             check=True).stdout
    for option, values in configured(listing).items():
        for value in values:
            print(OPTIONS[option], value)
    print("--index-strategy", "unsafe-best-match")


if __name__ == "__main__":
    main()
