"""Fixtures of the PRM core's tests (the tiny backbones, ``tiny_bases``, are in tests/scoring/conftest.py)."""
import json

import pytest

from labeling.data import open_text


@pytest.fixture(scope="session")
def processbench_items(data_dir):
    with open_text(data_dir / "processbench" / "gsm8k.json.gz") as f:
        return json.load(f)[:12]
