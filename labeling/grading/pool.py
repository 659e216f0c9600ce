"""A small pool of grading worker processes with a hard time limit per comparison.

Why processes, and why plain ``subprocess``: math-verify bounds its own time with
``signal.alarm``, which works only in a process's main thread, and a hung sympy computation
(``9^{9^{9^9}}``) holds the GIL, so no thread can interrupt it. The only sure way to bound a
comparison is to run it in another process and kill that process when time is up. The
workers are started with ``subprocess`` rather than ``multiprocessing`` because a daemonic
process (a Celery prefork child, a ``multiprocessing.Pool`` worker) may not have
``multiprocessing`` children, whereas it may always start a subprocess; and a fresh
interpreter is safe to start from a threaded parent, where ``fork`` is not.

Workers are reused (start-up costs about half a second), at most ``size`` at a time; callers
beyond that wait for a free one. A worker that overran its time is killed and replaced on
the next call, so one pathological answer never blocks the others. After ``os.fork`` the child
starts its own workers (the parent's belong to the parent).
"""
import atexit
import json
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STARTUP_TIMEOUT = 60.0  # seconds for a fresh worker to import math-verify, on a busy machine


class GradingTimeout(Exception):
    """A comparison ran past its time limit; its worker was killed."""


class WorkerFailed(Exception):
    """A worker died or could not start."""


class _Worker:
    def __init__(self):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "labeling.grading.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=str(ROOT),
        )
        self.buffer = b""
        self.ready = False

    def ask(self, answer, truth, timeout):
        if not self.ready:
            self._read(time.monotonic() + STARTUP_TIMEOUT, starting=True)
            self.ready = True
        try:
            self.proc.stdin.write(json.dumps({"answer": answer, "truth": truth}).encode() + b"\n")
            self.proc.stdin.flush()
        except OSError as exc:
            raise WorkerFailed(f"grading worker is gone ({exc})") from None
        return self._read(time.monotonic() + timeout)

    def _read(self, deadline, starting=False):
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            readable = select.select([fd], [], [], max(remaining, 0))[0] if remaining > 0 else []
            if not readable:
                if starting:
                    raise WorkerFailed(f"grading worker did not start within {STARTUP_TIMEOUT:.0f}s")
                raise GradingTimeout()
            chunk = os.read(fd, 65536)
            if not chunk:
                raise WorkerFailed(f"grading worker exited with status {self.proc.wait()}")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.close()

    def close(self):
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass


class WorkerPool:
    """At most ``size`` workers; ``ask`` borrows one for one comparison."""

    def __init__(self, size):
        self.size = max(1, size)
        self.idle = []
        self.count = 0  # workers alive or being started, idle or busy
        self.cond = threading.Condition()

    def ask(self, answer, truth, timeout):
        """The worker's reply dict. Raises GradingTimeout or WorkerFailed (worker replaced)."""
        worker = self._acquire()
        healthy = False
        try:
            reply = worker.ask(answer, truth, timeout)
            healthy = True
            return reply
        finally:
            self._release(worker, healthy)

    def _acquire(self):
        with self.cond:
            while not self.idle and self.count >= self.size:
                self.cond.wait()
            if self.idle:
                return self.idle.pop()
            self.count += 1
        try:
            return _Worker()
        except BaseException:
            with self.cond:
                self.count -= 1
                self.cond.notify()
            raise

    def _release(self, worker, healthy):
        if not healthy:
            worker.kill()
        with self.cond:
            if healthy:
                self.idle.append(worker)
            else:
                self.count -= 1
            self.cond.notify()

    def shutdown(self):
        with self.cond:
            idle, self.idle = self.idle, []
            self.count -= len(idle)
        for worker in idle:
            worker.kill()


_pool = None
_pool_lock = threading.Lock()


def get_pool(size):
    """The process's pool, started on first use."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = WorkerPool(size)
        return _pool


def _forget_after_fork():
    # The parent's workers and locks are not ours: close our copies of its pipes (so its
    # workers still see EOF when it exits) and start afresh.
    global _pool, _pool_lock
    if _pool is not None:
        for worker in _pool.idle:
            worker.close()
    _pool, _pool_lock = None, threading.Lock()


def shutdown():
    """End the process's grading workers (a later grading starts new ones)."""
    global _pool
    with _pool_lock:
        if _pool is not None:
            _pool.shutdown()
            _pool = None


os.register_at_fork(after_in_child=_forget_after_fork)
atexit.register(shutdown)
