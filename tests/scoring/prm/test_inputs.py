"""The one input builder: layout, whole-step truncation, right padding, length batching."""
import pytest

from scoring.prm.inputs import collate, encode, encode_solution, length_batches, pad_id
from scoring.prm.model import load_tokenizer, new_prm

PROBLEM = "What is 2 + 3?"
STEPS = ["Two plus three is five.", "So the answer is 5.", "# Answer\n\n5"]


@pytest.fixture(scope="module")
def bert_prm(tiny_bases):
    return new_prm(tiny_bases["bert"], device="cpu")


def test_layout_is_start_problem_then_each_step_and_its_separator(bert_prm):
    tok, sep = bert_prm.tokenizer, bert_prm.step_token_id
    row = encode(tok, PROBLEM, STEPS, step_token_id=sep, max_length=512)
    expected = [tok.cls_token_id] + tok(PROBLEM, add_special_tokens=False)["input_ids"]
    for step in STEPS:
        expected += tok(step, add_special_tokens=False)["input_ids"] + [sep]
    assert row.input_ids == expected
    assert [row.input_ids[p] for p in row.step_positions] == [sep] * 3
    assert row.n_scored == row.n_steps == 3
    assert row.input_ids.count(sep) == 3  # the separator never comes out of ordinary text


def test_decoder_tokenizer_starts_with_bos_and_pads_with_eos(tiny_bases):
    tok = load_tokenizer(tiny_bases["llama"])
    assert tok.cls_token_id is None and tok.pad_token_id is None
    row = encode(tok, PROBLEM, STEPS, step_token_id=7, max_length=512)
    assert row.input_ids[0] == tok.bos_token_id
    assert pad_id(tok) == tok.eos_token_id


def test_a_long_solution_keeps_whole_steps_and_leaves_the_rest_unscored(bert_prm):
    tok, sep = bert_prm.tokenizer, bert_prm.step_token_id
    full = encode(tok, PROBLEM, STEPS, step_token_id=sep, max_length=512)
    cut = full.step_positions[1] + 1  # room for exactly two steps
    for max_length in (cut, cut + 1, full.step_positions[2]):
        row = encode(tok, PROBLEM, STEPS, step_token_id=sep, max_length=max_length)
        assert row.n_scored == 2 and row.n_steps == 3
        assert row.input_ids == full.input_ids[:cut]  # never a part of a step
    problem_only = len(tok(PROBLEM, add_special_tokens=False)["input_ids"]) + 1
    row = encode(tok, PROBLEM, STEPS, step_token_id=sep, max_length=problem_only)
    assert row.n_scored == 0 and row.input_ids == []


LONG = [f"Step {i}: we add {i} and {i + 1} to get {2 * i + 1}, which we keep." for i in range(12)]


def _windows(prm, steps, max_length, problem=PROBLEM):
    return encode_solution(prm.tokenizer, problem, steps, step_token_id=prm.step_token_id, max_length=max_length)


def test_a_solution_that_fits_is_one_row_whatever_the_overflow(bert_prm):
    tok, sep = bert_prm.tokenizer, bert_prm.step_token_id
    one = encode(tok, PROBLEM, STEPS, step_token_id=sep, max_length=512)
    for overflow in ("window", "unscored"):
        assert encode_solution(tok, PROBLEM, STEPS, step_token_id=sep, max_length=512, overflow=overflow) == [one]
    with pytest.raises(ValueError, match="unknown overflow 'slide'"):
        encode_solution(tok, PROBLEM, STEPS, step_token_id=sep, max_length=512, overflow="slide")


def test_the_window_scores_every_step_once_in_rows_that_repeat_the_problem(bert_prm):
    tok, sep = bert_prm.tokenizer, bert_prm.step_token_id
    prefix = [tok.cls_token_id] + tok(PROBLEM, add_special_tokens=False)["input_ids"]
    segments = [tok(step, add_special_tokens=False)["input_ids"] + [sep] for step in LONG]
    max_length = len(prefix) + 3 * max(map(len, segments))  # about three steps a row
    rows = _windows(bert_prm, LONG, max_length)
    assert len(rows) >= 4
    scored = [row.first_step + i for row in rows for i in range(row.n_scored)]
    assert scored == list(range(len(LONG)))  # every step once, in order
    for row in rows:
        assert len(row) <= max_length and row.n_steps == len(LONG)
        assert row.input_ids[: len(prefix)] == prefix
        # the context: whole steps just before the first scored one, then the scored steps
        body = row.input_ids[len(prefix):]
        start = next(j for j in range(row.first_step + 1) if sum(map(len, segments[j:row.first_step + row.n_scored])) == len(body))
        assert body == sum(segments[start:row.first_step + row.n_scored], [])
        assert sum(map(len, segments[start:row.first_step])) <= (max_length - len(prefix)) // 2
        assert [row.input_ids[p] for p in row.step_positions] == [sep] * row.n_scored
        assert row.step_positions[-1] == len(row) - 1
    assert any(row.first_step > 0 and len(row) > len(prefix) + len(segments[row.first_step]) for row in rows[1:]), \
        "some later row carries earlier steps as context"


def test_the_row_that_scores_step_k_is_the_row_of_the_prefix_ending_at_k(bert_prm, tiny_bases):
    """What makes a window causal: the steps after k change nothing in the row that reads k."""
    words = load_tokenizer(tiny_bases["llama"])
    for tok, sep in ((bert_prm.tokenizer, bert_prm.step_token_id), (words, 7)):
        for max_length in (48, 64, 100):
            rows = encode_solution(tok, PROBLEM, LONG, step_token_id=sep, max_length=max_length)
            for k in range(len(LONG)):
                alone = encode_solution(tok, PROBLEM, LONG[: k + 1], step_token_id=sep, max_length=max_length)
                row = next((r for r in rows if r.first_step <= k < r.first_step + r.n_scored), None)
                if row is None:  # unscored in the whole solution: unscored in its prefix too
                    assert all(r.first_step + r.n_scored <= k for r in alone)
                    continue
                cut = row.step_positions[k - row.first_step] + 1
                assert alone[-1].input_ids == row.input_ids[:cut]
                assert alone[-1].first_step == row.first_step and alone[-1].step_positions[-1] == cut - 1


def test_a_step_too_long_for_any_row_is_unscored_and_the_next_row_starts_after_it(bert_prm):
    steps = LONG[:3] + ["an endless step " * 40] + LONG[3:6]
    rows = _windows(bert_prm, steps, 80)
    scored = [row.first_step + i for row in rows for i in range(row.n_scored)]
    assert 3 not in scored and set(scored) == {0, 1, 2, 4, 5, 6}
    after = next(row for row in rows if row.first_step == 4)
    assert len(after) <= 80
    nothing = _windows(bert_prm, steps, 8)  # not even the problem fits
    assert len(nothing) == 1 and nothing[0].n_scored == 0 and nothing[0].input_ids == []


def test_collate_pads_on_the_right(bert_prm):
    tok, sep = bert_prm.tokenizer, bert_prm.step_token_id
    long = encode(tok, PROBLEM, STEPS, step_token_id=sep, max_length=512)
    short = encode(tok, PROBLEM, STEPS[:1], step_token_id=sep, max_length=512)
    batch = collate([long, short], pad_token_id=0)
    assert batch["input_ids"].shape == (2, len(long))
    assert batch["attention_mask"][1].tolist() == [1] * len(short) + [0] * (len(long) - len(short))
    assert batch["input_ids"][1, len(short):].eq(0).all()
    assert batch["input_ids"][0].tolist() == long.input_ids


def test_length_batches_cover_every_row_once_within_the_budget():
    lengths = [5, 100, 7, 98, 50, 3, 51, 99, 6, 300]
    batches = length_batches(lengths, max_tokens=200, max_batch=3)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) <= 3
        assert len(batch) == 1 or len(batch) * max(lengths[i] for i in batch) <= 200
    assert batches[0] == [9]  # longer than the budget: alone
    assert [lengths[i] for i in batches[1]] == [100, 99]  # similar lengths together
    # sorted by length: every row of a batch is at least as long as every row of the next
    for this, following in zip(batches, batches[1:]):
        assert min(lengths[i] for i in this) >= max(lengths[i] for i in following)
