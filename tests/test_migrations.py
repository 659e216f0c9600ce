"""Every model change ships with its migration."""
import io

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_no_model_change_is_missing_a_migration():
    out = io.StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=out)
    except SystemExit as exit:  # --check exits 1 when a migration would be written
        pytest.fail(f"models changed without a migration (exit {exit.code}):\n{out.getvalue()}")
