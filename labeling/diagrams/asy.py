"""Draw one diagram with the real Asymptote program (Debian's ``asymptote`` and ``dvisvgm``).

The code is untrusted (it comes from an import), so ``asy`` runs in a fresh temporary folder
with an empty environment, a wall-clock limit (the whole process group is killed), a CPU, an
address-space and a file-size limit, and with Asymptote's and TeX's own fences:

- ``-safe`` (Asymptote's default: no ``system()``; code cannot change it), ``-noglobalread`` and
  the default ``-noglobalwrite`` (no file outside the folder);
- ``openin_any=p``, ``openout_any=p`` and ``shell_escape=f`` for LaTeX, which typesets the labels
  (kpathsea reads these from the environment): no absolute or ``..`` paths, no ``\\write18``;
- ``import "path"`` and ``include "path"`` are refused before ``asy`` runs: ``-noglobalread``
  does not cover them.

``-render=0`` draws 3D scenes as vectors (no OpenGL, no display). Only the worker calls this;
a web request never does.
"""
import os
import re
import resource
import signal
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

# MATH's diagrams come from AoPS, whose renderer has the graph and olympiad modules loaded:
# they call Circle(), graph() and rightanglemark() without importing them. aops.asy (beside
# this file) holds stand-ins for the olympiad functions they use. No newline, so Asymptote's
# line numbers in an error are the code's own.
PREAMBLE = "import graph;import aops;"
MODULES = (Path(__file__).with_name("aops.asy"),)
# Code that sets no size is drawn at one unit per point: a MATH figure on a 0-8 grid came out
# 8 pt wide under 10 pt labels. Such code gets this size (the longer side, in points); sized
# MATH figures are 100 to 250 pt wide.
DEFAULT_SIZE = "size(150);"
_SETS_SIZE = re.compile(r"\b(unit)?size\s*\(")
MAX_SVG_BYTES = 2_000_000
MAX_ERROR_CHARS = 2000
_QUOTED_IMPORT = re.compile(r"\b(import|include|access)\s*\"|\bfrom\s*\"")
_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "openin_any": "p",
    "openout_any": "p",
    "shell_escape": "f",
}


class DrawFailed(Exception):
    """Asymptote could not draw the code; the message says why (for the lead, not the page)."""


def asy_path():
    """The ``asy`` program; None when it or dvisvgm (which writes its SVG) is missing."""
    return shutil.which("asy") if shutil.which("dvisvgm") else None


def draw(code, *, timeout, memory_mb):
    """The SVG (text, not yet sanitised) that ``asy`` draws from ``code``; raises DrawFailed."""
    if _QUOTED_IMPORT.search(code):
        raise DrawFailed("import, include or access of a file path is not allowed; name a module")
    program = asy_path()
    if program is None:
        raise FileNotFoundError("Asymptote is not installed (make asymptote: Debian's asymptote and dvisvgm)")
    with tempfile.TemporaryDirectory(prefix="stepmark-asy-") as folder:
        for module in MODULES:
            shutil.copy(module, folder)
        Path(folder, "diagram.asy").write_text(source(code), encoding="utf-8")
        command = [program, "-f", "svg", "-noV", "-noglobalread", "-render=0", "-o", "diagram", "diagram.asy"]
        env = dict(_ENV, HOME=folder, TMPDIR=folder)  # no ~/.asy/config.asy of the worker's user
        returncode, output = _run(command, folder, env, timeout, memory_mb)
        svg = Path(folder, "diagram.svg")
        # After an error asy still ships out what was drawn before it: a figure without its
        # labels, so the exit status decides, not the file.
        if returncode != 0 or not svg.is_file():
            raise DrawFailed(_tail(output) or f"asy exited with status {returncode} and wrote no SVG")
        if svg.stat().st_size > MAX_SVG_BYTES:
            raise DrawFailed(f"the SVG is larger than {MAX_SVG_BYTES:,} bytes")
        return svg.read_text(encoding="utf-8")


def source(code):
    """The file ``asy`` reads: the preamble, then the code, on the code's own line numbers."""
    return PREAMBLE + ("" if _SETS_SIZE.search(code) else DEFAULT_SIZE) + code


def _run(command, folder, env, timeout, memory_mb):
    """Run ``command``: its exit status and combined output. A run past ``timeout`` or killed
    by a limit raises DrawFailed."""

    def limits():  # in the child, before exec: LaTeX, dvisvgm and Ghostscript inherit them
        memory = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        cpu = int(timeout) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        resource.setrlimit(resource.RLIMIT_FSIZE, (4 * MAX_SVG_BYTES, 4 * MAX_SVG_BYTES))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    start = time.monotonic()
    process = subprocess.Popen(
        command, cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=limits,
    )
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        output, _ = process.communicate()  # what it said before it hung (LaTeX's prompt, say)
        raise DrawFailed(f"asy took longer than {timeout:g} s\n{_tail(output)}") from None
    finally:
        _kill_group(process)  # whatever asy left running (latex, gs) goes with it
    if process.returncode < 0:
        name = signal.Signals(-process.returncode).name
        raise DrawFailed(f"asy was stopped by {name} after {time.monotonic() - start:.1f} s "
                         f"(limits: {timeout:g} s, {memory_mb} MB)\n{_tail(output)}")
    return process.returncode, output


def _kill_group(process):
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:  # already gone (ProcessLookupError)
        pass
    process.wait()


def _tail(output):
    text = output.decode("utf-8", "replace").strip()
    return text[-MAX_ERROR_CHARS:]
