"""An import upload of one very long line: how long reading it takes, and how much memory.

    DJANGO_DEBUG=1 .venv/bin/python -m bench.long_line [--mb 100] [--old-mb 8,16,32]

Iterating an upload as Django's ``File`` joins a line's 64 KB chunks one by one, quadratic in
the line's length (issue #19); the importer reads the file the upload wraps with ``readline`` up
to ``STEPMARK_IMPORT_MAX_LINE_BYTES`` instead (labeling/imports/common.py). What it measured,
before and after: docs/performance.md#imports.

The upload is what Django hands the view for a file over 2.5 MB, a ``TemporaryUploadedFile``
on disk; each case runs in a child process of its own, which prints its seconds and the growth
of its peak memory (ru_maxrss). Cases: the old way (iterating the ``File``) at ``--old-mb``
sizes, to show the growth; the importer's reader with the default line limit (refused after
reading the limit); and with the limit raised above ``--mb``, which reads and parses the whole
line. Nothing touches the database.
"""
import argparse
import multiprocessing
import os
import resource
import time


def _upload(megabytes):
    from django.core.files.uploadedfile import TemporaryUploadedFile

    upload = TemporaryUploadedFile("long.jsonl", "application/octet-stream", 0, None)
    chunk = b"x" * (1024 * 1024)
    upload.write(b'{"problem": "')
    for _ in range(megabytes):
        upload.write(chunk)
    upload.write(b'", "solution": "s"}\n')
    upload.seek(0)
    return upload


def _case(kind, megabytes, limit, out):
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotator.settings")
    django.setup()
    from django.conf import settings

    from formats.errors import FormatError
    from labeling.imports.common import read_jsonl

    upload = _upload(megabytes)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    outcome = "read"
    if kind == "old":
        for line in upload:  # what the importer did: Django's File.__iter__
            pass
    else:
        if limit is not None:
            settings.STEPMARK_IMPORT_MAX_LINE_BYTES = limit
        try:
            for _ in read_jsonl(upload, path="long.jsonl"):
                pass
            outcome = "read and parsed"
        except FormatError as exc:
            outcome = f"refused: {exc.message}"
    seconds = time.perf_counter() - started
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    upload.close()
    out.put((seconds, grown, outcome))


def run(kind, megabytes, limit=None):
    queue = multiprocessing.get_context("fork").Queue()
    child = multiprocessing.get_context("fork").Process(target=_case, args=(kind, megabytes, limit, queue))
    child.start()
    seconds, grown, outcome = queue.get()
    child.join()
    return seconds, grown, outcome


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=100, help="the long line's size in MiB")
    parser.add_argument("--old-mb", default="8,16,32", help="sizes read the old way (quadratic: keep them small)")
    args = parser.parse_args()
    print(f"{'case':<52} {'MiB':>5} {'seconds':>8} {'peak +MiB':>10}  outcome")
    for size in [int(s) for s in args.old_mb.split(",") if s]:
        seconds, grown, outcome = run("old", size)
        print(f"{'old: iterating the upload (Django File)':<52} {size:>5} {seconds:>8.2f} {grown:>10.0f}  {outcome}")
    seconds, grown, outcome = run("new", args.mb)
    print(f"{'new: read_jsonl, default line limit':<52} {args.mb:>5} {seconds:>8.2f} {grown:>10.0f}  {outcome}")
    seconds, grown, outcome = run("new", args.mb, limit=(args.mb + 1) * 1024 * 1024)
    print(f"{'new: read_jsonl, limit above the line':<52} {args.mb:>5} {seconds:>8.2f} {grown:>10.0f}  {outcome}")


if __name__ == "__main__":
    main()
