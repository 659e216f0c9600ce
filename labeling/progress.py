"""How far a long job is: done of total, its rate and the time left, worked out one way for every job.

Import jobs (bytes of the upload read, labeling/imports/jobs.py), generation runs (solutions
scored) and retrains (training steps; both scoring/progress.py), and the command line's import
and export lines (records, no total: labeling/imports/common.py) all report through ``pace``:
the rate is what was done since counting started over the seconds since then, and the time
left is what remains at that rate. The API shows it under the same names (``fraction``,
``rate``, ``eta_s``). Plain Python: the web process, the workers and the command line import it.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Pace:
    done: int
    total: int | None
    fraction: float | None  # done / total, at most 1; None without a total (or a total of 0)
    rate: float | None  # per second since counting started; None until some time passed and something was done
    eta_s: float | None  # seconds left at that rate (0 once all is done); None while the rate or the total is unknown


def pace(done, total, elapsed, *, counted_from=0):
    """The ``Pace`` of a job that has done ``done`` of ``total`` (None: unknown), counting for ``elapsed`` seconds.

    ``counted_from``: what was already done when counting started (a run resumed after an
    interruption, training steps before the pace settled), left out of the rate.
    """
    fraction = min(done / total, 1.0) if total else None
    counted = done - counted_from
    rate = counted / elapsed if elapsed > 0 and counted > 0 else None
    eta_s = max(total - done, 0) / rate if rate is not None and total is not None else None
    return Pace(done, total, fraction, rate, eta_s)
