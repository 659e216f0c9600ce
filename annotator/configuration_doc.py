"""The table of variables in docs/configuration.md, written from annotator/environment.py.

The table is generated so that a variable's name, type, default and meaning are written once,
in ``VARIABLES``; tests/test_configuration_doc.py fails when the committed file differs from
what this writes.

    python -m annotator.configuration_doc           # rewrite the table in docs/configuration.md
    python -m annotator.configuration_doc --check   # exit 1 if it is out of date
"""
import sys

from annotator.environment import BASE_DIR, TYPES, VARIABLES

DOC = BASE_DIR / "docs" / "configuration.md"
BEGIN = "<!-- The table below is generated from annotator/environment.py: python -m annotator.configuration_doc -->"
END = "<!-- end of the generated table -->"


def shown_default(variable):
    """The default as docs/configuration.md shows it: ``1``/``0`` for booleans, a number without ``.0``."""
    if variable.shown:
        return variable.shown
    value = variable.default
    if isinstance(value, bool):
        return f"`{int(value)}`"
    if isinstance(value, float):
        return f"`{value:g}`"
    if isinstance(value, list):
        return f"`{','.join(value)}`" if value else "empty"
    if value == "":
        return "empty"
    return f"`{value}`"


def shown_type(variable):
    if variable.choices:
        return "one of " + ", ".join(f"`{choice}`" for choice in variable.choices)
    return TYPES[variable.type]


def table():
    rows = ["| variable | type | default | meaning |", "|---|---|---|---|"]
    rows += [f"| `{v.name}` | {shown_type(v)} | {shown_default(v)} | {v.meaning} |" for v in VARIABLES]
    return "\n".join(rows)


def document(text):
    """``text`` (docs/configuration.md) with the part between BEGIN and END replaced by ``table()``."""
    head, found, rest = text.partition(BEGIN + "\n")
    _, found_end, tail = rest.partition(END)
    if not (found and found_end):
        raise ValueError(f"{DOC}: the markers {BEGIN!r} and {END!r} are missing")
    return f"{head}{BEGIN}\n{table()}\n{END}{tail}"


def main(argv):
    current = DOC.read_text()
    wanted = document(current)
    if "--check" in argv:
        if current != wanted:
            print(f"{DOC.relative_to(BASE_DIR)} is out of date: run python -m annotator.configuration_doc")
            return 1
        return 0
    DOC.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
