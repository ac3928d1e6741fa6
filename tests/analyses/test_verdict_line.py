"""The line ``figures`` prints per entry counts each claim once, by its one verdict."""
from collapse_lab.catalogue.render import verdict_counts


def test_each_claim_is_counted_once_by_its_verdict():
    claims = [{"holds": False, "verdict": "refuted"}, {"holds": False, "verdict": "not resolved at this scale"},
              {"holds": False, "verdict": "not resolved at this scale"}, {"holds": True, "verdict": "holds"},
              {"holds": None}, {"holds": True}, {"holds": False, "verdict": "uninformative (measure saturated)"}]
    assert verdict_counts(claims) == ("1 holds, 1 refuted, 2 not resolved at this scale, 1 uninformative (measure "
                                      "saturated), 1 holds (one seed, no interval), 1 not checked")
    assert verdict_counts([]) == "none"
