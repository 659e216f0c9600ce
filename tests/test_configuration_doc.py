"""docs/configuration.md's table of variables is the one annotator/configuration_doc.py writes."""
import re

import pytest

from annotator import configuration_doc
from annotator.environment import VARIABLES


def test_the_committed_table_is_the_generated_one():
    committed = configuration_doc.DOC.read_text()
    assert configuration_doc.document(committed) == committed, (
        "docs/configuration.md is out of date: run python -m annotator.configuration_doc")


def test_the_table_has_one_row_per_variable_with_its_default():
    text = configuration_doc.DOC.read_text()
    rows = re.findall(r"^\| `([A-Z_]+)` \| [^|]+ \| ([^|]+) \|", text, flags=re.M)
    assert [name for name, _ in rows] == [variable.name for variable in VARIABLES]
    shown = dict(rows)
    assert shown["DJANGO_DEBUG"].strip() == "`0`" and shown["STEPMARK_VISIBILITY_TIMEOUT"].strip() == "`600`"
    assert shown["DJANGO_ALLOWED_HOSTS"].strip() == "`127.0.0.1,localhost,[::1],testserver`"


def test_a_doc_without_the_markers_is_refused():
    with pytest.raises(ValueError, match="markers"):
        configuration_doc.document("# Configuration\n")


def test_every_variable_the_doc_names_is_in_the_table_or_read_elsewhere():
    text = configuration_doc.DOC.read_text()
    elsewhere = text[text.index("Read elsewhere:"):text.index("## The web server")]
    known = {variable.name for variable in VARIABLES} | set(re.findall(r"`([A-Z_]+)`", elsewhere))
    known.add("STEPMARK_MAX_JSON_DEPTH")  # a constant of annotator/settings.py, named in the prose
    for name in set(re.findall(r"\b((?:STEPMARK|DJANGO)_[A-Z_]+)\b", text)):
        if name.endswith("_"):  # a family, such as DJANGO_HSTS_*
            assert any(known_name.startswith(name) for known_name in known), name
        else:
            assert name in known, f"docs/configuration.md names {name}, which nothing reads"
