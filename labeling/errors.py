"""The one error type for a request that breaks a rule of the domain.

A rule of the domain (the labelling rules in labeling/work/submission.py, gold and consensus in
labeling/quality/) refuses by raising ``DomainError`` or a subclass of it, with a
message a person can act on and the name of the offending input. The API turns it into its
answer in one place, ``labeling.api.errors.exception_handler``: ``as_answer()`` with ``status``
(400 unless the refusal says otherwise, such as 409 for a lost lease). Views do not catch it.
Bad input in a file (the importers') is ``formats.errors.FormatError``, shared with the PRM
core's readers, which the same handler answers with a 400 naming the line and the field.
"""


class DomainError(Exception):
    """Input that breaks a rule; ``field`` names the offending input (``ratings[2].value``), or None."""

    status = 400

    def __init__(self, message, field=None, *, status=None):
        super().__init__(message)
        self.message = message
        self.field = field
        if status is not None:
            self.status = status

    def as_answer(self):
        """The body the API answers with."""
        return {"detail": self.message, "field": self.field}
