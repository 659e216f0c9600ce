"""Scoring solutions: every step of a solution in one forward pass, batched by length.

``score_solutions`` returns, per solution, the probability that each step is correct and a
solution score aggregated from them. A solution longer than the model's context is scored
through a sliding window or has its later steps unscored, as the model's ``overflow`` says
(``scoring.prm.inputs.encode_solution``); nothing is silently dropped: an unscored step's score is
``None``, ``unscored_steps`` counts them, and the solution score is aggregated over the steps
that were scored (``None`` when there are none).

With ``dropout_passes`` the scorer also measures how unsure the model is (MC dropout on the step
head): the backbone reads each solution once, and the step head is applied that many more times
to its input features (the final hidden states at the step positions) with dropout
``HEAD_DROPOUT`` on them; a step's uncertainty is the standard deviation of its P(correct) over
those passes. This works whatever dropout the checkpoint's config has (most decoder PRMs ship
with 0), costs K head applications instead of K forward passes, and is reproducible: the masks
are drawn from ``dropout_seed`` and the row's token ids, so a solution gets the same
uncertainty whatever batch it is scored in. A model that does not expose its head apart from its
backbone (``has_step_head`` false: see ``scoring.prm.adapters``) is read K more times whole with
its own dropout layers sampling instead (0 where they have probability 0).

A scorer-ready model has ``step_features(input_ids, attention_mask, position_ids)`` (the head's
input at every token, (B, T, H)) and ``step_logits(features)`` (two float32 logits, INCORRECT
and CORRECT, per feature row), and its ``forward`` is exactly ``step_logits(step_features(...))``.
"""
import contextlib
import dataclasses
import hashlib
import math
import statistics

import torch

from scoring.prm.inputs import encode_solution, length_batches, pad_id, prepared
from scoring.prm.model import CORRECT
from scoring.prm.packing import collate_units, pack, pair_cost, tree_limit


def _product(probs):
    return math.prod(probs)


def _mean(probs):
    return sum(probs) / len(probs)


# How step probabilities become one solution score. "prod" is the PRM800K paper's choice.
AGGREGATIONS = {"prod": _product, "min": min, "last": lambda probs: probs[-1], "mean": _mean}


def aggregate(step_scores, how="prod"):
    """One solution score from step scores (``None`` entries, the unscored steps, are skipped)."""
    if how not in AGGREGATIONS:
        raise ValueError(f"unknown aggregation {how!r}; choose from {', '.join(AGGREGATIONS)}")
    probs = [p for p in step_scores if p is not None]
    return AGGREGATIONS[how](probs) if probs else None


@dataclasses.dataclass
class Scored:
    """The scores of one solution."""

    step_scores: list  # P(correct) per step; None for a step the model could not read (see overflow)
    score: float | None  # aggregate of the scored steps
    unscored_steps: int
    step_uncertainty: list | None = None  # std of P(correct) per step over the head-dropout passes (None: not measured)
    uncertainty: float | None = None  # the largest step uncertainty (scoring.prm.strategies says why)

    def as_dict(self):
        """Its fields; the uncertainty ones only where they were measured (records read before keep their shape)."""
        record = dataclasses.asdict(self)
        if self.step_uncertainty is None:
            del record["step_uncertainty"], record["uncertainty"]
        return record


def step_probabilities(prm, batch):
    """P(correct) at every position of a collated batch (plain or packed), as float32 (B, T)."""
    return _batch_pass(prm, batch, features=False)[0]


def has_step_head(prm):
    """Whether ``prm`` reads its step head apart from its backbone (``step_features`` + ``step_logits``)."""
    return bool(getattr(prm, "has_step_head", False))


def _batch_pass(prm, batch, *, features):
    # (P(correct) at every position (B, T), the head's input features (B, T, H) or None). With
    # ``features`` the model is read as step_logits(step_features(...)), which is its forward.
    position_ids = batch.get("position_ids")
    args = (batch["input_ids"].to(prm.device), batch["attention_mask"].to(prm.device),
            None if position_ids is None else position_ids.to(prm.device))
    if features:
        states = prm.step_features(*args)
        logits = prm.step_logits(states)
    else:
        states, logits = None, prm(*args)
    return torch.softmax(logits, dim=-1)[..., CORRECT], states


# (max_tokens, max_batch) by device type. A CPU is compute-bound at any batch size, and a
# batch that stays in its caches runs faster (bench/scoring_throughput.py; docs/prm.md,
# "Scoring throughput"). A GPU wants large batches to fill its cores.
BATCHING = {"cpu": (4096, 8), "cuda": (16384, 64)}

# The uncertainty passes (``dropout_passes``): the probability that one of the step head's input
# features is zeroed in a pass (the survivors are scaled by 1 / (1 - p), as nn.Dropout does), and
# the default seed of the masks. 0.1 is the dropout BERT-style models train with.
HEAD_DROPOUT = 0.1
DROPOUT_SEED = 0


def batching(device, max_tokens=None, max_batch=None):
    """``(max_tokens, max_batch)``: the given values, the rest from ``BATCHING`` for ``device``."""
    tokens, rows = BATCHING.get(torch.device(device).type, BATCHING["cuda"])
    return max_tokens or tokens, max_batch or rows


@contextlib.contextmanager
def dropout_active(prm, active=True):
    """Within the block only the dropout layers of ``prm`` sample (train mode); everything else,
    normalisation included, stays as it was. Gradients are the caller's business (inference mode)."""
    layers = [m for m in prm.modules() if isinstance(m, torch.nn.modules.dropout._DropoutNd)] if active else []
    was = [m.training for m in layers]
    for layer in layers:
        layer.train(True)
    try:
        yield
    finally:
        for layer, training in zip(layers, was):
            layer.train(training)


@contextlib.contextmanager
def _seeded(prm, seed, active):
    # The fallback's dropout layers draw from torch's global generator: fork it, seeded, so that
    # the passes repeat and the caller's random state is left as it was.
    if not active:
        yield
        return
    devices = [prm.device] if prm.device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        yield


def keep_masks(seed, row, passes, width, p):
    """The head-dropout masks of one encoded row: bool (passes, row.n_scored, width), True = kept.

    Drawn on the CPU from ``seed`` and the row's own tokens, so that a row gets the same masks in
    any batch, order or device, and two seeds give independent draws.
    """
    key = hashlib.blake2b(digest_size=8)
    key.update(f"{seed}:{row.first_step}:".encode())
    key.update(",".join(map(str, row.input_ids)).encode())
    generator = torch.Generator().manual_seed(int.from_bytes(key.digest(), "little") >> 1)
    return torch.rand((passes, row.n_scored, width), generator=generator) >= p


def score_encoded(prm, rows, *, max_tokens=None, max_batch=None, progress=None, share_prefixes=True):
    """Step probabilities for already encoded rows: a list (per row) of floats, scored steps only.

    With ``share_prefixes`` rows that begin alike (alternatives after a shared trajectory, the
    candidates of one problem) are read as prefix trees (``scoring.prm.packing``): each shared
    token once. The scores are those of one pass per row (``read_encoded`` without dropout passes).
    """
    return read_encoded(prm, rows, max_tokens=max_tokens, max_batch=max_batch, progress=progress,
                        share_prefixes=share_prefixes)[0]


def read_encoded(prm, rows, *, max_tokens=None, max_batch=None, progress=None, share_prefixes=True, dropout_passes=0,
                 dropout_p=HEAD_DROPOUT, dropout_seed=DROPOUT_SEED):
    """``(scores, draws)`` for encoded rows: per row its step probabilities (``score_encoded``) and,
    per row, ``dropout_passes`` lists of them under dropout (``[]`` per row without passes).

    Each batch goes through the backbone once. A model with a step head (``has_step_head``) has its
    head applied again to the step positions' features, dropped out with probability
    ``dropout_p`` (``keep_masks``); any other is read again whole with its dropout layers active,
    ``dropout_passes`` times, from torch's generator seeded with ``dropout_seed``. The scores are
    those of the plain pass either way, and the model is left in the mode it was in.
    """
    if not 0 <= dropout_p < 1:
        raise ValueError(f"dropout_p must be in [0, 1), not {dropout_p}")
    max_tokens, max_batch = batching(prm.device, max_tokens, max_batch)
    results = [[] for _ in rows]
    draws = [[[] for _ in range(dropout_passes)] for _ in rows]
    split = bool(dropout_passes) and has_step_head(prm)
    todo = [i for i, row in enumerate(rows) if row.n_scored]
    units, where = pack([rows[i].input_ids for i in todo], max_tokens=tree_limit(prm.max_length),
                        pair_cost=pair_cost(prm), share=share_prefixes)
    members = [[] for _ in units]  # the rows each packed unit holds
    for slot, (unit, _) in enumerate(where):
        members[unit].append(slot)
    pad = pad_id(prm.tokenizer)
    # plain rows apart from trees: a batch of plain rows keeps the 2D mask (and a decoder's fast causal kernels)
    trees = [u for u, unit in enumerate(units) if not unit.is_linear]
    plain = [u for u, unit in enumerate(units) if unit.is_linear]
    was_training = prm.training
    prm.eval()
    try:
        with torch.inference_mode(), _seeded(prm, dropout_seed, bool(dropout_passes) and not split):
            for group in (trees, plain):
                for batch_indices in length_batches([len(units[u]) for u in group], max_tokens=max_tokens,
                                                    max_batch=max_batch):
                    chosen = [group[b] for b in batch_indices]
                    batch = collate_units([units[u] for u in chosen], pad_token_id=pad)
                    probs, states = _batch_pass(prm, batch, features=split)
                    probs = probs.cpu()
                    # (row, the batch row it is in, its step positions there) for every row of the batch
                    placed = [(todo[slot], b, [where[slot][1][p] for p in rows[todo[slot]].step_positions])
                              for b, u in enumerate(chosen) for slot in members[u]]
                    for i, b, positions in placed:
                        results[i] = probs[b, positions].tolist()
                    if split:
                        _head_passes(prm, rows, placed, states, draws, dropout_passes, dropout_p, dropout_seed)
                    else:
                        for k in range(dropout_passes):
                            with dropout_active(prm):
                                sampled = step_probabilities(prm, batch).cpu()
                            for i, b, positions in placed:
                                draws[i][k] = sampled[b, positions].tolist()
                    if progress is not None:
                        progress(len(placed))
    finally:
        prm.train(was_training)
    return results, draws


def _head_passes(prm, rows, placed, states, draws, passes, p, seed):
    # The step head on the batch's step features, ``passes`` times with dropout: one head call.
    features = torch.cat([states[b, positions] for _, b, positions in placed])  # (N, H)
    keep = torch.cat([keep_masks(seed, rows[i], passes, features.shape[-1], p) for i, _, _ in placed], dim=1)
    dropped = features.unsqueeze(0) * keep.to(device=features.device, dtype=features.dtype) / (1 - p)
    sampled = torch.softmax(prm.step_logits(dropped), dim=-1)[..., CORRECT].cpu()  # (passes, N)
    start = 0
    for i, _, positions in placed:
        for k in range(passes):
            draws[i][k] = sampled[k, start:start + len(positions)].tolist()
        start += len(positions)


def encode_solutions(prm, solutions, overflow=None):
    """The rows of each of ``solutions`` (``(problem, steps)`` pairs), as the model builds them."""
    overflow = overflow or getattr(prm, "overflow", "unscored")
    return [encode_solution(prm.tokenizer, problem, steps, step_token_id=prm.step_token_id,
                            max_length=prm.max_length, overflow=overflow)
            for problem, steps in solutions]


def score_solutions(prm, solutions, *, aggregation="prod", overflow=None, max_tokens=None, max_batch=None,
                    progress=None, share_prefixes=True, dropout_passes=0, dropout_p=HEAD_DROPOUT,
                    dropout_seed=DROPOUT_SEED):
    """Score ``solutions``, a list of ``(problem, steps)`` pairs; returns one ``Scored`` each.

    ``overflow`` (``scoring.prm.inputs.OVERFLOWS``) overrides the model's own way with solutions
    longer than its context. ``max_tokens`` bounds a batch's padded size (rows x longest row),
    ``max_batch`` its rows (defaults by device: ``BATCHING``). ``progress``, when given, is
    called with the number of rows finished after each batch (a solution longer than the
    context through a window is several rows). ``share_prefixes`` reads solutions that begin
    alike as prefix trees (``score_encoded``); the scores are the same either way.
    ``dropout_passes`` (0: none) more passes of the step head on its dropped-out input features
    (probability ``dropout_p``, masks from ``dropout_seed``: the same seed, the same uncertainties)
    give each solution its ``step_uncertainty`` and ``uncertainty`` (``read_encoded``); the
    backbone still reads each row once, and the scores stay those of the plain pass.

    A model with a ``prepare(problem, steps)`` (every adapter of ``scoring.prm.adapters``) puts
    the text in its layout's shape first (chat template, step prefixes): this is the one scoring
    interface for every layout, used by the generation jobs, the retrain's evaluation and the CLI.
    """
    aggregate([1.0], aggregation)  # reject a bad name before any work
    solutions = [prepared(prm, problem, steps) for problem, steps in solutions]  # a layout's text shape
    encoded = encode_solutions(prm, solutions, overflow)
    flat = [row for rows in encoded for row in rows]
    scores, sampled = read_encoded(prm, flat, max_tokens=max_tokens, max_batch=max_batch, progress=progress,
                                   share_prefixes=share_prefixes, dropout_passes=dropout_passes, dropout_p=dropout_p,
                                   dropout_seed=dropout_seed)
    plain = _per_solution(encoded, scores)
    draws = [_per_solution(encoded, [row[k] for row in sampled]) for k in range(dropout_passes)]
    scored = []
    for n, step_scores in enumerate(plain):
        result = Scored(step_scores, aggregate(step_scores, aggregation), step_scores.count(None))
        if draws:
            result.step_uncertainty = step_spread([draw[n] for draw in draws])
            result.uncertainty = max((u for u in result.step_uncertainty if u is not None), default=None)
        scored.append(result)
    return scored


def _per_solution(encoded, probs):
    # The rows' step probabilities put back per solution, None for the steps no row scored.
    probs = iter(probs)
    solutions = []
    for rows in encoded:
        step_scores = [None] * rows[0].n_steps
        for row in rows:
            step_scores[row.first_step:row.first_step + row.n_scored] = next(probs)
        solutions.append(step_scores)
    return solutions


def step_spread(draws):
    """Per step, the standard deviation of P(correct) over ``draws`` (lists of step scores); None
    for a step some draw could not read."""
    return [None if None in column else statistics.pstdev(column) for column in zip(*draws)]
