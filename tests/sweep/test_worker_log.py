"""A failed run's line quotes its own log line (issue 47): a worker's log holds every unit it
trained, and its last line may be another run's."""
from collapse_lab.sweep.backends import _Worker


def test_a_failed_run_quotes_its_own_line(tmp_path):
    w = _Worker.__new__(_Worker)
    w.log = tmp_path / "worker-0.log"
    w.log.write_text("runA round 1/2: test acc 0.5\nrunB round 1/2: test acc 0.4\nrunB round 2/2: test acc 0.6\n")
    assert w.quote("runA") == f"its last line in {w.log}: runA round 1/2: test acc 0.5"
    assert w.quote("runB").endswith("runB round 2/2: test acc 0.6")
    assert w.quote("runC") == f"no line of it in {w.log}"
