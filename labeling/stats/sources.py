"""Agreement between label sources (people, PRM, judge, rollouts, files), per pair, with intervals.

Each pair is compared on the steps both labelled, on the labels a PRM would be trained on
(``labeling.quality.sources``: true or false under the neutral policy): the share of those
steps they agree on, and Cohen's kappa with its bootstrap interval (``agreement.pair_kappa``,
the rule of the annotators' kappa). The disagreement list names the steps of one pair that
differ, linked to their solution, for a lead to look at.
"""
from itertools import combinations

import numpy as np

from labeling.errors import DomainError
from labeling.models import Step
from labeling.quality import sources as label_sources

from .agreement import AgreementUndefined, pair_kappa

DISAGREEMENTS_LIMIT = 200


def pairwise(project, *, generation=None, neutral="positive", replicates=200, seed=0):
    """Every pair of the project's sources: ``{"a", "b", "shared", "agree", "kappa", "low", "high", "reason"}``.

    ``shared`` steps both labelled; ``agree`` the share of them with the same label (None when
    none is shared); ``kappa`` with its 95% interval, or ``reason`` why it is undefined.
    """
    sources = label_sources.available(project)
    tables = {s.selector: label_sources.labels(project, s, generation=generation, neutral=neutral) for s in sources}
    pairs = []
    for a, b in combinations(sources, 2):
        ta, tb = tables[a.selector], tables[b.selector]
        shared = sorted(set(ta) & set(tb))
        x = np.array([ta[step][1] for step in shared], dtype=np.int64)
        y = np.array([tb[step][1] for step in shared], dtype=np.int64)
        row = {"a": a.describe(), "b": b.describe(), "shared": len(shared),
               "agree": float(np.mean(x == y)) if shared else None,
               "kappa": None, "low": None, "high": None, "reason": ""}
        try:
            interval = pair_kappa(x, y, 2, replicates=replicates, seed=seed, name="kappa",
                                  empty="no step was labelled by both")
            row.update(kappa=interval.estimate, low=interval.low, high=interval.high)
        except AgreementUndefined as exc:
            row["reason"] = str(exc)
        pairs.append(row)
    return {"sources": [s.describe() for s in sources], "pairs": pairs}


def disagreements(project, a, b, *, generation=None, neutral="positive", limit=DISAGREEMENTS_LIMIT):
    """The steps where sources ``a`` and ``b`` (``label_sources.Source``) give different labels, by solution
    and position: ``{"count", "rows": [{"solution", "position", "alternative", "a", "b"}]}``, at most ``limit``."""
    if a.selector == b.selector:
        raise DomainError("choose two different sources", field="b")
    ta = label_sources.labels(project, a, generation=generation, neutral=neutral)
    tb = label_sources.labels(project, b, generation=generation, neutral=neutral)
    differ = sorted(step for step in set(ta) & set(tb) if ta[step][1] != tb[step][1])
    where = dict((pk, (solution, position, alternative)) for pk, solution, position, alternative in
                 Step.objects.filter(pk__in=differ[:limit]).values_list("pk", "solution_id", "position", "alternative"))
    rows = [{"solution": where[step][0], "position": where[step][1], "alternative": where[step][2],
             "a": ta[step][0], "b": tb[step][0]} for step in differ[:limit]]
    rows.sort(key=lambda r: (r["solution"], r["position"], r["alternative"]))
    return {"count": len(differ), "rows": rows}
