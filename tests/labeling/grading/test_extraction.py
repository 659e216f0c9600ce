"""Final-answer extraction on real lines of real generators (issue #18).

Every line here is copied word for word from a data file of the repository, and a test checks
that it is still there: ProcessBench GSM8K's last steps (its twelve generators, each with the
people's ``final_answer_correct``), GSM8K's example model solutions, and model-written steps of
PRM800K's phase 1 (MATH problems, each rated by a labeller). Each line must give the answer and
the form named, and be graded as the people labelled it: the near misses (a wrong answer beside
the right number, an interval's end, half of a pair of roots) stay wrong.
"""
import gzip
import json
import threading

import pytest

from labeling.data import open_text
from labeling.grading.answers import grade
from labeling.grading.extraction import MAX_UNDELIMITED_CHARS, TAIL_CHARS, extract_answer, find_answer
from labeling.imports import run_import
from labeling.models import Project, Solution
from tests.factories import make_project

# (ProcessBench GSM8K id, the record's last step, the answer found, the form that found it)
PROCESSBENCH = [
    # Meta-Llama-3-8B-Instruct, Llama-3.1-8B-Instruct: a bold box; "$" inside the box
    ("gsm8k-7", "Therefore, the Adams family has made **\\boxed{1425}** chocolate chip cookies!", "1425", "boxed"),
    ("gsm8k-5", "So, Judy makes **\\boxed{$7455}** in one week.", "7455", "boxed"),
    # Meta-Llama-3-8B-Instruct: a box whose "\$" lost its "$"
    ("gsm8k-329", "Therefore, Annika has $15 left. The final answer is: \\boxed{\\15}", "15", "boxed"),
    # Meta-Llama-3-70B-Instruct: money in the box, a thousands separator
    ("gsm8k-33", "To calculate the total cost, we multiply 24 by 12: 24 x 12 = 288. So, Mario needs to spend "
     "$\\boxed{\\$288.00}$ to buy snowshoes for all his dogs.", "\\$288.00", "boxed"),
    ("gsm8k-40", "So, the final answer is: \\boxed{\\$65,760}.", "\\$65,760", "boxed"),  # truth 65,960
    # Llama-3.1-8B-Instruct: a percentage
    ("gsm8k-9", "Therefore, the percentage discount obtained by Mr. Roger's friend from the original price is: "
     "\\(\\boxed{70\\%}\\)", "70\\%", "boxed"),
    # Qwen2-7B-Instruct, Qwen2-1.5B-Instruct: "The answer is" and a box
    ("gsm8k-0", "To find the difference, subtract the number of white flamingos from the number of pink flamingos: "
     "\\(36 - 6 = 30\\). Therefore, at noon on Sunday, there were 30 more pink plastic flamingos out than white "
     "plastic flamingos. The answer is \\(\\boxed{30}\\).", "30", "boxed"),
    ("gsm8k-199", "To find out how many pounds of carrots Daisy bought, we need to add up the weights of the potatoes, "
     "sweet potatoes, and carrots: 5 + 10 + 7 = 22 pounds. The answer is: $\\boxed{22}$.", "22", "boxed"),
    # Qwen2.5-72B-Instruct, Qwen2.5-Math-7B-Instruct, Qwen2.5-1.5B-Instruct: a box, a unit after it
    ("gsm8k-57", "Therefore, the price of carrots after three years will be \\(\\boxed{139}\\).", "139", "boxed"),
    ("gsm8k-1", "Therefore, the total weight of the books Cindy is carrying is \\(\\boxed{21}\\) pounds.", "21", "boxed"),
    ("gsm8k-12", "Therefore, Avery will spend \\boxed{35} dollars on place settings for her holiday dinner.", "35", "boxed"),
    ("gsm8k-138", "Since Mazie originally had 52 marbles, the number of marbles she has left is: \\[ 52 - 50 = 2 \\] "
     "However, we are specifically asked how many marbles Mazie gave to Darla, which we already determined is 25. "
     "Thus, the number of marbles Mazie gave to Darla is \\(\\boxed{25}\\).", "25", "boxed"),
    # Qwen2.5-Math-72B-Instruct, Qwen2.5-7B-Instruct, Qwen2.5-1.5B-Instruct: "The final answer is" and a box
    ("gsm8k-278", "Finally, calculate the percentage chance that a baby wearing a bow is wearing purple. The number "
     "of purple-wearing babies who wear bows is 2. The total number of babies who wear bows is 4. Therefore, the "
     "percentage chance that a baby wearing a bow is wearing purple is: \\[ \\left( \\frac{2}{4} \\right) \\times "
     "100 = 50\\% \\] The final answer is \\(\\boxed{50}\\).", "50", "final answer is"),
    ("gsm8k-136", "Therefore, the final answer is \\(\\boxed{0}\\).", "0", "final answer is"),
    ("gsm8k-108", "Thus, Susan receives 5.5 magazines every year, which implies she receives 5 whole magazines and "
     "some fraction of another magazine. So, the final answer is: \\[ \\boxed{5} \\]", "5", "final answer is"),
    # Llama-3.1-8B-Instruct, Qwen2-72B-Instruct, Qwen2-7B-Instruct: "the final answer is" after a sentence
    ("gsm8k-225", "Therefore, the mechanic earned $40 more revenue on Thursday compared to Friday. The final answer is: "
     "$\\boxed{40}$", "40", "final answer is"),
    ("gsm8k-219", "So, the number of yellow balloons in the bundle was **6**. The final answer is \\(\\boxed{6}\\).",
     "6", "final answer is"),
    ("gsm8k-118", "So, the final answer is: \\[ \\boxed{33} \\]", "33", "final answer is"),
    ("gsm8k-209", "In total, Randy has \\(10 + 7 + 6 = 23\\) cookies now. The final answer is \\(\\boxed{23}\\) cookies.",
     "23", "final answer is"),
    # Qwen2-7B-Instruct: "**Answer:**", "Answer:", "the answer is" without a box
    ("gsm8k-299", "Therefore, Verna received $7.00 in change. **Answer:** Verna received $7.00 in change.",
     "7.00", "answer:"),
    ("gsm8k-39", "Therefore, John has 180 minutes to nap. Answer: John has 180 minutes to nap.", "180", "answer:"),
    ("gsm8k-91", "Finally, let's determine the total items used. Flashlights: 16. Candles: 36. Adding these together "
     "gives us a total of \\(16 + 36 = 52\\) candles and flashlights that Brianna's family uses when the lights go "
     "out. Therefore, the answer is \\(52\\) candles and flashlights.", "52", "answer"),
    # Qwen2-1.5B-Instruct, Qwen2-7B-Instruct, Llama-3.1-8B-Instruct: a closing sentence, no anchor
    ("gsm8k-3", "So, there are 35 students who like to play video games.", "35", "closing sentence"),
    ("gsm8k-42", "So, Josh made a profit of $195,000.", "195000", "closing sentence"),
    ("gsm8k-19", "Finally, to find the total number of reports stapled, we multiply the number of sets (76) by the "
     "number of reports per set (30): \\(76 \\times 30 = 2280\\). Therefore, Vince stapled a total of 2,280 reports.",
     "2280", "closing sentence"),
    ("gsm8k-338", "Therefore, the total cost for Angela's installations will be \\$324.", "324", "closing sentence"),
    ("gsm8k-368", "Finally, add the earnings from both types of lessons: \\(\\$320 + \\$120 = \\$440\\). Thus, Charlie "
     "will make a total of \\(\\$440\\) for the day.", "440", "closing sentence"),
    ("gsm8k-353", "Therefore, Freda used **12 tomatoes** to make her batch of tomato sauce.", "12", "closing sentence"),
    # ... whose last number is not the answer: the result of the last "=" is
    ("gsm8k-238", "Finally, to find the total time spent on meditation and yoga in 4 weeks, we add the two amounts "
     "together: \\[14 \\text{ hours (meditation)} + 20 \\text{ hours (yoga)} = 34 \\text{ hours}\\] So, Charisma "
     "spends a total of 34 hours on meditation and yoga practice in 4 weeks.", "34", "closing sentence"),
    ("gsm8k-105", "To find the speed for the remaining 6 miles, we divide the remaining distance by the remaining "
     "time: \\[ \\text{Speed for Remaining Distance} = \\frac{\\text{Remaining Distance}}{\\text{Remaining Time}} = "
     "\\frac{6 \\text{ miles}}{3 \\text{ hours}} = 2 \\text{ mph} \\] Therefore, Marissa needs to walk at a speed of "
     "2 miles per hour for the remaining 6 miles of the trail to achieve an average speed of 4 miles per hour for "
     "the entire hike.", "2", "closing sentence"),
    # ... or a displayed equation chain: its value
    ("gsm8k-290", "Since Zack's locker is half the size of Timothy's locker, we can find the volume of Timothy's "
     "locker by multiplying the volume of Zack's locker by 2. Therefore, Timothy's locker is: \\[ \\text{Volume of "
     "Timothy's locker} = 20 \\times 2 = 40 \\text{ cubic inches} \\]", "40 \\text{ cubic inches}", "closing sentence"),
]

# Labelled wrong, the right number stands in the line, and the grading says wrong too.
PROCESSBENCH_NEAR_MISSES = [
    ("gsm8k-128", "Therefore, the cashier gives the mother $\\boxed{5.01}$ as change.", "5.01", "boxed"),  # truth 5
    ("gsm8k-164", "Initially, there were 24 liters of water. After the girls and the boy took their shares, 24 - 10 = "
     "14 liters of water were left. Therefore, the amount of water left is: \\boxed{14}", "14", "boxed"),  # truth 10
    ("gsm8k-99", "Thus, the cost per contact when Pete buys 2 boxes is \\(\\boxed{1.00}\\).", "1.00", "boxed"),  # 2
]

# (a model-written step of PRM800K phase 1, its MATH problem's answer, the answer found, the form,
#  the labeller's rating): GPT-4 solutions, rated +1 when right.
PRM800K = [
    ("Ok, so the answer is $(2,+\\infty)$.", "(2,\\infty)", "(2,+\\infty)", "answer", 1),
    ("So the answer is $[2, +\\infty)$.", "(2,\\infty)", "[2, +\\infty)", "answer", -1),  # closed end
    ("Therefore, the answer is $4210_5$.", "4210_{5}", "4210_5", "answer", 1),
    ("Right. So the answer is $x=6$.", "6", "x=6", "answer", 1),
    ("Right, so the answer is 3 treeks.", "3", "3", "answer", 1),
    ("So the answer is $48 - 63 = -15$.", "63", "-15", "answer", -1),  # 63 in the line
    ("So the final answer is $63 - 48 = 15$", "63", "15", "final answer is", -1),
    ("And so the final answer is $\\boxed{\\frac{\\sqrt{3}}{3}}$", "\\frac{\\sqrt{3}}{3}", "\\frac{\\sqrt{3}}{3}",
     "final answer is", 1),
    ("So the answer is $210\\equiv\\boxed{56}\\pmod{83}$.", "44", "56", "boxed", -1),
    ("And since we're given that $a_1=2$, the answer is $2^9=\\boxed{512}$.", "-1", "512", "boxed", -1),
    ("So $a = 41$ is our answer.", "41", "a = 41", "closing sentence", 1),
    ("And $\\dfrac{5}{9}$ is our answer.", "\\frac 59", "\\dfrac{5}{9}", "closing sentence", 1),
    # Answers without "$" (issue #26): a choice letter before its words, an equation chain's value
    ("So the answer is (A) Line", "A", "(A)", "answer", 1),
    ("So our final answer is 1/4 * 1/2 = 1/8.", "1/8", "1/8", "final answer is", 1),
]
# Phase 1 train, the last step of "Find all the solutions to ..." (answer \pm 8, \pm 1): boxes
# joined by "and" are one answer; one of the two boxes alone is half of it.
PRM800K_ROOTS = [
    ("So the solutions are $\\boxed{\\pm 8}$ and $\\boxed{\\pm 1}$.", "\\pm 8, \\pm 1", 1),
    ("Therefore, the only roots of the equation are $\\boxed{\\pm8}$ and $\\boxed{\\pm1}$.", "\\pm8, \\pm1", 1),
    ("So the only solutions are $\\boxed{-8, -1, 1, 8}$.", "-8, -1, 1, 8", 1),
    ("So the only solutions to the equation are $\\boxed{\\pm 8}$.", "\\pm 8", -1),
]


@pytest.fixture(scope="module")
def processbench(data_dir):
    with gzip.open(data_dir / "processbench" / "gsm8k.json.gz", "rt", encoding="utf-8") as f:
        return {r["id"]: r for r in json.load(f)}


@pytest.fixture(scope="module")
def gsm8k_truth(data_dir):
    """The GSM8K test answer of each ProcessBench record, by problem text."""
    with open_text(data_dir / "gsm8k" / "test.jsonl.gz") as f:
        answers = {r["question"].strip(): r["answer"].rsplit("####", 1)[1].strip() for r in map(json.loads, f)}
    return lambda record: answers[record["problem"].strip()]


@pytest.fixture(scope="module")
def prm800k_steps(data_dir):
    """``{step text: rating}`` of every rated model-written step of PRM800K phase 1."""
    steps = {}
    for name in ("phase1_test", "phase1_train"):
        with open_text(data_dir / "prm800k" / f"{name}.reconstructed.jsonl.gz") as f:
            for record in map(json.loads, f):
                for step in record["label"]["steps"]:
                    steps.update((c["text"], c["rating"]) for c in step["completions"])
    return steps


@pytest.mark.parametrize("record_id, line, answer, form", PROCESSBENCH + PROCESSBENCH_NEAR_MISSES)
def test_processbench_lines_graded_as_labelled(processbench, gsm8k_truth, record_id, line, answer, form):
    record = processbench[record_id]
    assert record["steps"][-1] == line  # the line is real
    assert find_answer(line) == (answer, form)
    assert find_answer(record["steps"]) == (answer, form)  # the whole solution reads the same
    assert grade(answer, gsm8k_truth(record)) is record["final_answer_correct"]


@pytest.mark.parametrize("record_id, line, answer, form", PROCESSBENCH_NEAR_MISSES)
def test_near_misses_beside_the_right_number_stay_wrong(processbench, gsm8k_truth, record_id, line, answer, form):
    truth = gsm8k_truth(processbench[record_id])
    assert truth in line and answer != truth
    assert grade(extract_answer(line), truth) is False


def test_the_lines_cover_every_generator(processbench):
    quoted = {processbench[record_id]["generator"] for record_id, *_ in PROCESSBENCH + PROCESSBENCH_NEAR_MISSES}
    assert quoted == {r["generator"] for r in processbench.values()}


@pytest.mark.parametrize("line, truth, answer, form, rating", PRM800K)
def test_prm800k_math_lines_graded_as_rated(prm800k_steps, line, truth, answer, form, rating):
    assert prm800k_steps[line] == rating  # the line is real, and so is its rating
    assert find_answer(line) == (answer, form)
    assert grade(answer, truth) is (rating == 1)


@pytest.mark.parametrize("line, answer, rating", PRM800K_ROOTS)
def test_boxes_joined_by_and_are_one_answer(prm800k_steps, line, answer, rating):
    assert prm800k_steps[line] == rating
    assert find_answer(line) == (answer, "boxed")
    assert grade(answer, "\\pm 8, \\pm 1") is (rating == 1)


def test_boxes_joined_by_or_are_one_answer_spelt_twice(data_dir):
    with open_text(data_dir / "math" / "math500.jsonl.gz") as f:
        record = next(r for r in map(json.loads, f) if r["unique_id"] == "test/number_theory/459.json")
    assert record["solution"].endswith("= \\boxed{15\\frac{39}{40}},$ or $\\boxed{\\frac{639}{40}}$ inches.")
    assert find_answer(record["solution"]) == (record["answer"], "boxed")
    assert record["answer"] == "\\frac{639}{40}"


def test_gsm8k_example_solutions(data_dir):
    with open_text(data_dir / "gsm8k" / "example_model_solutions.jsonl.gz") as f:
        records = [json.loads(line) for line in f]
    # The "A: x" line every finished example ends with.
    first = records[0]["175b_verification"]
    assert first["solution"].endswith("She sells her eggs for $2 per egg and has 9 available for sale so 2 * 9 = "
                                      "$<<2*9=18>>18 per day\nA: 18")
    assert find_answer(first["solution"]) == ("18", "A:")
    assert grade("18", "18") is first["is_correct"] is True
    # A solution cut off mid-line has no "A:": its last expression is no answer to 64.
    cut = records[5]["175b_finetuning"]
    assert cut["solution"].endswith("\nFor the thirteenth glass Kylar needs to pay 5 * 1")
    assert records[5]["ground_truth"].endswith("\nA: 64")
    assert find_answer(cut["solution"]) == ("5 * 1", "closing sentence")
    assert grade("5 * 1", "64") is cut["is_correct"] is False


def test_minerva_and_llama_final_answer():
    # The format quoted in issue #18 (no data file of the repository has it).
    line = "Final Answer: The final answer is $\\frac{4}{7}$. I hope it is correct."
    assert find_answer(line) == ("\\frac{4}{7}", "final answer is ... I hope")
    assert grade(extract_answer(line), "\\frac{4}{7}") is True
    assert grade(extract_answer(line), "\\frac{7}{4}") is False
    # It outranks a box written before it.
    assert extract_answer("So $\\boxed{3}$ it seems.\n\n" + line) == "\\frac{4}{7}"


# (closing line without "$", the answer found, the form): the whole expression up to the end of
# its sentence, without the unit or prose after it (issue #26; more in tests/vectors/closing_lines.jsonl)
UNDELIMITED = [
    ("Final Answer: The final answer is -12+15i. I hope it is correct.", "-12+15i", "final answer is ... I hope"),
    ("Final Answer: The final answer is 2-\\sqrt{3}. I hope it is correct.", "2-\\sqrt{3}", "final answer is ... I hope"),
    ("Final Answer: The final answer is 18 dollars. I hope it is correct.", "18", "final answer is"),
    ("The final answer is: (1, -2)", "(1, -2)", "final answer is"),
    ("The final answer is 2, -3.", "2, -3", "final answer is"),
    ("**The final answer is 42.**", "42", "final answer is"),
    ("The answer is: 2-\\sqrt{3}", "2-\\sqrt{3}", "answer"),
    ("The answer is: \\text{(B)}", "\\text{(B)}", "answer"),
    ("The answer is: 10\\%", "10\\%", "answer"),
    ("So the answer is (B).", "(B)", "answer"),
    ("So the correct option is (B).", "(B)", "answer"),
    ("So the answer is [1, 5).", "[1, 5)", "answer"),
    ("Thus the answer is (-\\infty, 0) \\cup (1, \\infty).", "(-\\infty, 0) \\cup (1, \\infty)", "answer"),
    ("So the answer is y = 2x + 3.", "y = 2x + 3", "answer"),
    ("Therefore, the answer is 4\\sqrt{2} units.", "4\\sqrt{2}", "answer"),
    ("The answer is 18 dollars.", "18", "answer"),
    ("The answer is 5 cm.", "5", "answer"),
    ("The answer is 3.5.", "3.5", "answer"),
    ("The answer is 2.5 kg.", "2.5", "answer"),
    ("The answer is 1,000.", "1000", "answer"),
    ("The answer is 10, since 2 \\times 5 = 10.", "10", "answer"),
    ("The answer is **18**.", "18", "answer"),
    ("So the answer is B.", "B", "answer"),
    ("**Answer:** y = 3x - 1", "y = 3x - 1", "answer:"),
    ("**Answer: -12 + 15i**", "-12 + 15i", "answer:"),
    # A word after the anchor: math-verify's reading stands; a delimited answer is its LaTeX forms'.
    ("**Answer:** Sarah has 7 apples left.", "7", "answer:"),
    ("So the answer is A line of slope 2.", "2", "answer"),
    ("Therefore, the answer is $\\frac{5}{2}$.", "\\frac{5}{2}", "answer"),
    ("The answer is $\\boxed{12}$.", "12", "boxed"),
    ("#### 1,000", "1,000", "####"),
]


@pytest.mark.parametrize("line, answer, form", UNDELIMITED)
def test_answers_without_dollars_are_read_whole(line, answer, form):
    assert find_answer(line) == (answer, form)


def test_an_undelimited_answer_is_bounded():
    # Brackets never closed: no answer runs on past MAX_UNDELIMITED_CHARS (math-verify's number stands).
    assert find_answer("The answer is: (" + "1, " * (MAX_UNDELIMITED_CHARS // 3 + 1)) == ("1", "answer")
    assert find_answer("The answer is: (" + "1, " * 10 + "2") == ("(" + "1, " * 10 + "2", "answer")


def test_dataset_forms_come_first():
    # PRM800K's "# Answer" before everything; a box before GSM8K's "####"; "####" before "The answer is".
    assert find_answer("The final answer is $5$. I hope it is correct.\n\n# Answer\n\n6") == ("6", "# Answer")
    assert find_answer("So \\boxed{7}.\n#### 8") == ("7", "boxed")
    assert find_answer("The answer is 9.\n#### 10") == ("10", "####")
    assert find_answer("The answer is 9.\nA: 11") == ("11", "A:")


def test_only_the_end_of_a_long_solution_is_read():
    # math-verify's regexes are quadratic on some texts; an anchor further than TAIL_CHARS from
    # the end is not read, the closing sentence is.
    text = "The answer is 5.\n" + "We check it once more.\n" * (TAIL_CHARS // 20) + "So we get 7 apples."
    assert len(text) > TAIL_CHARS
    assert find_answer(text) == ("7", "closing sentence")
    assert find_answer(text[-TAIL_CHARS:].replace("So we get", "The answer is")) == ("7", "answer")


def test_a_hanging_answer_is_extracted_and_its_grading_times_out():
    # Extraction runs no sympy, so it returns; grading the answer hangs sympy, and its worker is killed.
    line = "Final Answer: The final answer is $9^{9^{9^{9}}}$. I hope it is correct."
    answer = extract_answer(line)
    assert answer == "9^{9^{9^{9}}}"
    results = []
    worker = threading.Thread(target=lambda: results.append(grade(answer, "1", timeout=1)))
    worker.start()
    worker.join(120)  # a hang guard, not a timing
    assert results == [False]


@pytest.mark.django_db
def test_import_stores_the_answer_and_grades_it(tmp_path, processbench, gsm8k_truth):
    # Candidates without is_correct are graded on import from the answer of their last step.
    path = tmp_path / "candidates.jsonl"
    chosen = [processbench[record_id] for record_id, *_ in PROCESSBENCH + PROCESSBENCH_NEAR_MISSES]
    path.write_text("".join(json.dumps({
        "id": r["id"], "problem": r["problem"], "ground_truth_answer": gsm8k_truth(r), "steps": r["steps"],
        "generator": r["generator"],
    }) + "\n" for r in chosen), encoding="utf-8")
    project = make_project(name="styles")
    run_import("candidates", path, project)
    solutions = Solution.objects.filter(project=project)
    assert solutions.count() == len(chosen)
    stored = {(s.generator, s.num_steps, s.final_answer): s.is_correct for s in solutions}
    expected = {
        (r["generator"], len(r["steps"]), answer): r["final_answer_correct"]
        for r, (_, _, answer, _) in zip(chosen, PROCESSBENCH + PROCESSBENCH_NEAR_MISSES)
    }
    assert stored == expected
