"""Replaced ``stepmark_hand_out`` by its version 2 (generic plans; the own-work check by state).

Since migration 0022 the annotator loop runs in the ORM alone and the function is dropped; a fresh
database never creates it, so this migration does nothing. It stays a node of the history.
"""
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("labeling", "0010_drop_duplicate_key_indexes")]
    operations = []
