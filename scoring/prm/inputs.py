"""The one way a problem and its steps become model input, shared by training and scoring.

Layout (one row per solution)::

    [start] problem-tokens  step1-tokens <step>  step2-tokens <step>  ...  [pad ...]

``[start]`` is the tokenizer's CLS token (encoders) or BOS token (decoders) when it has one.
Every segment is tokenised on its own, so the tokens of step k never depend on the text of a
later step (no merges across a step boundary): together with the causal attention mask this
is what makes the score of step k a function of the problem and steps 1..k only.

A solution longer than the model's context is never cut mid-step, and what happens to the
steps past it is a setting of the model (``OVERFLOWS``, see ``encode_solution``):

- ``"window"`` (the default of new PRMs): a sliding window. The solution becomes several rows,
  each the start token and the problem, then up to half the context's remaining room of the
  steps before (context, not scored again), then the steps it scores while they fit. Where a
  row starts depends only on the steps up to its first scored step, so the score of step k
  is still a function of the problem and steps 1..k, and scoring the prefix ending at step k
  builds the very row (cut after step k) that scores step k in the whole solution.
- ``"unscored"``: one row, steps taken whole while they fit; the others are reported
  unscored (``Encoded.n_scored`` tells how many fit).

A step too long to fit beside the problem is unscored either way. Rows are padded on the right.
"""
import dataclasses

import torch

OVERFLOWS = ("window", "unscored")  # what becomes of the steps past the context; see encode_solution


@dataclasses.dataclass
class Encoded:
    """One row of a solution as token ids.

    ``step_positions[i]`` is the index of the separator token after step ``first_step + i``,
    for the ``n_scored`` steps the row scores; ``n_steps`` is the number of steps the solution
    has.
    """

    input_ids: list
    step_positions: list
    n_steps: int
    first_step: int = 0

    @property
    def n_scored(self):
        return len(self.step_positions)

    def __len__(self):
        return len(self.input_ids)


def start_ids(tokenizer):
    """The token a row starts with: CLS for BERT-style tokenizers, else BOS, else nothing."""
    for token_id in (tokenizer.cls_token_id, tokenizer.bos_token_id):
        if token_id is not None:
            return [token_id]
    return []


def pad_id(tokenizer):
    """The id used for padding (masked out, so any valid id will do when none is declared)."""
    for token_id in (tokenizer.pad_token_id, tokenizer.eos_token_id, tokenizer.unk_token_id):
        if token_id is not None:
            return token_id
    return 0


def prepared(model, problem, steps):
    """``(problem, steps)`` in the text shape ``model`` was trained on: its ``prepare`` (a published
    layout's chat template or step prefixes, ``scoring.prm.adapters``) when it has one, else as given.

    Training and scoring both go through it, so a fine-tuned layout learns on the text it is scored on.
    """
    prepare = getattr(model, "prepare", None)
    return prepare(problem, steps) if prepare is not None else (problem, steps)


def encode_solution(tokenizer, problem, steps, *, step_token_id, max_length, overflow="window"):
    """Tokenise ``problem`` and ``steps`` into the rows that score them: a list of ``Encoded``.

    Used by both training and scoring, so the two can never drift apart. A solution that fits
    is one row; past ``max_length`` ``overflow`` decides (see the module's docstring). Every
    step is scored by at most one row; each row scores a run of consecutive steps.
    """
    if overflow not in OVERFLOWS:
        raise ValueError(f"unknown overflow {overflow!r}; choose from {', '.join(OVERFLOWS)}")
    if overflow == "unscored":
        return [encode(tokenizer, problem, steps, step_token_id=step_token_id, max_length=max_length)]
    pieces = tokenizer([problem, *steps], add_special_tokens=False)["input_ids"]
    prefix = start_ids(tokenizer) + list(pieces[0])
    segments = [[*piece, step_token_id] for piece in pieces[1:]]
    room = max_length - len(prefix)  # for steps, in every row
    rows, ids = [], None
    for k, segment in enumerate(segments):
        if ids is not None and len(ids) + len(segment) <= max_length:
            ids.extend(segment)
            positions.append(len(ids) - 1)
            continue
        if ids is not None:
            rows.append(Encoded(ids, positions, len(steps), first))
            ids = None
        if len(segment) > room:
            continue  # too long to score in any row; the next row starts after it
        # A new row at step k, with the steps just before it as context. How far back it
        # reaches depends on those steps and step k only: the row is the same whatever follows.
        carry, context = min(room // 2, room - len(segment)), []
        for before in reversed(segments[:k]):
            if len(context) + len(before) > carry:
                break
            context[:0] = before
        ids, first = prefix + context + segment, k
        positions = [len(ids) - 1]
    if ids is not None:
        rows.append(Encoded(ids, positions, len(steps), first))
    return rows or [Encoded(input_ids=[], step_positions=[], n_steps=len(steps))]


def encode(tokenizer, problem, steps, *, step_token_id, max_length):
    """One row of ``problem`` and ``steps``: the steps past ``max_length`` are left out (``"unscored"``)."""
    pieces = tokenizer([problem, *steps], add_special_tokens=False)["input_ids"]
    ids = start_ids(tokenizer) + list(pieces[0])
    positions = []
    if len(ids) >= max_length:
        # The problem alone fills the context: nothing can be scored, and nothing is truncated.
        return Encoded(input_ids=[], step_positions=[], n_steps=len(steps))
    for step_ids in pieces[1:]:
        if len(ids) + len(step_ids) + 1 > max_length:
            break
        ids.extend(step_ids)
        ids.append(step_token_id)
        positions.append(len(ids) - 1)
    return Encoded(input_ids=ids, step_positions=positions, n_steps=len(steps))


def collate(rows, *, pad_token_id):
    """Right-pad ``rows`` (Encoded) into ``input_ids`` and ``attention_mask`` tensors."""
    width = max(len(row) for row in rows)
    input_ids = torch.full((len(rows), width), pad_token_id, dtype=torch.long)
    attention_mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        input_ids[i, : len(row)] = torch.tensor(row.input_ids, dtype=torch.long)
        attention_mask[i, : len(row)] = 1
    return {"input_ids": input_ids, "attention_mask": attention_mask}


def length_batches(lengths, *, max_tokens, max_batch):
    """Group indices into batches of similar length: little padding, bounded memory.

    Indices are sorted by length (longest first, so an out-of-memory shows at once) and cut
    into consecutive runs whose padded size ``len(run) * longest`` stays within ``max_tokens``
    and whose count stays within ``max_batch``. A row longer than ``max_tokens`` gets a batch
    of its own.
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches, current, longest = [], [], 0
    for index in order:
        size = lengths[index]
        widest = max(longest, size)
        if current and (len(current) >= max_batch or widest * (len(current) + 1) > max_tokens):
            batches.append(current)
            current, widest = [], size
        current.append(index)
        longest = widest
    if current:
        batches.append(current)
    return batches
