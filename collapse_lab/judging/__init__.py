"""Judging the papers' claims: the rules, apart from the measuring (``analysis``) that feeds
them. A claim as a check on plotted numbers (``claims``), its three-valued verdict over seeds
with intervals and Holm (``verdict``, ``seeds``), the ordered-alternative and equivalence
tests of the confirmatory protocol (``ordered``, ``confirm``), the regime a run reached
(``regime``: own-data accuracy, plateau, dead units; ``plateau``), arms against a baseline
(``arms``), the integrity of kept evidence (``evidence_check``) and the ladder's rule: the
regime of a rung, the choice of rung, how a verdict is worded (``ladder``). Pure functions over
numbers and stored runs: below the analysis, which renders what they judge."""
