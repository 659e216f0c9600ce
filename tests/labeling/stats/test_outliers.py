"""Outlier flags: a careless annotator stands out from the team on every figure, under the
project's thresholds (issue #30: a careless annotator showed as a plain "active"; here eve)."""
import pytest

from labeling.stats import dashboard, outliers
from tests.factories import careless_team, make_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def team_figures():
    project = make_project(overlap=4)
    team = careless_team(project)
    figures = dashboard.build_dashboard(project, replicates=200)
    return project, team, figures["annotators"]


def test_the_careless_annotator_is_flagged_on_every_figure_and_nobody_else(team_figures):
    project, team, rows = team_figures
    found = outliers.flags(rows, outliers.thresholds_of(project))
    assert set(found) == {team["eve"].pk}
    by_kind = {flag["kind"]: flag for flag in found[team["eve"].pk]}
    assert set(by_kind) == {"fast", "gold", "agreement", "one_sided"}
    # In words, with the team's figure beside theirs.
    assert by_kind["fast"]["text"].startswith("0.1 s per step; team median 15 s")
    assert by_kind["gold"]["text"].startswith("gold score 0.58; team median 0.88")
    assert by_kind["one_sided"]["text"].startswith("+1 on 92% of main steps")
    assert by_kind["agreement"]["label"] == "low agreement" and "others' majority" in by_kind["agreement"]["text"]
    assert {f["column"] for f in found[team["eve"].pk]} == {
        "median_step_seconds", "gold_score", "kappa_majority", "share_plus"}


def test_thresholds_are_respected(team_figures):
    project, team, rows = team_figures
    eve = team["eve"].pk
    row = next(r for r in rows if r["id"] == eve)

    def kinds(**changes):
        return {f["kind"] for f in outliers.flags(rows, {**outliers.thresholds_of(project), **changes}).get(eve, [])}

    # 0 turns a flag off.
    assert kinds(flag_fast_share=0, flag_gold_margin=0, flag_agreement_margin=0, flag_distribution_margin=0) == set()
    # Each flag goes just past its threshold: gold 0.58 against the team's 0.88 is 0.30 under it.
    assert "gold" in kinds(flag_gold_margin=0.29) and "gold" not in kinds(flag_gold_margin=0.31)
    flag = next(f for f in outliers.flags(rows, outliers.thresholds_of(project))[eve] if f["kind"] == "one_sided")
    away = row["distribution"]["1"] - flag["team"]
    assert "one_sided" in kinds(flag_distribution_margin=away - 0.01)
    assert "one_sided" not in kinds(flag_distribution_margin=away + 0.01)
    # 0.1 s against 15 s: flagged under 1%, not under 0.5%.
    assert "fast" in kinds(flag_fast_share=0.01) and "fast" not in kinds(flag_fast_share=0.005)
    assert "agreement" not in kinds(flag_agreement_margin=2)


def test_the_team_median_leaves_the_annotator_out_and_needs_a_team():
    rows = [{"id": i, "passes": 5, "median_step_seconds": s, "gold_passes": 0, "distribution": {"ratings": 0}}
            for i, s in enumerate([10.0, 10.0, 2.0, 1.0])]
    thresholds = {"flag_fast_share": 0.3, "flag_gold_margin": 0, "flag_agreement_margin": 0,
                  "flag_distribution_margin": 0, "gold_min_passes": 1}
    # 2 s and 1 s against the others' median of 10 s: both under 30% of it.
    assert set(outliers.flags(rows, thresholds)) == {2, 3}
    # With their own 2 s in the median (10, 10, 2, 1: 6 s) the 2 s person would pass; it is left out.
    assert outliers.flags(rows, thresholds)[2][0]["team"] == 10.0
    # Two people are no team: nobody is flagged against one other.
    assert outliers.flags(rows[2:], thresholds) == {}
    # Too few passes say nothing about speed.
    assert outliers.flags([{**r, "passes": 2} for r in rows], thresholds) == {}
