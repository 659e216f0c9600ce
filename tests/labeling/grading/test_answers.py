"""Answer extraction and grading on real answers (MATH-500, PRM800K, GSM8K)."""
import io
import json
import multiprocessing
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.management import call_command

from labeling.data import open_text
from labeling.grading import pool as grading_pool
from labeling.grading.answers import (
    extract_answer,
    grade,
    grade_solutions,
    is_equivalent,
    normalise,
)
from labeling.imports import run_import
from labeling.models import Problem, Project, Solution
from tests.factories import make_project


@pytest.fixture(scope="module")
def math500(data_dir):
    with open_text(data_dir / "math" / "math500.jsonl.gz") as f:
        return {r["unique_id"]: r for r in map(json.loads, f)}


def truth(math500, unique_id):
    return math500[unique_id]["answer"]


# (unique_id, a rewriting that means the same as the MATH-500 answer)
EQUIVALENT = [
    ("test/algebra/2584.json", "14/3"),  # \frac{14}{3}
    ("test/intermediate_algebra/1197.json", r"\dfrac{3}{56}"),
    ("test/prealgebra/1655.json", r"\frac{17}{50}"),  # \dfrac{17}{50}
    ("test/prealgebra/1655.json", "0.34"),
    ("test/algebra/1265.json", "1.5"),  # \frac{3}{2}
    ("test/precalculus/117.json", "30"),  # 30^\circ
    ("test/precalculus/117.json", r"30^{\circ}"),
    ("test/precalculus/927.json", "90"),  # 90^\circ
    ("test/precalculus/807.json", r"(3, \frac{\pi}{2})"),  # \left( 3, \frac{\pi}{2} \right)
    ("test/precalculus/807.json", r"(3,\pi/2)"),
    ("test/precalculus/43.json", "(15, -29)"),
    ("test/intermediate_algebra/956.json", "(6, 31, -1)"),
    ("test/intermediate_algebra/558.json", "(3, 4]"),
    ("test/precalculus/695.json", r"\left(-\infty,0\right]"),  # (-\infty, 0]
    ("test/algebra/1078.json", r"\left(-\sqrt{3},\sqrt{3}\right)"),
    ("test/precalculus/1105.json", r"-\pi/6"),  # -\frac{\pi}{6}
    ("test/prealgebra/1003.json", r"\frac{270}{7}"),  # \frac{270}7\text{ degrees}
    ("test/counting_and_probability/508.json", "10080"),  # 10,\!080
    ("test/counting_and_probability/508.json", "10,080"),
    ("test/algebra/1349.json", "Evelyn"),  # \text{Evelyn}
    ("test/precalculus/779.json", "7i - 2"),  # -2 + 7i
    ("test/prealgebra/1302.json", r"11\sqrt{2}"),  # 11\sqrt2
    ("test/intermediate_algebra/1994.json", "p-q"),  # p - q
    ("test/intermediate_algebra/1994.json", r"$\boxed{p - q}$"),
]

# (unique_id, a near miss that must be judged wrong)
WRONG = [
    ("test/algebra/2584.json", r"\frac{3}{14}"),  # inverted fraction
    ("test/prealgebra/1655.json", r"\frac{17}{51}"),
    ("test/algebra/1265.json", r"-\frac{3}{2}"),  # sign
    ("test/intermediate_algebra/134.json", "50"),  # -50
    ("test/precalculus/1105.json", r"\frac{\pi}{6}"),  # -\frac{\pi}{6}
    ("test/precalculus/779.json", "2 - 7i"),
    ("test/precalculus/117.json", r"60^\circ"),
    ("test/precalculus/807.json", r"\left( \frac{\pi}{2}, 3 \right)"),  # swapped pair
    ("test/precalculus/807.json", r"(3, \pi)"),
    ("test/precalculus/43.json", "(-29, 15)"),  # swapped pair
    ("test/intermediate_algebra/956.json", "(6, -1, 31)"),  # swapped triple
    ("test/intermediate_algebra/558.json", "(3, 4)"),  # open where half-open
    ("test/intermediate_algebra/558.json", "[3, 4]"),
    ("test/precalculus/695.json", r"(-\infty, 0)"),  # open where closed
    ("test/algebra/1078.json", r"[-\sqrt{3}, \sqrt{3}]"),  # closed where open
    ("test/algebra/1349.json", r"\text{Sam}"),
    ("test/intermediate_algebra/1994.json", "q - p"),
]


@pytest.mark.parametrize("unique_id, answer", EQUIVALENT)
def test_rewritings_of_math500_answers_are_equivalent(math500, unique_id, answer):
    assert is_equivalent(answer, truth(math500, unique_id))


@pytest.mark.parametrize("unique_id, answer", WRONG)
def test_near_misses_are_wrong(math500, unique_id, answer):
    assert is_equivalent(answer, truth(math500, unique_id)) is False


def test_normalise_handles_the_cheap_cases():
    assert normalise(r"$\dfrac{3}{56}$") == normalise(r"\frac{3}{56}")
    assert normalise(r"\boxed{ 30^\circ }.") == "30"
    assert normalise(r"\left( 3, \frac{\pi}{2} \right)") == r"(3,\frac{\pi}{2})"
    assert normalise(r"10,\!080") == "10,080"
    assert normalise(r"\leftarrow") == r"\leftarrow"  # only the \left delimiter goes


def test_grade_is_none_without_answer_or_truth():
    assert grade(None, "5") is None
    assert grade("5", None) is None
    assert grade("  ", "5") is None
    assert grade("5", "5") is True
    assert grade("6", "5") is False
    assert is_equivalent(None, "5") is False


def test_every_math500_solution_yields_its_answer(math500):
    # The last \boxed{} with balanced braces, nested ones included.
    assert all(extract_answer(r["solution"]) == r["answer"] for r in math500.values())
    assert extract_answer(math500["test/precalculus/807.json"]["solution"]) == r"\left( 3, \frac{\pi}{2} \right)"


def test_prm800k_answer_step(data_dir):
    with open(data_dir / "prm800k" / "readme_example_record.json", encoding="utf-8") as f:
        question = json.load(f)["question"]
    steps = question["pre_generated_steps"]
    assert steps[-1].endswith("# Answer\n\n320,000")
    assert extract_answer(steps) == question["pre_generated_answer"] == "320,000"
    assert extract_answer(steps[-1]) == "320,000"
    # The labeller's -1 was right: 320,000 is not 40,\!000; 40000 would have been.
    assert grade(extract_answer(steps), question["ground_truth_answer"]) is False
    assert grade("40000", question["ground_truth_answer"]) is True


def test_prm800k_native_records_answers(data_dir):
    with open_text(data_dir / "prm800k" / "native_records.jsonl.gz") as f:
        questions = [json.loads(line)["question"] for line in f]
    phase2 = [q for q in questions if "pre_generated_steps" in q]
    assert phase2
    for q in phase2:
        assert extract_answer(q["pre_generated_steps"]) == q["pre_generated_answer"]
    # Phase-1 completions that end a solution: "<text>\n\n# Answer\n\n<answer>".
    texts = []
    with open_text(data_dir / "prm800k" / "native_records.jsonl.gz") as f:
        for line in f:
            for step in json.loads(line)["label"]["steps"]:
                texts += [c["text"] for c in step["completions"] or [] if "# Answer" in c["text"]]
    assert "So the price of a pencil is 29 cents.\n\n# Answer\n\n29" in texts
    assert extract_answer("So the price of a pencil is 29 cents.\n\n# Answer\n\n29") == "29"


def test_gsm8k_answers(data_dir):
    with open_text(data_dir / "gsm8k" / "example_model_solutions.jsonl.gz") as f:
        first = json.loads(f.readline())
    solution = first["6b_finetuning"]["solution"]
    assert solution.endswith("A: 26")
    assert extract_answer(solution) == "26"
    assert extract_answer(solution.split("\n")) == "26"
    assert extract_answer(first["ground_truth"]) == "18"
    assert grade("26", "18") is False
    with open_text(data_dir / "gsm8k" / "test.jsonl.gz") as f:
        answers = [json.loads(line)["answer"] for line in f]
    assert all(extract_answer(a) == a.rsplit("####", 1)[1].strip() for a in answers)


def test_nothing_to_extract():
    assert extract_answer("I am not sure how to go on.") is None
    assert extract_answer([]) is None
    assert extract_answer(None) is None
    assert extract_answer(r"so \boxed{} is empty") is None
    assert extract_answer(r"\fbox{7} but then \boxed{8}") == "8"


def test_pathological_answer_returns_false_from_another_thread():
    results = []
    worker = threading.Thread(target=lambda: results.append(is_equivalent(r"9^{9^{9^{9}}}", "1", timeout=1)))
    worker.start()
    worker.join(120)  # a hang guard, not a timing
    assert not worker.is_alive()
    assert results == [False]
    # The hung worker was replaced: grading goes on.
    assert is_equivalent("2/7", r"\frac{2}{7}") is True


def test_many_threads_share_the_pool(math500):
    cases = [(a, truth(math500, u), True) for u, a in EQUIVALENT[:8]] + [
        (a, truth(math500, u), False) for u, a in WRONG[:8]
    ]
    with ThreadPoolExecutor(max_workers=6) as threads:
        verdicts = list(threads.map(lambda c: is_equivalent(c[0], c[1]), cases))
    assert verdicts == [expected for _, _, expected in cases]


def test_a_worker_killed_from_outside_is_replaced():
    assert is_equivalent("3/11", r"\frac{3}{11}") is True  # a worker is up and idle
    pool = grading_pool.get_pool(1)
    for worker in list(pool.idle):
        worker.proc.kill()
        worker.proc.wait()
    assert is_equivalent("4/13", r"\frac{4}{13}") is True


@pytest.mark.django_db
def test_grade_solutions_stores_grades_in_bulk(math500):
    project = make_project(name="grading")
    record = math500["test/precalculus/807.json"]
    problem = Problem.objects.create(
        project=project, problem=record["problem"], ground_truth_solution=record["solution"],
        ground_truth_answer=record["answer"], content_hash="p1",
    )
    no_truth = Problem.objects.create(project=project, problem="What is 1+1?", content_hash="p2")
    answers = {"right": r"(3, \frac{\pi}{2})", "swapped": r"(\frac{\pi}{2}, 3)", "missing": None}
    for name, answer in answers.items():
        Solution.objects.create(project=project, problem=problem, final_answer=answer, content_hash=name)
    orphan = Solution.objects.create(project=project, problem=no_truth, final_answer="2", content_hash="o", is_correct=True)

    counts = grade_solutions(Solution.objects.filter(project=project))

    assert counts == {"graded": 4, "correct": 1, "wrong": 1, "ungradable": 2, "changed": 3}
    stored = dict(Solution.objects.values_list("content_hash", "is_correct"))
    assert stored == {"right": True, "swapped": False, "missing": None, "o": None}
    assert grade_solutions(Solution.objects.filter(pk=orphan.pk))["changed"] == 0


@pytest.mark.django_db
def test_grade_solutions_command(tmp_path, data_dir):
    path = tmp_path / "ex.jsonl"
    with open_text(data_dir / "gsm8k" / "example_model_solutions.jsonl.gz") as f:
        path.write_text("".join(f.readline() for _ in range(3)), encoding="utf-8")
    project = make_project(name="grade")
    run_import("gsm8k-examples", path, project)
    from_file = dict(Solution.objects.values_list("id", "is_correct"))
    Solution.objects.filter(pk__in=list(from_file)[:5]).update(is_correct=None)
    stdout = io.StringIO()
    call_command("grade_solutions", project="grade", stdout=stdout)
    assert "graded 5 solutions" in stdout.getvalue()
    call_command("grade_solutions", project="grade", regrade=True, stdout=stdout)
    assert "graded 12 solutions" in stdout.getvalue()
    # math-verify agrees with the file's own grades on these.
    assert dict(Solution.objects.values_list("id", "is_correct")) == from_file


def test_works_inside_a_daemonic_pool_worker():
    # Celery's prefork children and multiprocessing pool workers are daemonic and may not
    # start multiprocessing children; the grading workers are plain subprocesses, so they can.
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        right = pool.apply_async(is_equivalent, ("1/8", r"\frac{1}{8}"))
        hung = pool.apply_async(is_equivalent, (r"9^{9^{9^{9}}}", "1", 1))
        assert right.get(timeout=120) is True  # hang guards, not timings
        assert hung.get(timeout=120) is False
