"""Which annotators stand out from their team: too fast, low gold, low agreement, one-sided ratings.

Pure functions over the dashboard's annotator rows (``labeling.stats.dashboard.annotator_rows``)
and the project's thresholds (``Project.flag_*``, set by the lead on the dashboard). The API
adds the flags to the cached rows live (labeling/api/dashboard.py), so a new threshold shows at
once, with no recompute of the figures.

Each figure is compared with the *team*: the median of that figure over the other annotators
who have it (the annotator's own value is left out, so one careless person does not drag the
reference towards themselves). A flag needs enough evidence on both sides: the annotator's
own minimum (below) and at least ``TEAM_MIN`` others with the figure. The rules, where a
threshold of 0 turns the flag off:

- ``fast``: median seconds per step under ``flag_fast_share`` x the team's median;
- ``gold``: rolling gold score more than ``flag_gold_margin`` under the team's median (with at
  least ``gold_min_passes`` gold passes, the project's rule for pausing);
- ``agreement``: kappa against the others' majority more than ``flag_agreement_margin`` under
  the team's median, *and* the top of its 95% interval under that median too, so a few
  unlucky items do not flag anyone;
- ``one_sided``: the share of one rating (+1, 0 or -1, of their main-step ratings) more than
  ``flag_distribution_margin`` away from the team's median share of it.

Each flag carries its words (``label``, ``text``) for the table, the CSV and screen readers, and
the ``column`` of the annotator table it concerns, which the page colours.
"""
from statistics import median

TEAM_MIN = 2  # others with the figure needed for a team median
MIN_PASSES = 3  # passes before a median time per step says anything
MIN_RATINGS = 20  # main-step ratings before a distribution says anything
MIN_ITEMS = 10  # items with a majority among the others before a kappa says anything

THRESHOLDS = ("flag_fast_share", "flag_gold_margin", "flag_agreement_margin", "flag_distribution_margin")
KINDS = {"fast": "too fast", "gold": "low gold score", "agreement": "low agreement", "one_sided": "one-sided ratings"}
VALUES = (("1", "+1", "share_plus"), ("0", "0", "share_zero"), ("-1", "−1", "share_minus"))  # key, name, column


def thresholds_of(project):
    """The project's thresholds, ``{name: value}`` for ``THRESHOLDS``, and its gold minimum."""
    return {**{name: getattr(project, name) for name in THRESHOLDS}, "gold_min_passes": project.gold_min_passes}


def _team(rows, row, value_of):
    """Median of ``value_of`` over the other rows that have it, or None below ``TEAM_MIN`` of them."""
    values = [v for other in rows if other["id"] != row["id"] and (v := value_of(other)) is not None]
    return median(values) if len(values) >= TEAM_MIN else None


def _seconds(x):
    return f"{x:.1f} s" if x < 10 else f"{x:.0f} s"


def flags(rows, thresholds):
    """``{annotator id: [flag]}`` for the annotators with at least one flag.

    ``rows``: the dashboard's annotator rows (``distribution`` as a dict). A flag is
    ``{"kind", "label", "text", "column", "value", "team"}``.
    """
    def speed(r):
        return r.get("median_step_seconds") if (r.get("passes") or 0) >= MIN_PASSES else None

    def gold(r):
        return r.get("gold_score") if r.get("gold_passes", 0) >= max(1, thresholds["gold_min_passes"]) else None

    def kappa(r):
        return r.get("kappa_majority") if r.get("majority_items", 0) >= MIN_ITEMS else None

    def share(key):
        return lambda r: r["distribution"].get(key) if r["distribution"].get("ratings", 0) >= MIN_RATINGS else None

    result = {}
    for row in rows:
        found = []

        def add(kind, column, value, team, text):
            found.append({"kind": kind, "label": KINDS[kind], "text": text, "column": column,
                          "value": value, "team": round(team, 4)})

        fast = thresholds["flag_fast_share"]
        mine, team = speed(row), _team(rows, row, speed)
        if fast and mine is not None and team is not None and mine < fast * team:
            add("fast", "median_step_seconds", mine, team,
                f"{_seconds(mine)} per step; team median {_seconds(team)} (flagged under {fast:.0%} of it)")

        margin = thresholds["flag_gold_margin"]
        mine, team = gold(row), _team(rows, row, gold)
        if margin and mine is not None and team is not None and mine < team - margin:
            add("gold", "gold_score", mine, team,
                f"gold score {mine:.2f}; team median {team:.2f} (flagged more than {margin:.2f} under it)")

        margin = thresholds["flag_agreement_margin"]
        mine, team = kappa(row), _team(rows, row, kappa)
        high = row.get("kappa_majority_high")
        if (margin and mine is not None and team is not None and mine < team - margin
                and (high is None or high < team)):
            interval = "" if high is None else f", interval up to {high:.2f}"
            add("agreement", "kappa_majority", mine, team,
                f"κ {mine:.2f} against the others' majority{interval}; team median {team:.2f} "
                f"(flagged more than {margin:.2f} under it)")

        margin = thresholds["flag_distribution_margin"]
        if margin:
            away = []
            for key, name, column in VALUES:
                mine, team = share(key)(row), _team(rows, row, share(key))
                if mine is not None and team is not None and abs(mine - team) > margin:
                    away.append((abs(mine - team), column, name, mine, team))
            if away:  # one flag, for the rating furthest from the team's share
                _, column, name, mine, team = max(away)
                add("one_sided", column, mine, team,
                    f"{name} on {mine:.0%} of main steps; team median {team:.0%} (flagged more than {margin:.0%} away)")
        if found:
            result[row["id"]] = found
    return result
