"""deploy/pip_sources.py: pip's package sources handed to uv as pip would rank them."""
import os
import subprocess
import sys
from pathlib import Path

from deploy.pip_sources import configured

SCRIPT = Path(__file__).resolve().parent.parent / "deploy" / "pip_sources.py"


def test_the_environment_wins_over_the_files_and_a_commands_section_over_global():
    listing = "\n".join([
        "global.find-links='/srv/global-wheels'",
        "install.find-links='/srv/install-wheels'",
        "global.extra-index-url='file:///opt/a/simple file:///opt/b/simple'",
        ":env:.extra-index-url='https://mirror.example/simple'",
        "global.constraint='/etc/pip/constraints.txt'",
        "global.cert='/etc/ssl/certs/ca.crt'",  # not a source: left to uv
        "freeze.find-links='/srv/freeze-only'",  # another command's section
    ])
    assert configured(listing) == {
        "find-links": ["/srv/install-wheels"],
        "extra-index-url": ["https://mirror.example/simple"],
        "constraint": ["/etc/pip/constraints.txt"],
    }


def test_lists_are_split_into_one_option_each():
    assert configured("global.extra-index-url='file:///opt/a/simple\\nfile:///opt/b/simple'") == {
        "extra-index-url": ["file:///opt/a/simple", "file:///opt/b/simple"]}


def _printed(**variables):
    # PIP_CONFIG_FILE=/dev/null: pip reads none of the machine's configuration files.
    env = {"PATH": "/usr/bin:/bin", "PIP_CONFIG_FILE": os.devnull, **variables}
    return subprocess.run([sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True,
                          check=True).stdout.splitlines()


def test_with_nothing_configured_only_pips_choice_among_indexes_is_printed():
    assert _printed() == ["--index-strategy unsafe-best-match"]


def test_a_mirror_set_in_the_environment_is_printed_as_uvs_options():
    assert sorted(_printed(PIP_INDEX_URL="https://mirror.example/simple", PIP_FIND_LINKS="/srv/wheels")) == [
        "--find-links /srv/wheels", "--index-strategy unsafe-best-match", "--index-url https://mirror.example/simple"]
