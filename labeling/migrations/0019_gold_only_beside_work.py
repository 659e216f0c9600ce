"""Replaced ``stepmark_hand_out`` by its version 4 (gold only where ordinary work is open).

Since migration 0022 the annotator loop runs in the ORM alone and the function is dropped; a fresh
database never creates it, so this migration does nothing. It stays a node of the history.
"""
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("labeling", "0018_loop_settings")]
    operations = []
