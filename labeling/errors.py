"""The one error type for input a person must fix.

A rule of the domain (the labelling rules in labeling/work/submission.py, gold and consensus in
labeling/quality/, the importers) refuses by raising ``DomainError`` or a subclass of it, with a
message a person can act on and the name of the offending input. The API turns it into its
answer in one place, ``labeling.api.errors.exception_handler``: ``as_answer()`` with ``status``
(400 unless the refusal says otherwise, such as 409 for a lost lease). Views do not catch it.
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
