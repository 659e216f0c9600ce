"""Prefix trees: rows that begin alike read in one pass, with the scores of one pass per row."""
import random

import pytest
import torch

from scoring.prm.data import read_prm800k
from scoring.prm.inputs import collate, encode_solution, pad_id
from scoring.prm.model import CORRECT, new_prm
from scoring.prm.packing import collate_packed, pack, pair_cost, tree_mask
from scoring.prm.scorer import encode_solutions, score_solutions

from tests.scoring.conftest import ARCHITECTURES


def _ancestors(packed, index):
    chain = []
    while index >= 0:
        chain.append(index)
        index = packed.parents[index]
    return chain[::-1]


def _check_layout(rows, packed, where):
    """Every row is exactly the path to its last token, at its own positions."""
    for tokens, (p, index) in zip(rows, where):
        tree = packed[p]
        assert [tree.input_ids[i] for i in index] == tokens
        assert [tree.position_ids[i] for i in index] == list(range(len(tokens)))
        assert _ancestors(tree, index[-1]) == index


def test_rows_that_share_a_prefix_share_its_tokens():
    trunk = list(range(100, 130))
    rows = [trunk + [1, 2, 3], trunk[:20] + [7, 8], trunk + [1, 2, 4, 5], [9] * 25, trunk + [1, 2, 3]]
    packed, where = pack(rows, max_tokens=1000)
    _check_layout(rows, packed, where)
    assert len(packed) == 2  # the trunk's tree, and the row with nothing in common
    tree = packed[where[0][0]]
    # 30 trunk tokens once, then 1 2 3 | 4 5 (after the shared 1 2) and 7 8 after token 20
    assert len(tree) == 30 + 3 + 2 + 2
    assert where[4] == where[0]  # a repeated row is the same tokens
    assert packed[where[3][0]].is_linear and not tree.is_linear


def test_a_tree_stops_at_max_tokens_and_takes_the_prefix_again():
    trunk = list(range(100, 140))
    rows = [trunk + [i] * 10 for i in range(1, 9)]
    packed, where = pack(rows, max_tokens=100)
    _check_layout(rows, packed, where)
    assert all(len(tree) <= 100 for tree in packed)
    assert len(packed) == 2 and [len(tree) for tree in packed] == [40 + 6 * 10, 40 + 2 * 10]
    # a row longer than the limit is never cut: it gets a tree of its own
    packed, where = pack([list(range(200)), list(range(20))], max_tokens=100)
    _check_layout([list(range(200)), list(range(20))], packed, where)


def test_a_row_joins_a_tree_only_where_that_costs_less_than_reading_it_alone():
    rows = [[1, 2, 3] + [5] * 200, [1, 2, 3] + [6] * 200, [1, 2, 3] + [5] * 190 + [7] * 10]
    # without attention's cost any shared token is worth it
    assert len(pack(rows, max_tokens=1000)[0]) == 1
    assert len(pack(rows, max_tokens=1000, share=False)[0]) == 3
    # with it, three shared tokens are not worth a tree twice as wide; 193 are
    packed, where = pack(rows, max_tokens=1000, pair_cost=1e-3)
    assert len(packed) == 2 and where[0][0] == where[2][0] != where[1][0]


def test_random_rows_keep_their_layout():
    generator = random.Random(7)
    rows = []
    for _ in range(200):
        base = rows[generator.randrange(len(rows))] if rows and generator.random() < 0.8 else []
        cut = generator.randint(0, len(base))
        rows.append(base[:cut] + [generator.randint(0, 5) for _ in range(generator.randint(1, 30))])
    packed, where = pack(rows, max_tokens=300)
    _check_layout(rows, packed, where)
    assert sum(map(len, packed)) < 0.7 * sum(map(len, rows))
    assert all(len(tree) <= 300 for tree in packed)


def test_the_mask_allows_ancestors_only_and_padding_attends_to_itself():
    # 0 -> 1 -> 2, and 1 -> 3 -> 4: token 4 sees 0 1 3 4, not 2
    mask = tree_mask([-1, 0, 1, 1, 3], width=6)
    assert mask[4].nonzero().flatten().tolist() == [0, 1, 3, 4]
    assert mask[2].nonzero().flatten().tolist() == [0, 1, 2]
    assert mask[5].nonzero().flatten().tolist() == [5]
    assert torch.equal(tree_mask([-1, 0, 1, 2]), torch.ones(4, 4, dtype=torch.bool).tril())
    batch = collate_packed(pack([[1] * 20 + [2], [1] * 20 + [3, 4]], max_tokens=100)[0], pad_token_id=0)
    assert batch["attention_mask"].shape == (1, 1, 23, 23)
    assert batch["position_ids"].tolist() == [list(range(21)) + [20, 21]]


@pytest.fixture(scope="module")
def records(data_dir):
    """PRM800K phase-1 test records with their alternatives: the trajectories' prefixes repeat."""
    examples = read_prm800k(data_dir / "prm800k" / "phase1_test.reconstructed.jsonl.gz", limit=3)
    return [(e.problem, e.steps) for e in examples]


@pytest.mark.parametrize("arch", [*ARCHITECTURES, "bert-eager"])
@pytest.mark.parametrize("max_length", [None, 200])  # 200: long solutions go through the window
def test_shared_prefixes_score_as_one_pass_per_row(tiny_bases, records, arch, max_length):
    prm = new_prm(tiny_bases[arch.removesuffix("-eager")], device="cpu", seed=5, max_length=max_length)
    if arch.endswith("-eager"):
        prm.backbone.set_attn_implementation("eager")
    rows = [row for rows in encode_solutions(prm, records) for row in rows]
    packed, _ = pack([row.input_ids for row in rows], max_tokens=2 * prm.max_length, pair_cost=pair_cost(prm))
    assert sum(map(len, packed)) < sum(map(len, rows)) / 3  # the test reads real trees
    if max_length:
        assert any(len(r) > 1 for r in encode_solutions(prm, records))
    shared = score_solutions(prm, records, max_batch=3)
    alone = score_solutions(prm, records, share_prefixes=False)
    assert len(shared) == len(records) > 40
    for a, b in zip(shared, alone):
        assert a.unscored_steps == b.unscored_steps
        assert [s is None for s in a.step_scores] == [s is None for s in b.step_scores]
        assert [s for s in a.step_scores if s is not None] == pytest.approx(
            [s for s in b.step_scores if s is not None], abs=1e-5)


def test_a_tree_scores_each_alternative_as_its_prefix_alone(tiny_bases, records):
    """Against the naive way itself: the alternative's own row, one forward pass, no batch."""
    prm = new_prm(tiny_bases["bert"], device="cpu", seed=5)
    shared = score_solutions(prm, records)
    for (problem, steps), result in list(zip(records, shared))[::7]:
        row = encode_solution(prm.tokenizer, problem, steps, step_token_id=prm.step_token_id,
                              max_length=prm.max_length)[-1]
        batch = collate([row], pad_token_id=pad_id(prm.tokenizer))
        with torch.inference_mode():
            logits = prm(batch["input_ids"], batch["attention_mask"])
        naive = torch.softmax(logits[0, row.step_positions[-1]], -1)[CORRECT].item()
        assert result.step_scores[-1] == pytest.approx(naive, abs=1e-5)


def test_a_changed_alternative_moves_only_its_own_score(tiny_bases, records):
    """Siblings in a tree do not see each other: the mask, not luck, keeps the scores apart."""
    prm = new_prm(tiny_bases["bert"], device="cpu", seed=5)
    problem, steps = records[0]
    siblings = [(problem, steps[:3] + [text]) for text in ("We add 3 and 4.", "We multiply by 2.", "So x = 12.")]
    before = score_solutions(prm, siblings)
    siblings[1] = (problem, steps[:3] + ["Something else entirely, and long enough to matter here."])
    after = score_solutions(prm, siblings)
    assert after[0].step_scores == pytest.approx(before[0].step_scores, abs=1e-5)
    assert after[2].step_scores == pytest.approx(before[2].step_scores, abs=1e-5)
    assert abs(after[1].step_scores[-1] - before[1].step_scores[-1]) > 1e-4
