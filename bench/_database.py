"""The benchmarks' own database: a PostgreSQL name marked as the bench's, created when missing,
then Django set up and migrated.

Not a benchmark itself (the leading underscore keeps ``python -m bench`` from running it).
"""
import os
import urllib.parse


def bench_database_url(default, suffix, refusal):
    """``DATABASE_URL`` (else ``default``) with ``_<suffix>`` added to a name not ending in ``suffix``,
    so a benchmark never writes to the development database; ``refusal`` ends the run off PostgreSQL."""
    parts = urllib.parse.urlsplit(os.environ.get("DATABASE_URL", default))
    if not parts.scheme.startswith("postgres"):
        raise SystemExit(refusal)
    name = parts.path.lstrip("/")
    if not name.endswith(suffix):
        name += "_" + suffix
    return urllib.parse.urlunsplit(parts._replace(path="/" + name))


def use_database(url):
    """Point this process (and the servers and children it starts) at ``url``."""
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotator.settings")
    os.environ.setdefault("DJANGO_DEBUG", "1")


def create_database(url):
    """Create the PostgreSQL database ``url`` names unless it exists."""
    import psycopg

    parts = urllib.parse.urlsplit(url)
    name = parts.path.lstrip("/")
    admin = urllib.parse.urlunsplit(parts._replace(path="/postgres", scheme="postgresql"))
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
            print(f"created database {name}", flush=True)


def drop_database(url):
    """Drop the PostgreSQL database ``url`` names if it exists (a benchmark's own, by its name)."""
    import psycopg

    parts = urllib.parse.urlsplit(url)
    name = parts.path.lstrip("/")
    admin = urllib.parse.urlunsplit(parts._replace(path="/postgres", scheme="postgresql"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def migrate():
    """Set Django up on ``DATABASE_URL`` and bring the schema up to date."""
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
