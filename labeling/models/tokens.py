from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """An API token of one account (``Authorization: Token <key>``), until it expires or is revoked.

    Only the SHA-256 of the key is stored: the key is shown once, when it is made, and a copy of
    the database signs no one in. A person holds several, each named for the script that uses
    it; revoking deletes the row. labeling/access/tokens.py makes, checks and revokes them.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True, help_text="What it is for, as its owner named it.")
    # The token check's one lookup (labeling/access/tokens.py): unique, so indexed.
    digest = models.CharField(max_length=64, unique=True, editable=False, help_text="SHA-256 of the key, hex.")
    prefix = models.CharField(max_length=8, editable=False, help_text="The key's first characters, to tell it apart.")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True, help_text="To the minute (written at most once a minute).")

    class Meta:
        verbose_name = "API token"

    def __str__(self):
        return f"{self.prefix}… ({self.name or 'unnamed'})"
