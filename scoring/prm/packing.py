"""Rows that share a prefix, scored together: merged into a prefix tree and read in one pass.

PRM800K labels a tree, not a list: at each step of a trajectory the raters saw several
candidate completions, and each alternative is scored (and trained) as the trajectory's prefix
followed by the alternative. Run one row per alternative and the prefix is pushed through the
model again for every one of them; a candidate pool does the same with the problem, shared by
all of a problem's candidates.

``pack`` merges rows into prefix trees: a token shared by several rows (the same tokens before
it, the same position) is one token of the packed row, and each row's own tail hangs off the
last token it shares. A packed row lists the tree's tokens depth first, with

- ``position_ids``: a token's position in the rows it belongs to (its depth in the tree), so
  absolute and rotary position encodings see what they would in the row alone;
- ``parents``: the index of the token before it in those rows (-1 for the first).

``tree_mask`` lets a token attend to itself and its ancestors, nothing else. A row's tokens
thus see exactly the tokens they see in the row alone, at the same positions: the packed pass
computes the same hidden states as one pass per row (up to floating-point summation order,
which the tests bound at 1e-5 in float32). Prefix causality is untouched: what a separator
sees is still the problem and the steps before it.

A packed row holds at most ``max_tokens`` tokens, because the dense mask's attention cost grows
with the square of its length; a row that would pass it starts the next packed row, which
takes the shared prefix again. Within that limit a row joins a tree only where that costs less
than reading it alone (``pair_cost``).
"""
import dataclasses

import torch

from scoring.prm.inputs import collate


@dataclasses.dataclass
class Packed:
    """A prefix tree of rows as one sequence: the tokens depth first, their positions and parents."""

    input_ids: list
    position_ids: list
    parents: list

    def __len__(self):
        return len(self.input_ids)

    @property
    def is_linear(self):
        """True when the tree is one plain row (each token follows the one before it)."""
        return all(parent == index - 1 for index, parent in enumerate(self.parents))


def _common_prefix(a, b):
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def pack(rows, *, max_tokens, pair_cost=0.0, share=True):
    """Merge ``rows`` (token id lists) into prefix trees of at most ``max_tokens`` tokens each.

    A row joins the tree in hand when that costs less than reading it alone: the tokens it adds
    plus the attention the wider tree costs, against its own tokens and attention (``pair_cost``
    is attention's cost per pair of tokens over the weights' cost per token; see ``pair_cost()``).
    So a trajectory's prefix is worth a tree; a few common first words are not.
    Without ``share`` every row is a tree of its own.

    Returns ``(packed, where)``: the ``Packed`` rows, and per input row ``(p, index)`` where
    ``packed[p]`` holds it and ``index[t]`` is the packed index of its token ``t``. A row longer
    than ``max_tokens`` gets a packed row of its own (it is never cut).
    """
    # Sorted, a row shares with an earlier row at most what it shares with the one just before
    # it, whose path is the one in hand: a depth-first walk of the tree.
    order = sorted(range(len(rows)), key=lambda i: rows[i])
    packed, where = [], [None] * len(rows)
    current, path, previous = None, [], ()
    for i in order:
        tokens = rows[i]
        shared = _common_prefix(previous, tokens) if share and current is not None else 0
        if shared:
            width, added = len(current), len(tokens) - shared
            in_tree = added + pair_cost * ((width + added) ** 2 - width ** 2)
            if width + added > max_tokens or in_tree >= len(tokens) + pair_cost * len(tokens) ** 2:
                shared = 0  # no room, or cheaper alone: a new tree
        if shared == 0:
            current = Packed([], [], [])
            packed.append(current)
        del path[shared:]
        for depth in range(shared, len(tokens)):
            current.input_ids.append(tokens[depth])
            current.position_ids.append(depth)
            current.parents.append(path[-1] if path else -1)
            path.append(len(current) - 1)
        where[i] = (len(packed) - 1, list(path[: len(tokens)]))
        previous = tokens
    return packed, where


# Attention with a tree's mask runs at about 1.5 times the cost its FLOPs predict, against the
# weights' matrix products, as measured with MiniLM on the CPU (docs/prm.md, "Training throughput").
ATTENTION_OVERHEAD = 1.5


def pair_cost(model):
    """Attention's cost per pair of tokens over the weights' cost per token, for ``model``: about
    ``4 x hidden x layers`` FLOPs against ``2 x`` its non-embedding parameters."""
    config = next(m.config for m in model.modules() if hasattr(m, "config"))
    config = config.get_text_config() if hasattr(config, "get_text_config") else config
    embeddings = sum(m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Embedding))
    weights = max(1, sum(p.numel() for p in model.parameters()) - embeddings)
    return ATTENTION_OVERHEAD * 4 * config.hidden_size * config.num_hidden_layers / (2 * weights)


def tree_mask(parents, width=None):
    """Bool ``(width, width)``: token i may attend to token j when j is i or an ancestor of i.

    Rows past ``len(parents)`` (padding) attend to themselves only, so no row of the mask is
    empty (an empty row gives NaN in attention, which masked keys would still carry).
    """
    width = width or len(parents)
    allowed = torch.zeros((width, width), dtype=torch.bool)
    for index, parent in enumerate(parents):
        if parent >= 0:
            allowed[index] = allowed[parent]
        allowed[index, index] = True
    for index in range(len(parents), width):
        allowed[index, index] = True
    return allowed


# A tree holds at most this many contexts' worth of tokens. Its attention is dense over the
# whole tree, so a wider tree spends more on attention than sharing saves (MiniLM at 1024
# tokens: attention about half the cost of the weights).
TREE_CONTEXTS = 2


def tree_limit(max_length):
    """The most tokens a tree of rows up to ``max_length`` tokens may hold."""
    return TREE_CONTEXTS * max_length


def collate_units(packed, *, pad_token_id):
    """``collate_packed``, or for plain rows only (no branches) the plain form: a 2D padding mask
    and no positions, which keeps a decoder's own causal attention (and its fast kernels)."""
    if not all(row.is_linear for row in packed):
        return collate_packed(packed, pad_token_id=pad_token_id)
    return collate(packed, pad_token_id=pad_token_id)  # it reads input_ids and len(), as a Packed has


def collate_packed(packed, *, pad_token_id):
    """Right-pad ``packed`` rows into ``input_ids``, ``position_ids`` and a 4D bool ``attention_mask``.

    The mask, ``(B, 1, T, T)`` with True where attention is allowed, already holds causality
    and padding; a model takes it as it is (``scoring.prm.model.PRM.attention_mask``).
    """
    width = max(len(row) for row in packed)
    input_ids = torch.full((len(packed), width), pad_token_id, dtype=torch.long)
    position_ids = torch.zeros((len(packed), width), dtype=torch.long)
    mask = torch.empty((len(packed), 1, width, width), dtype=torch.bool)
    for i, row in enumerate(packed):
        input_ids[i, : len(row)] = torch.tensor(row.input_ids, dtype=torch.long)
        position_ids[i, : len(row)] = torch.tensor(row.position_ids, dtype=torch.long)
        mask[i, 0] = tree_mask(row.parents, width)
    return {"input_ids": input_ids, "position_ids": position_ids, "attention_mask": mask}
