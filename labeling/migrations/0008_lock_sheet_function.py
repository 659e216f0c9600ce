"""Created ``stepmark_lock_sheet``, a save's lock and reads in one PostgreSQL call (issue #27 removed it).

Since migration 0022 the annotator loop runs in the ORM alone and the function is dropped; a fresh
database never creates it, so this migration does nothing. It stays a node of the history.
"""
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("labeling", "0007_hand_out_function")]
    operations = []
