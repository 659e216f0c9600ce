"""Migration 0020 rehashes imported candidates by (problem, steps) only: copies stored under the old
key (which counted the generator and final answer) become one solution, and a re-import adds nothing."""
import hashlib
import json

from labeling.imports import run_import
from labeling.imports.hashing import candidate_hash, problem_hash
from labeling.models import Project as CurrentProject
from tests.factories import write_jsonl
from tests.migrating import at_the_newest_migrations_afterwards, migrate, newest  # noqa: F401 (a fixture)

BEFORE = [("labeling", "0019_gold_only_beside_work")]
AFTER = [("labeling", "0020_candidate_hash_steps_only")]
PROBLEM = "What is $2 + 3$?"
STEPS = ["We add.", "$2 + 3 = 5$, so the answer is $\\boxed{5}$."]


def old_key(problem, steps, final_answer, generator):
    """The key before 0020 (labeling/imports/hashing.py then), written out."""
    text = json.dumps(["candidate", problem, steps, final_answer, generator], sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def test_copies_become_one_solution_and_a_reimport_adds_nothing(at_the_newest_migrations_afterwards, tmp_path):
    old = migrate(BEFORE)
    Project, Problem = old.get_model("labeling", "Project"), old.get_model("labeling", "Problem")
    Solution, Step = old.get_model("labeling", "Solution"), old.get_model("labeling", "Step")
    Generation, Assignment = old.get_model("labeling", "Generation"), old.get_model("labeling", "Assignment")
    Annotator, User = old.get_model("labeling", "Annotator"), old.get_model("auth", "User")
    project = Project.objects.create(name="copies")
    ph = problem_hash(PROBLEM, None, None)
    problem = Problem.objects.create(project=project, problem=PROBLEM, content_hash=ph)

    def solution(generator, final_answer="5", steps=STEPS, **fields):
        row = Solution.objects.create(project=project, problem=problem, generator=generator, final_answer=final_answer,
                                      has_pre_generated=True, num_steps=len(steps),
                                      content_hash=fields.pop("content_hash", None)
                                      or old_key(ph, steps, final_answer, generator), **fields)
        Step.objects.bulk_create([Step(solution=row, position=i, text=t) for i, t in enumerate(steps)])
        return row.pk

    # The case: imported as openai-chat (named, since rated), then as vllm without a name;
    # a copy under another name that a generation selected (in use: it stays, apart); one nobody used.
    unnamed = solution("")
    named = solution("gpt-4o")
    Assignment.objects.create(project=project, solution_id=named,
                              annotator=Annotator.objects.create(user=User.objects.create(username="ann")))
    generation = Generation.objects.create(project=project, number=0)
    selected = solution("qwen", final_answer="05", generation=generation, selection_rank=1)
    spare = solution("llama")
    other = solution("gpt-4o", steps=["Another way.", "It is $\\boxed{5}$."])
    prm800k = solution("", content_hash="a" * 64)  # made by another rule: not a candidate's key

    new = migrate(AFTER)
    rows = {s.pk: s for s in new.get_model("labeling", "Solution").objects.all()}
    assert set(rows) == {named, selected, other, prm800k}  # the copies nobody used are gone
    assert rows[named].content_hash == candidate_hash(ph, STEPS)  # the rated copy is kept under the key
    assert rows[selected].content_hash == old_key(ph, STEPS, "05", "qwen")  # another one in use stays apart
    assert rows[other].content_hash == candidate_hash(ph, ["Another way.", "It is $\\boxed{5}$."])
    assert rows[prm800k].content_hash == "a" * 64
    assert not new.get_model("labeling", "Step").objects.filter(solution_id__in=[unnamed, spare]).exists()

    # Importing the same steps again, under any name, adds nothing (today's import code, on today's schema).
    migrate(newest())
    path = write_jsonl(tmp_path / "again.jsonl", [{"problem": PROBLEM, "completion": "\n\n".join(STEPS)}])
    result = run_import("completions", path, CurrentProject.objects.get(pk=project.pk))
    assert (result.created, result.skipped) == (0, 1)

    back = migrate(BEFORE)
    assert back.get_model("labeling", "Solution").objects.get(pk=named).content_hash == \
        old_key(ph, STEPS, "5", "gpt-4o")


def test_a_kept_copy_without_a_name_takes_the_name_of_a_copy(at_the_newest_migrations_afterwards):
    old = migrate(BEFORE)
    Project, Problem = old.get_model("labeling", "Project"), old.get_model("labeling", "Problem")
    Solution, Step, Assignment = (old.get_model("labeling", name) for name in ("Solution", "Step", "Assignment"))
    Annotator, User = old.get_model("labeling", "Annotator"), old.get_model("auth", "User")
    project = Project.objects.create(name="rated copy")
    ph = problem_hash(PROBLEM, None, None)
    problem = Problem.objects.create(project=project, problem=PROBLEM, content_hash=ph)
    ids = []
    for generator in ("", "llama"):  # the unnamed copy was imported first and has been rated
        row = Solution.objects.create(project=project, problem=problem, generator=generator, final_answer="5",
                                      has_pre_generated=True, num_steps=2, content_hash=old_key(ph, STEPS, "5", generator))
        Step.objects.bulk_create([Step(solution=row, position=i, text=t) for i, t in enumerate(STEPS)])
        ids.append(row.pk)
    annotator = Annotator.objects.create(user=User.objects.create(username="ann"))
    Assignment.objects.create(project=project, solution_id=ids[0], annotator=annotator)

    new = migrate(AFTER)
    [kept] = new.get_model("labeling", "Solution").objects.all()
    assert (kept.pk, kept.generator, kept.content_hash) == (ids[0], "llama", candidate_hash(ph, STEPS))
