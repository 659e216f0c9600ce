"""The research page in real Chromium: a run's state, rate and time left; a retrain's phase and
step; and a checkpoint's evaluation plots beside the champion's, with why it was promoted or refused.

The rows are written as the worker writes them (scoring.jobs, scoring.retrain); the reports are
built by the real evaluation protocols on made-up scores (tests/scoring/sample_report.py).
"""
from datetime import timedelta

import pytest
from django.utils import timezone

from scoring.models import Checkpoint, GenerationRun
from tests.factories import make_project, make_user
from tests.scoring.sample_report import sample_report

from .axe import axe_violations
from .conftest import log_in, screenshot
from .test_charts import PHONE, drawn, fits, tick_sizes

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PLOTS = ("plot-roc", "plot-calibration", "plot-best-of-n", "plot-processbench")


@pytest.fixture
def world(db):
    project = make_project(name="MATH loop", retrain_metric="step_auroc")
    make_user("res", "researcher")
    first = Checkpoint.objects.create(project=project, status=Checkpoint.CHAMPION, generation=0,
                                      reason="Initial PRM: the base model with an untrained head.")
    promoted = judged(project, first, Checkpoint.CHAMPION, sample_report(first.pk, challenger_sharp=0.5, champion_sharp=0.25),
                      generation=1, passes=120, is_champion=True)
    refused = judged(project, promoted, Checkpoint.REJECTED, sample_report(promoted.pk, challenger_sharp=0.2, champion_sharp=0.5),
                     generation=2, passes=180)
    training = Checkpoint.objects.create(project=project, parent=promoted, status=Checkpoint.TRAINING, progress={
        "phase": "training", "step": 40, "total_steps": 100, "loss": 0.412, "eta_s": 80.0})
    # The worker scored 3,328 of 5,272 in 200 s: about 16.6 a second, some two minutes left.
    scoring = GenerationRun.objects.create(
        project=project, checkpoint=promoted, state=GenerationRun.SCORING, size=200, total=5272, scored=3328,
        scoring_started_at=timezone.now() - timedelta(seconds=200))
    selecting = GenerationRun.objects.create(project=project, checkpoint=first, state=GenerationRun.SELECTING, size=200,
                                             total=900, scored=900)
    return project, {"first": first, "promoted": promoted, "refused": refused, "training": training,
                     "scoring": scoring, "selecting": selecting}


def judged(project, parent, status, report, **fields):
    """A retrained checkpoint with its report, its figures, the gate's decision and reason as ``scoring.retrain`` writes them."""
    new, old = report["challenger"]["steps"]["auroc"], report["champion"]["steps"]["auroc"]
    problems, steps = report["heldout_problems"], report["challenger"]["steps"]["steps"]
    ece = [report[side]["steps"]["calibration"]["ece"] for side in ("challenger", "champion")]
    promoted = status == Checkpoint.CHAMPION
    bound = (new - old) - 0.03  # the one-sided 95% lower bound, some way below the difference
    figures = (f"step_auroc {new:.4f} against the champion's {old:.4f} on {problems} held-out problems (difference "
               f"{new - old:+.4f}, lower bound {bound:+.4f} at 95% confidence, paired bootstrap of 1000 resamples)")
    reason = f"Promoted: {figures}." if promoted else f"Not better beyond noise: {figures}."
    gate = {"metric": "step_auroc", "higher_is_better": True, "challenger": new, "champion": old, "difference": new - old,
            "interval": [bound, None], "confidence": 0.95, "resamples": 1000, "resamples_defined": 1000, "seed": 0,
            "guards": {"log_loss": {"challenger": 0.48, "champion": 0.55}, "ece": {"challenger": ece[0], "champion": ece[1]}},
            "guard_tolerance": 0.02, "problems": problems, "min_problems": 10, "steps": steps, "champion_id": parent.pk,
            "decision": "promote" if promoted else "reject", "reason": reason}
    metrics = {"heldout": {"step_auroc": new, "log_loss": 0.48}, "champion_heldout": {"step_auroc": old, "log_loss": 0.55},
               "gate": gate}
    return Checkpoint.objects.create(project=project, parent=parent, status=status, reason=reason, metrics=metrics,
                                     report=report, **fields)


@pytest.fixture
def page(axe_context):
    page = axe_context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    assert not errors, f"JavaScript errors on the page: {errors}"


def test_progress_and_a_checkpoints_evaluation_beside_the_champions(page, live_server, world):
    project, rows = world
    log_in(page, live_server, "res", next_path=None)
    page.goto(f"{live_server.url}/projects/{project.pk}/research/")
    page.wait_for_selector('#research[data-state="ready"]')

    # The scoring run says so, with its rate and the time left; the selecting one cannot be cancelled.
    scoring = page.locator(f'tr[data-run="{rows["scoring"].pk}"]')
    assert scoring.locator('[data-testid="run-state"]').inner_text() == "scoring"
    progress = scoring.locator('[data-testid="run-progress"]').inner_text()
    assert "3,328 / 5,272 scored at 1" in progress and "/s, about 2 min left" in progress, progress
    selecting = page.locator(f'tr[data-run="{rows["selecting"].pk}"]')
    assert "900 / 900 scored; selecting the generation" in selecting.inner_text()
    assert selecting.locator('[data-testid="cancel-generation"]').count() == 0
    screenshot(page, "research-progress")

    # The state column follows the worker too (it used to say "queued" while the bar moved).
    GenerationRun.objects.filter(pk=rows["scoring"].pk).update(state=GenerationRun.SELECTING, scored=5272)
    page.wait_for_function(
        f"""() => document.querySelector('tr[data-run="{rows["scoring"].pk}"] [data-testid="run-state"]')
                 ?.textContent === "selecting" """)
    assert "5,272 / 5,272 scored; selecting the generation" in scoring.inner_text()

    # The retrain shows its phase, step, loss and time left, and follows the worker without a reload.
    training = page.locator(f'tr[data-checkpoint="{rows["training"].pk}"] [data-testid="retrain-progress"]')
    assert training.inner_text() == "training: step 40 of 100, loss 0.412, about 80 s left"
    Checkpoint.objects.filter(pk=rows["training"].pk).update(progress={"phase": "evaluating"})
    page.wait_for_function(
        f"""() => document.querySelector('tr[data-checkpoint="{rows["training"].pk}"] [data-testid="retrain-progress"]')
                 ?.textContent === "evaluating against the champion on the held-out problems" """)

    # The newest evaluated checkpoint first: refused, beside the champion it did not beat.
    panel = page.locator('[data-testid="evaluation"]')
    page.wait_for_selector(f'[data-testid="evaluation"][data-state="ready"][data-checkpoint="{rows["refused"].pk}"]')
    decision = panel.locator('[data-testid="decision"]').inner_text()
    assert decision.startswith(f"Checkpoint #{rows['refused'].pk} was refused. Not better beyond noise: "), decision
    # The promotion gate: both figures, the difference and its interval, the guards beside the tolerance.
    gate = rows["refused"].metrics["gate"]
    summary = panel.locator('[data-testid="gate-summary"]').inner_text()
    assert panel.locator('[data-testid="gate"]').get_attribute("data-decision") == "reject"
    assert f"#{rows['refused'].pk} {gate['challenger']:.3f}, champion #{rows['promoted'].pk} {gate['champion']:.3f}" in summary
    assert f"difference −{abs(gate['difference']):.3f}; 95% one-sided interval [−{abs(gate['interval'][0]):.3f}, +∞]" in summary
    assert "1,000 paired resamples" in summary
    assert f"12 held-out problems ({gate['steps']:,} steps); at least 10 needed" in summary
    guards = {row.get_attribute("data-guard"): row.locator("td").all_inner_texts()
              for row in panel.locator('[data-testid="gate-guards"] tbody tr').all()}
    ece = gate["guards"]["ece"]
    assert guards["log_loss"] == ["log loss", "0.480", "0.550", "0.570", "yes"]
    assert guards["ece"] == ["calibration error (ECE)", f"{ece['challenger']:.3f}", f"{ece['champion']:.3f}",
                             f"{ece['champion'] + 0.02:.3f}", "yes" if ece["challenger"] <= ece["champion"] + 0.02 else "no"]
    headers = panel.locator('[data-testid="evaluation-figures"] th').all_inner_texts()
    assert headers == ["figure", f"#{rows['refused'].pk}", f"champion #{rows['promoted'].pk}", "better is"]
    decides = panel.locator('tr[data-decides="1"] td').all_inner_texts()
    assert decides[0] == "step AUROC, finding wrong steps (decides promotion)" and decides[3] == "higher"
    report = rows["refused"].report
    assert decides[1:3] == [f"{report['challenger']['steps']['auroc']:.3f}", f"{report['champion']['steps']['auroc']:.3f}"]
    assert float(decides[1]) < float(decides[2])
    for plot in PLOTS:
        chart = panel.locator(f'svg[data-testid="{plot}"]')
        assert chart.locator("text.axis-title").count() == 2, plot
        for side in ("challenger", "champion"):
            assert len(chart.locator(f"g.series.{side} path.curve").get_attribute("d")) > 20, (plot, side)
    legend = panel.locator('svg[data-testid="plot-roc"] + ul.legend').inner_text()
    assert f"#{rows['refused'].pk}, AUROC" in legend and f"champion #{rows['promoted'].pk}, AUROC" in legend

    # The promoted one, beside the initial champion it replaced.
    panel.locator('[data-testid="evaluation-checkpoint"]').select_option(str(rows["promoted"].pk))
    page.wait_for_selector(f'[data-testid="evaluation"][data-state="ready"][data-checkpoint="{rows["promoted"].pk}"]')
    assert panel.locator('[data-testid="decision"]').inner_text().startswith(
        f"Checkpoint #{rows['promoted'].pk} was promoted. Promoted: step_auroc ")
    assert panel.locator('[data-testid="gate"]').get_attribute("data-decision") == "promote"
    assert "difference +" in panel.locator('[data-testid="gate-summary"]').inner_text()
    assert panel.locator('svg[data-testid="plot-best-of-n"] g.series.vote circle.point').count() == 3

    assert axe_violations(page) == []
    page.set_viewport_size({"width": 1280, "height": 1180})
    panel.evaluate("node => node.scrollIntoView()")
    screenshot(page, "research-checkpoint-evaluation")


def test_the_evaluation_fits_a_phone(browser, live_server, world):
    project, rows = world
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    log_in(page, live_server, "res", next_path=None)
    page.goto(f"{live_server.url}/projects/{project.pk}/research/")
    page.wait_for_selector('[data-testid="evaluation"][data-state="ready"]')
    drawn(page)
    assert fits(page)
    sizes = tick_sizes(page)
    for plot in PLOTS:  # drawn at the phone's width: the text stays 12 px, not scaled down
        assert sizes[plot][0] >= 12 and sizes[plot][2] > 10, (plot, sizes[plot])
    page.locator('[data-testid="evaluation"]').evaluate("node => node.scrollIntoView()")
    screenshot(page, "research-evaluation-phone")
    context.close()
