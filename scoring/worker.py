"""The warm model cache of a PRM worker process.

Loading a checkpoint costs seconds (minutes for a large backbone on a GPU); a generation costs
one forward pass per batch. So a worker keeps the PRMs it loaded, keyed by checkpoint id and
path, and loads again only when asked for a checkpoint it does not hold: a new champion. It
keeps the few most recently used (one per project in practice) and drops the oldest.

Each process has its own cache (Celery's solo or prefork pool: one model per process). How
many PRMs it keeps and how many CPU threads torch may use come from the settings
(``STEPMARK_WORKER_MODELS``, ``STEPMARK_TORCH_THREADS``).
"""
import collections
import threading

from django.conf import settings

_models = collections.OrderedDict()
_lock = threading.Lock()
loads = 0  # how many times this process loaded a checkpoint (read by tests)


def device():
    """CUDA when the worker has a GPU, else the CPU."""
    from scoring.prm.model import default_device

    return default_device()


def get_prm(checkpoint):
    """The PRM saved at ``checkpoint.path``, loaded once per process and kept warm.

    Loaded in the checkpoint's layout (a Stepmark checkpoint, or a registered one in a published
    layout) by ``scoring.prm.adapters.load_adapter``: every layout comes back as a module the one
    scorer takes, so the jobs, the evaluation and the promotion never ask which layout it is.
    """
    global loads
    key = (checkpoint.pk, str(checkpoint.path))  # a row's layout and options never change
    with _lock:
        if key in _models:
            _models.move_to_end(key)
            return _models[key]
    _limit_threads()
    from scoring.prm.adapters import load_adapter

    prm = load_adapter(checkpoint.layout or "stepmark", checkpoint.path, device=device(), **(checkpoint.layout_options or {}))
    with _lock:
        _models[key] = prm
        loads += 1
        while len(_models) > settings.STEPMARK_WORKER_MODELS:
            _models.popitem(last=False)
    return prm


def _limit_threads():
    """Hold torch to ``STEPMARK_TORCH_THREADS`` CPU threads when that is set.

    The CPU fallback shares its machine with the web tier and PostgreSQL.
    """
    if settings.STEPMARK_TORCH_THREADS:
        import torch

        torch.set_num_threads(settings.STEPMARK_TORCH_THREADS)
