"""Scoring solutions: every step of a solution in one forward pass, batched by length.

``score_solutions`` returns, per solution, the probability that each step is correct and a
solution score aggregated from them. A solution longer than the model's context is scored
through a sliding window or has its later steps unscored, as the model's ``overflow`` says
(``scoring.prm.inputs.encode_solution``); nothing is silently dropped: an unscored step's score is
``None``, ``unscored_steps`` counts them, and the solution score is aggregated over the steps
that were scored (``None`` when there are none).

With ``dropout_passes`` the scorer also measures how unsure the model is (MC dropout): each
solution is read that many more times with the dropout layers active, and a step's uncertainty
is the standard deviation of its P(correct) over those passes (0 for a model without dropout).
"""
import contextlib
import dataclasses
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
    step_uncertainty: list | None = None  # std of P(correct) per step over the dropout passes (None: not measured)
    uncertainty: float | None = None  # the largest step uncertainty (scoring.prm.strategies says why)

    def as_dict(self):
        """Its fields; the uncertainty ones only where they were measured (records read before keep their shape)."""
        record = dataclasses.asdict(self)
        if self.step_uncertainty is None:
            del record["step_uncertainty"], record["uncertainty"]
        return record


def step_probabilities(prm, batch):
    """P(correct) at every position of a collated batch (plain or packed), as float32 (B, T)."""
    position_ids = batch.get("position_ids")
    logits = prm(batch["input_ids"].to(prm.device), batch["attention_mask"].to(prm.device),
                 None if position_ids is None else position_ids.to(prm.device))
    return torch.softmax(logits, dim=-1)[..., CORRECT]


# (max_tokens, max_batch) by device type. A CPU is compute-bound at any batch size, and a
# batch that stays in its caches runs faster (bench/scoring_throughput.py; docs/prm.md,
# "Scoring throughput"). A GPU wants large batches to fill its cores.
BATCHING = {"cpu": (4096, 8), "cuda": (16384, 64)}


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


def score_encoded(prm, rows, *, max_tokens=None, max_batch=None, progress=None, share_prefixes=True, dropout=False):
    """Step probabilities for already encoded rows: a list (per row) of floats, scored steps only.

    With ``share_prefixes`` rows that begin alike (alternatives after a shared trajectory, the
    candidates of one problem) are read as prefix trees (``scoring.prm.packing``): each shared
    token once. The scores are those of one pass per row; with ``dropout`` that pass samples
    the dropout layers (one MC-dropout draw) instead of reading the model as it is evaluated.
    """
    max_tokens, max_batch = batching(prm.device, max_tokens, max_batch)
    results = [[] for _ in rows]
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
        with torch.inference_mode(), dropout_active(prm, dropout):
            for group in (trees, plain):
                for batch_indices in length_batches([len(units[u]) for u in group], max_tokens=max_tokens,
                                                    max_batch=max_batch):
                    chosen = [group[b] for b in batch_indices]
                    batch = collate_units([units[u] for u in chosen], pad_token_id=pad)
                    probs = step_probabilities(prm, batch).cpu()
                    done = 0
                    for b, u in enumerate(chosen):
                        for slot in members[u]:
                            row, index = rows[todo[slot]], where[slot][1]
                            results[todo[slot]] = probs[b, [index[p] for p in row.step_positions]].tolist()
                            done += 1
                    if progress is not None:
                        progress(done)
    finally:
        prm.train(was_training)
    return results


def encode_solutions(prm, solutions, overflow=None):
    """The rows of each of ``solutions`` (``(problem, steps)`` pairs), as the model builds them."""
    overflow = overflow or getattr(prm, "overflow", "unscored")
    return [encode_solution(prm.tokenizer, problem, steps, step_token_id=prm.step_token_id,
                            max_length=prm.max_length, overflow=overflow)
            for problem, steps in solutions]


def score_solutions(prm, solutions, *, aggregation="prod", overflow=None, max_tokens=None, max_batch=None,
                    progress=None, share_prefixes=True, dropout_passes=0):
    """Score ``solutions``, a list of ``(problem, steps)`` pairs; returns one ``Scored`` each.

    ``overflow`` (``scoring.prm.inputs.OVERFLOWS``) overrides the model's own way with solutions
    longer than its context. ``max_tokens`` bounds a batch's padded size (rows x longest row),
    ``max_batch`` its rows (defaults by device: ``BATCHING``). ``progress``, when given, is
    called with the number of rows finished after each batch (a solution longer than the
    context through a window is several rows). ``share_prefixes`` reads solutions that begin
    alike as prefix trees (``score_encoded``); the scores are the same either way.
    ``dropout_passes`` (0: none) more passes with dropout active give each solution its
    ``step_uncertainty`` and ``uncertainty`` (MC dropout); the scores stay those of the plain pass.

    A model with a ``prepare(problem, steps)`` (every adapter of ``scoring.prm.adapters``) puts
    the text in its layout's shape first (chat template, step prefixes): this is the one scoring
    interface for every layout, used by the generation jobs, the retrain's evaluation and the CLI.
    """
    aggregate([1.0], aggregation)  # reject a bad name before any work
    solutions = [prepared(prm, problem, steps) for problem, steps in solutions]  # a layout's text shape
    encoded = encode_solutions(prm, solutions, overflow)
    flat = [row for rows in encoded for row in rows]
    options = dict(max_tokens=max_tokens, max_batch=max_batch, share_prefixes=share_prefixes)
    plain = _per_solution(encoded, score_encoded(prm, flat, progress=progress, **options))
    draws = [_per_solution(encoded, score_encoded(prm, flat, dropout=True, **options)) for _ in range(dropout_passes)]
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
