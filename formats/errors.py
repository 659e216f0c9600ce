"""``FormatError``: the one error for bad input in a file, saying where (file, line, field).

The importers (``labeling.imports``) raise it, and the API answers it with a 400 that names
the line and the field (``labeling.api.errors``); the PRM core's readers
(``scoring.prm.data``) raise it, and its CLI prints it. A function that reads one record knows
the field but not the line or the file: it raises without them, and the caller that knows them
adds them with ``at``.
"""


class FormatError(ValueError):
    """Bad input; ``str()`` is ``file:line: field 'name': reason``, leaving out what is unknown.

    ``reason`` is the bare message, ``message`` the whole one; ``path``, ``line`` and
    ``field`` are None where unknown.
    """

    status = 400  # the API's answer to it

    def __init__(self, message, *, path=None, line=None, field=None):
        where = ":".join(str(p) for p in (path, line) if p is not None)
        parts = [where] if where else []
        if field:
            parts.append(f"field '{field}'")
        parts.append(message)
        self.message = ": ".join(parts)
        super().__init__(self.message)
        self.reason, self.path, self.line, self.field = message, path, line, field

    def as_answer(self):
        """The API's body: ``{"detail", "line", "field"}``."""
        return {"detail": self.message, "line": self.line, "field": self.field}

    def at(self, path=None, line=None):
        """The same error with the file and the line filled in where it named none."""
        path = self.path if self.path is not None else path
        line = self.line if self.line is not None else line
        if (path, line) == (self.path, self.line):
            return self
        return FormatError(self.reason, path=path, line=line, field=self.field)
