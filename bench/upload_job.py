"""A large upload imported as a job: does the web process keep answering while it runs?

    DJANGO_DEBUG=1 REDIS_URL=redis://127.0.0.1:6379/0 .venv/bin/python -m bench.upload_job [--mb 100]
        [--servers conf] [--clients 2]

Writes a ``completions`` file of about ``--mb`` MB (real GSM8K problems and model solutions from
data/, each completion's lines as paragraphs, every line unique), serves Stepmark with gunicorn
(``conf``: gunicorn.conf.py's shape, as production runs it; ``W``: W sync workers; ``WxT``: W
gthread workers of T threads) and one Celery worker on the ``default`` queue, as
docker-compose.yml runs them. ``--clients`` threads GET ``/api/me/`` in a loop (each a keep-alive
connection, 50 ms apart) throughout; meanwhile one more client uploads the file to
``POST /api/projects/{id}/imports/`` (streamed from disk) and polls the job until it ends.

Prints the latency of the other requests (p50, p95, max) before the upload, while the upload's
body is sent, and while the worker imports it; the upload's wall time and its 202; the job's
time, lines and records; the web process's CPU seconds in each phase.

The benchmark owns its database: a PostgreSQL name not ending in ``uploadbench`` gets
``_uploadbench`` appended (default ``stepmark_uploadbench``); it is created if missing and
migrated, and its project is emptied before each run. Figures: docs/performance.md.
"""
import argparse
import http.client
import itertools
import json
import os
import runpy
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from bench._database import bench_database_url, create_database, migrate, use_database
from bench._server import children, cpu_seconds, gunicorn
from labeling.data import open_data

ROOT = Path(__file__).resolve().parent.parent
PROJECT = "bench upload job"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.upload_job", description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=100, help="size of the uploaded file in MB (default 100)")
    parser.add_argument("--servers", default="conf", help="gunicorn's shape: conf, W or WxT (default conf)")
    parser.add_argument("--clients", type=int, default=2, help="threads asking GET /api/me/ meanwhile (default 2)")
    args = parser.parse_args(argv)

    url = bench_database_url("postgres://postgres@127.0.0.1:5432/stepmark", "uploadbench",
                             "bench.upload_job needs PostgreSQL (DATABASE_URL=postgres://...)")
    use_database(url)
    create_database(url)
    migrate()
    workdir = Path(tempfile.mkdtemp(prefix="stepmark-uploadbench-"))
    import_dir = workdir / "imports"
    os.environ["STEPMARK_IMPORT_DIR"] = str(import_dir)  # the server's and the worker's
    project_id, token = _prepare()
    path = workdir / "outputs.jsonl"
    lines = _write_file(path, int(args.mb * 1024 * 1024))
    size = path.stat().st_size
    print(f"file: {size / 1024 / 1024:.1f} MB, {lines:,} lines of format completions", flush=True)

    workers, threads = _shape(args.servers)
    headers = {"Authorization": f"Token {token}"}
    worker = _start_worker(url, workdir)
    try:
        with gunicorn(url, workers=workers, threads=threads, ready_path="/api/me/", headers=headers) as (port, pid):
            result = _drive(port, pid, headers, project_id, path, args.clients, worker)
    finally:
        worker.terminate()
        worker.wait(timeout=60)
    shape = f"{workers} sync workers" if not threads else f"{workers} gthread workers x {threads} threads"
    _report(result, shape, size, lines, args.clients)


def _prepare():
    from django.contrib.auth import get_user_model

    from labeling.access.roles import RESEARCHER, grant_role
    from labeling.access.tokens import issue
    from labeling.models import ImportJob, Problem, Project

    project, _ = Project.objects.get_or_create(name=PROJECT)
    ImportJob.objects.filter(project=project).delete()
    Problem.objects.filter(project=project).delete()  # cascades to solutions, steps, passes
    user, _ = get_user_model().objects.get_or_create(username="bench-upload-researcher")
    grant_role(user, RESEARCHER, project)
    key, _ = issue(user, "bench.upload_job")
    return project.pk, key


def _write_file(path, target):
    """Lines of GSM8K's problems with one model solution each, until ``target`` bytes; returns the count."""
    with open_data("gsm8k/example_model_solutions.jsonl.gz") as source:
        records = [json.loads(line) for line in source if line.strip()]
    models = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")
    written = 0
    with open(path, "w", encoding="utf-8") as out:
        for n in itertools.count():
            record, model = records[n % len(records)], models[(n // len(records)) % len(models)]
            answer = record["ground_truth"].rsplit("A:", 1)[-1].strip()
            solution = record[model]["solution"]
            body, _, final = solution.rpartition("A:")
            paragraphs = [line for line in body.splitlines() if line.strip()]
            completion = "\n\n".join([f"Attempt {n // (len(records) * len(models)) + 1}:", *paragraphs,
                                      f"The answer is $\\boxed{{{final.strip()}}}$."])
            line = json.dumps({"id": f"{n}", "problem": record["question"], "ground_truth_answer": answer,
                               "completion": completion, "model": model}) + "\n"
            out.write(line)
            written += len(line.encode())
            if written >= target:
                return n + 1
    return 0


def _shape(spec):
    if spec == "conf":
        conf = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
        return conf["workers"], 0 if conf["worker_class"] == "sync" else conf.get("threads", 1)
    workers, _, threads = spec.lower().partition("x")
    return int(workers), int(threads or 0)


def _start_worker(url, workdir):
    env = dict(os.environ, DATABASE_URL=url, DJANGO_DEBUG="0", DJANGO_SECRET_KEY=secrets.token_urlsafe(50))
    log = open(workdir / "worker.log", "wb")
    command = [sys.executable, "-m", "celery", "-A", "annotator", "worker", "-Q", "default", "--pool=solo",
               "-c", "1", "-n", f"uploadbench-{uuid.uuid4().hex[:6]}@localhost", "--without-gossip",
               "--without-mingle", "-l", "warning"]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


class Probe(threading.Thread):
    """GET /api/me/ every 50 ms on one keep-alive connection; latencies tagged with the phase."""

    def __init__(self, port, headers, phase):
        super().__init__(daemon=True)
        self.port, self.headers, self.phase = port, headers, phase
        self.samples, self.stop = [], threading.Event()

    def run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        while not self.stop.is_set():
            phase = self.phase[0]
            start = time.perf_counter()
            try:
                conn.request("GET", "/api/me/", headers=self.headers)
                response = conn.getresponse()
                response.read()
                ok = response.status == 200
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
                ok = False
            self.samples.append((phase, time.perf_counter() - start, ok))
            time.sleep(0.05)


def _drive(port, pid, headers, project_id, path, clients, worker):
    phase = ["before"]
    probes = [Probe(port, headers, phase) for _ in range(clients)]
    for probe in probes:
        probe.start()
    cpu = {}

    def web_cpu():
        return sum(cpu_seconds(p) for p in [pid, *children(pid)])

    time.sleep(5)
    cpu["before"] = web_cpu()
    phase[0] = "upload"
    start = time.monotonic()
    job = _upload(port, headers, project_id, path)
    uploaded = time.monotonic() - start
    cpu["upload"] = web_cpu()
    phase[0] = "job"
    job_start = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    while job["state"] in ("queued", "running"):
        if worker.poll() is not None:
            raise SystemExit(f"the Celery worker exited with {worker.returncode} (see its worker.log)")
        time.sleep(0.5)
        conn.request("GET", job["url"], headers=headers)
        job = json.loads(conn.getresponse().read())
    job_seconds = time.monotonic() - job_start
    cpu["job"] = web_cpu()
    phase[0] = "after"
    time.sleep(3)
    for probe in probes:
        probe.stop.set()
        probe.join()
    samples = [s for probe in probes for s in probe.samples]
    return {"samples": samples, "uploaded": uploaded, "job_seconds": job_seconds, "job": job, "cpu": cpu,
            "cpu_start": cpu["before"]}


def _upload(port, headers, project_id, path):
    """POST the file as multipart/form-data, its bytes streamed from disk; returns the 202's job."""
    boundary = uuid.uuid4().hex
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"format\"\r\n\r\ncompletions\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{path.name}\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    length = len(head) + path.stat().st_size + len(tail)

    def body():
        yield head
        with open(path, "rb") as f:
            while chunk := f.read(1024 * 1024):
                yield chunk
        yield tail

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request("POST", f"/api/projects/{project_id}/imports/", body=body(),
                 headers={**headers, "Content-Type": f"multipart/form-data; boundary={boundary}",
                          "Content-Length": str(length)})
    response = conn.getresponse()
    answer = json.loads(response.read())
    if response.status != 202:
        raise SystemExit(f"the upload was refused: {response.status} {answer}")
    return answer


def _report(result, shape, size, lines, clients):
    job = result["job"]
    print(f"server: gunicorn, {shape}; one Celery worker (solo) on the default queue; {clients} clients "
          "GET /api/me/ every 50 ms")
    print(f"upload: {size / 1024 / 1024:.1f} MB sent and answered 202 in {result['uploaded']:.1f} s")
    progress = job["progress"]
    print(f"job: {job['state']} after {result['job_seconds']:.1f} s more; {progress['lines_read']:,} lines read, "
          f"{progress['records_stored']:,} records stored; result {job['result'] or job['error']}")
    print(f"{'phase':<26}{'requests':>9}{'failed':>8}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'web CPU s':>11}")
    cpu, previous = result["cpu"], result["cpu_start"]
    for phase, label in (("before", "before (5 s)"), ("upload", "upload sent"), ("job", "job running"),
                         ("after", "after (3 s)")):
        times = sorted(t for p, t, ok in result["samples"] if p == phase and ok)
        failed = sum(1 for p, _, ok in result["samples"] if p == phase and not ok)
        used = ""
        if phase in ("upload", "job"):
            used = f"{cpu[phase] - previous:.1f}"
            previous = cpu[phase]
        if not times:
            print(f"{label:<26}{0:>9}{failed:>8}")
            continue
        p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
        print(f"{label:<26}{len(times):>9}{failed:>8}{statistics.median(times) * 1000:>9.1f}{p95 * 1000:>9.1f}"
              f"{times[-1] * 1000:>9.1f}{used:>11}")


if __name__ == "__main__":
    sys.exit(main())
