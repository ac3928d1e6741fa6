"""The layers onset (analysis/onset.py) against hand examples: the first round from which a
layer stays below half the IID run's effective rank, not the first drop from initialisation."""
from __future__ import annotations

import math

from collapse_lab.analysis.onset import line, onsets, summary


def test_the_onset_is_where_the_ratio_stays_below_not_the_first_dip():
    z = {1: -0.5, 2: -0.9, 3: -2.23, 4: -2.5, 5: -3.0, 9: -3.42}  # the first drop (round 1) is not collapse
    dips = {1: -1.5, 2: -0.2, 3: -1.1, 4: -1.3}                     # below at 1, back above at 2: onset 3
    never = {1: -1.2, 2: -1.4, 3: -0.8}                               # above again at the last round
    ratio = {**{("z", r): v for r, v in z.items()}, **{("features.4", r): v for r, v in dips.items()},
             **{("features.1", r): v for r, v in never.items()}}
    assert onsets(ratio) == {"z": 3, "features.4": 3}


def _rows(group: str, values: dict[tuple, float]) -> list[dict]:
    return [{"run": f"{group}-s{s}", "group": group, "model": "global", "layer": layer, "round": r,
             "effective_rank": v * (1 + 0.01 * s)} for (layer, r), v in values.items() for s in (-1, 1)]


def test_the_summary_reads_seed_means_against_the_iid_group_and_says_one_line():
    iid = {(layer, r): 40.0 for layer in ("features.4", "z") for r in range(4)}
    skew = {("features.4", 0): 40.0, ("features.4", 1): 30.0, ("features.4", 2): 15.0, ("features.4", 3): 12.0,
            ("z", 0): 40.0, ("z", 1): 8.0, ("z", 2): 7.0, ("z", 3): 5.0}
    (s,) = summary(_rows("a = 0.01", skew) + _rows("a = inf", iid), {"a = 0.01": "a = inf"})
    assert s["first"] == "z" and s["onsets"]["z"]["round"] == 1 and s["onsets"]["features.4"]["round"] == 2
    assert math.isclose(s["onsets"]["z"]["ratio"], math.log2(8 / 40))  # the seeds' +-1 % cancel in the mean
    text = line(s)
    assert "collapse starts in z at round 1" in text and "-2.32" in text and "features.4 at round 2" in text
