"""The researcher page in real Chromium: the generation figures, "Snapshot now" writing a
snapshot that the page lists and serves, and a failed snapshot saying why.

The snapshot job runs in Celery's eager mode (``STEPMARK_BROKER=eager``'s setting) inside the
live server; the whole loop with a real worker is tested in tests/scoring's e2e tests.
"""
import gzip
import json
import re

import pytest

from labeling.exports import ExportFilters, get_exporter
from labeling.models import Annotator, Solution
from tests.factories import make_annotator, make_project, make_solution, make_user, rated_pass

from .conftest import log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def project(export_dir):
    project = make_project(name="Convincing <i>wrong</i> answers")
    ann = make_annotator("ann")
    found = make_solution(project, generation=0, is_correct=False, verifier_score=0.93, rank=1,
                          final_answer="12")
    clean = make_solution(project, steps=4, generation=0, is_correct=True, verifier_score=0.71, rank=2)
    rated_pass(found, ann, [1, -1], seconds=80)
    rated_pass(clean, ann, [1, 1, 1, 1], seconds=40)
    make_user("res", "researcher")
    return project


def open_research(page, live_server, project):
    log_in(page, live_server, "res")
    page.click(f'[data-project-id="{project.pk}"] a.research-link')
    page.wait_for_selector('#research[data-state="ready"]')


def test_researcher_takes_a_snapshot_and_downloads_it(page, live_server, project, eager, tmp_path):
    open_research(page, live_server, project)
    assert page.locator("h1").first.inner_text().startswith("Convincing <i>wrong</i> answers")
    for name in ("generations", "checkpoints", "snapshots", "on-demand-exports"):
        assert page.locator(f'[data-testid="{name}"]').count() == 1, name
    # Left empty, a generation selects the project's generation size: the field says how many.
    size = page.locator('[data-testid="generation-size"]')
    page.wait_for_function("() => document.querySelector('[data-testid=\"generation-size\"]').placeholder !== 'default'")
    assert size.get_attribute("placeholder") == f"{project.generation_size} (default)"

    row = page.locator('[data-testid="generation-stats"] tr[data-generation="0"]')
    cells = row.locator("td").all_inner_texts()
    assert cells[:6] == ["0", "2", "1", "2", "1", "50%"]
    # People found one of the two rated picks wrong; the PRM expected (0.07 + 0.29) / 2 of them to be.
    assert cells[6:8] == ["50% (1 of 2)", "18% (of 2 scored)"]
    assert cells[8] == "60 s"
    assert page.locator('[data-testid="hit-rate-chart"] g.column').count() == 1
    assert "people found an error" in page.locator(".picks li").first.inner_text()
    assert "No snapshot yet" in page.locator('[data-testid="snapshot-list"]').inner_text()

    page.click('[data-testid="snapshot-now"]')
    link = page.locator('[data-testid="snapshot-list"] a').first
    link.wait_for()
    name = link.inner_text()
    assert name.startswith(f"convincing-iwrongi-answers-{project.pk}-") and name.endswith(".jsonl.gz")
    status = page.locator('[data-testid="snapshot-status"]')
    assert status.get_attribute("data-state") == "done" and name in status.inner_text()
    screenshot(page, "research-snapshot")

    with page.expect_download() as info:
        link.click()
    download = info.value
    assert download.suggested_filename == name
    saved = tmp_path / "downloaded.jsonl.gz"
    download.save_as(saved)
    lines = gzip.decompress(saved.read_bytes()).decode().splitlines()
    assert lines == list(get_exporter("prm800k")(ExportFilters(project_id=project.pk)))
    assert len(lines) == 2

    # The on-demand exports point at the streaming export endpoint.
    hrefs = page.locator('[data-testid="on-demand-exports"] a').evaluate_all("els => els.map(e => e.href)")
    assert f"{live_server.url}/api/projects/{project.pk}/export/?format=prm800k&gzip=1" in hrefs

    # A generation filter narrows every link, and the file is named by format and generation.
    page.fill('[data-testid="export-generation"]', "0")
    with page.expect_download() as info:
        page.click('[data-testid="on-demand-exports"] a[data-format="prm800k"]')
    assert re.fullmatch(r"convincing-iwrongi-answers-prm800k-gen0-\d{8}T\d{6}Z\.jsonl\.gz",
                        info.value.suggested_filename), info.value.suggested_filename
    page.fill('[data-testid="export-generation"]', "two")
    assert "whole numbers" in page.locator('[data-testid="on-demand-exports"] [role="alert"]').inner_text()
    assert page.locator('[data-testid="on-demand-exports"] a[href]').count() == 0


def test_the_provenance_box_adds_the_labeler_and_generation_columns_to_the_trl_exports(page, live_server, project):
    # Phase-2 solutions (steps pre-generated): each pass is a trajectory, so each gives a TRL row.
    Solution.objects.filter(project=project).update(has_pre_generated=True)
    open_research(page, live_server, project)
    exports = page.locator('[data-testid="on-demand-exports"]')
    trl = exports.locator('a[data-format="trl"]')
    assert "provenance" not in trl.get_attribute("href")
    exports.get_by_label("include labeler and generation columns").check()
    assert trl.get_attribute("href").endswith("?format=trl&gzip=1&provenance=1")
    assert exports.locator('a[data-format="trl-parquet"]').get_attribute("href").endswith("&provenance=1")
    # PRM800K records name their labeler and generation already (the API refuses the parameter there).
    assert "provenance" not in exports.locator('a[data-format="prm800k"]').get_attribute("href")

    answer = page.request.get(live_server.url + trl.get_attribute("href"))
    assert answer.status == 200
    rows = [json.loads(line) for line in gzip.decompress(answer.body()).decode().splitlines()]
    assert len(rows) == 2  # the fixture's two passes, each with who labelled it and its generation
    assert {row["labeler"] for row in rows} == {str(Annotator.objects.get(user__username="ann").uuid)}
    assert {row["generation"] for row in rows} == {0}
    page.fill('[data-testid="export-generation"]', "0")  # with the generation filter, both go
    assert trl.get_attribute("href").endswith("?format=trl&gzip=1&generation=0&provenance=1")

    exports.get_by_label("include labeler and generation columns").uncheck()
    assert "provenance" not in trl.get_attribute("href")


def test_the_contents_line_links_every_section_and_an_address_opens_at_its_section(page, live_server, project):
    """Nine sections make several screens: the line under the title links each, in page order, and
    an address with a section's fragment lands on it once the sections are drawn."""
    open_research(page, live_server, project)
    sections = page.locator("#research > section")
    names = sections.evaluate_all("boxes => boxes.map(box => [box.id, box.querySelector('h2').textContent])")
    assert len(names) == 9 and all(anchor for anchor, _ in names)
    links = page.locator('[data-testid="research-contents"] a')
    assert links.evaluate_all("links => links.map(a => [a.hash.slice(1), a.textContent])") == names

    def top_of(anchor):
        return page.evaluate(f"() => document.getElementById('{anchor}').getBoundingClientRect().top")

    page.click('[data-testid="research-contents"] a[href="#loop-settings"]')
    page.wait_for_function("() => Math.abs(document.getElementById('loop-settings').getBoundingClientRect().top) < 20")
    assert page.url.endswith("#loop-settings")

    # A new load of the page (from another one), not a jump within it: the sections come after it.
    address = page.url.split("#")[0] + "#checkpoints"
    page.goto(live_server.url + "/")
    page.goto(address)
    page.wait_for_selector('#research[data-state="ready"]')
    page.wait_for_function("() => Math.abs(document.getElementById('checkpoints').getBoundingClientRect().top) < 20")
    assert page.evaluate("() => scrollY") > 0 and abs(top_of("checkpoints")) < 20


def test_a_failed_snapshot_says_why(page, live_server, project, eager, settings, tmp_path):
    settings.STEPMARK_EXPORT_DIR = tmp_path / "not-a-folder"
    settings.STEPMARK_EXPORT_DIR.write_text("a file where the folder should be")
    open_research(page, live_server, project)
    page.click('[data-testid="snapshot-now"]')
    status = page.locator('[data-testid="snapshot-status"][data-state="failed"]')
    status.wait_for()
    assert "The snapshot failed" in status.inner_text() and "not-a-folder" in status.inner_text()


def test_runs_show_live_progress_cancel_and_why_jobs_failed(page, live_server, project):
    from scoring.models import Checkpoint, GenerationRun

    first = Checkpoint.objects.create(project=project, status=Checkpoint.REJECTED, generation=0, passes=2,
                                      reason="step_auroc 0.6000 on the held-out set does not beat the champion's",
                                      metrics={"heldout": {"step_auroc": 0.6, "step_f1": 0.4, "log_loss": 0.7}})
    champion = Checkpoint.objects.create(project=project, status=Checkpoint.CHAMPION, is_champion=True, generation=0,
                                         passes=2, metrics={"heldout": {"step_auroc": 0.8, "step_f1": 0.5, "log_loss": 0.6}})
    Checkpoint.objects.create(project=project, status=Checkpoint.FAILED, passes=2,
                              reason="RuntimeError: CUDA out of memory <b>", metrics={"forced": True})
    failed = GenerationRun.objects.create(project=project, checkpoint=champion, state=GenerationRun.FAILED, size=10,
                                          error="ValueError: the candidate pool is empty")
    running = GenerationRun.objects.create(project=project, checkpoint=champion, state=GenerationRun.SCORING,
                                           size=10, scored=3, total=12)
    finishing = GenerationRun.objects.create(project=project, checkpoint=champion, state=GenerationRun.SCORING,
                                             size=10, scored=5, total=12)

    open_research(page, live_server, project)

    assert "ValueError: the candidate pool is empty" in page.locator(
        f'[data-testid="generation-runs"] tr[data-run="{failed.pk}"] [data-testid="run-error"]').inner_text()
    progress = page.locator(f'tr[data-run="{running.pk}"] [data-testid="run-progress"]')
    assert "3 / 12 scored" in progress.inner_text()
    # The worker moves on; the page follows without a reload.
    GenerationRun.objects.filter(pk=running.pk).update(scored=9)
    page.wait_for_function(
        f"""() => document.querySelector('tr[data-run="{running.pk}"] [data-testid="run-progress"]')
                 ?.textContent.includes("9 / 12 scored")""")

    page.click(f'tr[data-run="{finishing.pk}"] [data-testid="cancel-generation"]')
    page.wait_for_selector(f'tr[data-run="{finishing.pk}"][data-state="cancelled"]')
    assert GenerationRun.objects.get(pk=finishing.pk).state == GenerationRun.CANCELLED

    table = page.locator('[data-testid="checkpoint-table"]')
    assert table.locator(f'tr[data-checkpoint="{champion.pk}"]').get_attribute("class") == "champion"
    assert "does not beat" in table.locator(f'tr[data-checkpoint="{first.pk}"]').inner_text()
    assert page.locator('[data-testid="checkpoint-error"]').inner_text() == "RuntimeError: CUDA out of memory <b>"
    chart = page.locator('[data-testid="checkpoint-chart-step_auroc"]')
    assert chart.locator("circle.dot").count() == 2  # the failed one has no figure
    screenshot(page, "research-jobs")


def test_each_generation_says_which_strategy_chose_it_and_why_a_pick_was_picked(page, live_server, project):
    from labeling.models import Generation
    from scoring.models import GenerationRun

    mix = {"convincing_wrong": 0.5, "uncertainty": 0.5}
    generation = Generation.objects.create(project=project, number=1, strategy="mixture",
                                           selection={"mix": mix, "dropout_passes": 4})
    ann = make_annotator("bea")
    for rank, (strategy, spread, found) in enumerate([("convincing_wrong", 0.02, True), ("uncertainty", 0.31, False)], 1):
        reason = {"strategy": strategy, "score": 0.8, "uncertainty": spread, "answer": "wrong"}
        solution = make_solution(project, generation=generation, rank=rank, is_correct=False, verifier_score=0.8,
                                 selection_reason=reason)
        rated_pass(solution, ann, [1, -1 if found else 1, 1])
    GenerationRun.objects.create(project=project, generation=generation, state=GenerationRun.DONE, size=2, selected=2,
                                 strategy="mixture", selection_mix=mix)

    open_research(page, live_server, project)

    stats = page.locator('[data-testid="generation-stats"]')
    assert stats.locator('tr[data-generation="1"] td').all_inner_texts()[-1] == \
        "mixture (convincing wrong 50%, uncertainty 50%)"
    assert stats.locator('tr[data-generation="0"] td').all_inner_texts()[-1] == "—"  # not recorded
    per_strategy = page.locator('[data-testid="strategy-stats"]')
    assert per_strategy.locator('tr[data-strategy="convincing_wrong"] td').all_inner_texts()[1:] == \
        ["convincing wrong", "1", "1", "1", "100%", "100% (1 of 1)", "20% (of 1 scored)"]
    # Nobody found uncertainty's pick wrong, but its answer is graded wrong: people's reading counts it.
    assert per_strategy.locator('tr[data-strategy="uncertainty"] td').all_inner_texts()[-3:] == \
        ["0%", "100% (1 of 1)", "20% (of 1 scored)"]
    assert "picked by uncertainty (uncertainty 0.31)" in page.locator(".picks").last.inner_text()
    runs = page.locator('[data-testid="generation-runs"]')
    assert runs.locator("tbody tr td").all_inner_texts()[-1] == "mixture (convincing wrong 50%, uncertainty 50%)"


def test_people_vs_prm_lists_the_steps_they_disagree_on_most(page, live_server, project):
    from scoring.models import Checkpoint, SolutionScore

    best = Checkpoint.objects.create(project=project, status=Checkpoint.CHAMPION, is_champion=True)
    ann, bob = make_annotator("cat"), make_annotator("dan")
    trusted = make_solution(project, steps=["Let <b>x</b> = 2.", "So $x^2 = 5$."], generation=1, is_correct=False)
    for who in (ann, bob):
        rated_pass(trusted, who, [1, -1])
    SolutionScore.objects.create(checkpoint=best, solution=trusted, score=0.9, step_scores=[0.8, 0.97])
    open_research(page, live_server, project)

    box = page.locator('[data-testid="people-vs-prm"]')
    assert "2 compared" in box.locator('[data-testid="people-vs-prm-status"]').inner_text()
    assert "2 rated solutions the champion has not scored" in box.inner_text()  # the fixture's two
    rows = box.locator('[data-testid="people-vs-prm-table"] tbody tr')
    assert rows.count() == 2
    first = rows.nth(0).locator("td").all_inner_texts()
    assert first[:6] == ["0.97", "0.97", "−1 wrong", f"solution {trusted.pk}", "1", "2"]  # step 2 (position 1)
    assert rows.nth(0).get_attribute("data-position") == "1"
    assert rows.nth(1).locator("td").all_inner_texts()[:3] == ["0.20", "0.80", "+1 right"]
    # The step's text is text: the markup in it is shown, not obeyed.
    assert rows.nth(1).locator("td").last.inner_text() == "Let <b>x</b> = 2."
    assert box.locator("b").count() == 0
    href = rows.nth(0).locator("a").get_attribute("href")
    assert href == f"/api/solutions/{trusted.pk}/"
    box.scroll_into_view_if_needed()
    screenshot(page, "research-people-vs-prm")


def test_a_done_simulation_shows_its_learning_curves_and_savings(page, live_server, project):
    from scoring.models import SimulationRun

    def point(round_, solutions, steps, auroc):
        return {"round": round_, "solutions": solutions, "steps": steps, "auroc": auroc, "f1": 0.5, "f1_oracle": 0.6,
                "bon": None, "picked": [], "elapsed_s": 1.0}

    curves = {"random": [point(0, 4, 20, 0.6), point(1, 8, 40, 0.7)],
              "convincing_wrong": [point(0, 4, 20, 0.6), point(1, 8, 38, 0.8)]}
    savings = {"random": {"target": 0.7, "reached": True, "steps_needed": 40.0, "solutions_needed": 8.0,
                          "steps_saved": 0.0, "solutions_saved": 0.0, "steps_saved_share": 0.0,
                          "solutions_saved_share": 0.0, "by_seed_set": False},
               "convincing_wrong": {"target": 0.7, "reached": True, "steps_needed": 29.0, "solutions_needed": 6.0,
                                    "steps_saved": 11.0, "solutions_saved": 2.0, "steps_saved_share": 0.275,
                                    "solutions_saved_share": 0.25, "by_seed_set": False}}
    SimulationRun.objects.create(project=project, state=SimulationRun.FAILED, error="<b>too few</b> labels",
                                 config={"strategies": ["random"], "rounds": 1, "per_round": 4, "seed": 0})
    SimulationRun.objects.create(
        project=project, state=SimulationRun.DONE,
        config={"strategies": ["random", "convincing_wrong"], "rounds": 1, "per_round": 4, "seed": 3},
        result={"strategies": ["random", "convincing_wrong"], "pool": 30, "heldout_solutions": 6, "heldout_problems": 2, "curves": curves, "savings": savings})
    open_research(page, live_server, project)
    runs = page.locator('[data-testid="simulation-runs"] tbody tr')
    assert runs.count() == 2
    assert runs.first.get_attribute("data-state") == "done"
    assert "<b>too few</b> labels" in runs.nth(1).inner_text()  # the error as text
    curve = page.locator('[data-testid="simulation-curves"] tbody tr')
    assert curve.count() == 4
    # ... and drawn: a line per strategy, named in the legend
    assert page.locator('[data-testid="plot-simulation"]').is_visible()
    assert page.locator('[data-testid="simulation-report"] .legend li').all_inner_texts() == ["random", "convincing wrong"]
    row = page.locator('[data-testid="simulation-curves"] tr[data-strategy="convincing_wrong"][data-round="1"]')
    assert row.locator("td").all_inner_texts() == ["convincing wrong", "1", "8", "38", "0.800", "0.500"]
    saved = page.locator('[data-testid="simulation-savings"] tr[data-strategy="convincing_wrong"]')
    assert saved.locator("td").all_inner_texts() == ["convincing wrong", "29", "6.0", "11 (28%)", "2.0 (25%)"]
    page.locator('[data-testid="plot-simulation"]').scroll_into_view_if_needed()
    screenshot(page, "research-simulations")


def test_label_sources_show_their_agreement_disagreements_and_the_agreed_export(page, live_server, project):
    from labeling.models import LabelSource
    from tests.factories import machine_labels

    cat, dan = make_annotator("cat"), make_annotator("dan")
    judged = make_solution(project, steps=["Let <b>x</b> = 2.", "So $x^2 = 5$.", "Done."], generation=1)
    for who in (cat, dan):
        rated_pass(judged, who, [1, -1])
    machine_labels(judged, [1, 1, 1], kind=LabelSource.JUDGE, name="judge <script>gpt</script> v1")
    open_research(page, live_server, project)

    box = page.locator('[data-testid="label-sources"]')
    kinds = box.locator('[data-testid="sources-table"] tbody tr td:nth-child(2)').all_inner_texts()
    assert kinds == ["people", "judge"]
    assert box.locator("script").count() == 0 and "judge <script>gpt</script> v1" in box.inner_text()
    pair = box.locator('[data-testid="source-pairs-table"] tbody tr')
    assert pair.count() == 1
    cells = pair.nth(0).locator("td").all_inner_texts()
    assert cells[1:3] == ["2", "50%"]  # two steps both labelled, the second differs
    judge = LabelSource.objects.get(project=project)
    link = pair.nth(0).locator('[data-testid="agreed-export-trl"]').get_attribute("href")
    assert link.endswith(f"format=trl&agree=people%2Csource%3A{judge.pk}")
    pair.nth(0).locator('[data-testid="source-disagreements"]').click()
    rows = box.locator('[data-testid="source-disagreements-table"] tbody tr')
    rows.first.wait_for()
    assert rows.nth(0).locator("td").all_inner_texts() == [f"solution {judged.pk}", "2", "0", "−1", "+1"]
    with page.expect_download() as download:
        pair.nth(0).locator('[data-testid="agreed-export-trl"]').click()
    line = open(download.value.path(), encoding="utf-8").read().splitlines()
    assert [__import__("json").loads(x)["completions"] for x in line] == [["Let <b>x</b> = 2."]]
    box.scroll_into_view_if_needed()
    screenshot(page, "research-label-sources")
