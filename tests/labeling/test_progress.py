"""How far a job is (labeling/progress.py): the one rule behind imports', runs', retrains' and the CLI's progress."""
from labeling.progress import Pace, pace


def test_the_rate_and_time_left_go_by_what_was_done_since_counting_started():
    assert pace(150, 500, 50, counted_from=50) == Pace(150, 500, 0.3, 2.0, 175.0)
    assert pace(40, 100, 30) == Pace(40, 100, 0.4, 40 / 30, 45.0)


def test_nothing_done_yet_or_no_time_passed_gives_no_rate_and_no_time_left():
    assert pace(0, 100, 30) == Pace(0, 100, 0.0, None, None)
    assert pace(50, 100, 30, counted_from=50) == Pace(50, 100, 0.5, None, None)  # none in this pass yet
    assert pace(10, 100, 0) == Pace(10, 100, 0.1, None, None)


def test_without_a_total_there_is_a_rate_but_no_share_and_no_time_left():
    assert pace(300, None, 3) == Pace(300, None, None, 100.0, None)
    assert pace(0, 0, 3) == Pace(0, 0, None, None, None)  # a total of 0: not counted yet
    assert pace(0, 0, 3).fraction is None


def test_all_done_leaves_no_time_and_the_share_never_passes_one():
    assert pace(10, 10, 5) == Pace(10, 10, 1.0, 2.0, 0.0)
    assert pace(12, 10, 6) == Pace(12, 10, 1.0, 2.0, 0.0)  # a file that grew, a count that overshot
