"""The statistics room: rating models and sequential tests as pure functions (no I/O, no CLI).

The tournament, the gate and the report read these modules; nothing here
imports any other part of ``skyjo_ref`` (tests/test_execution_imports.py).

- :mod:`.bradley_terry`: pairwise Elo (Bradley-Terry) with block-bootstrap intervals.
- :mod:`.plackett_luce`: whole-table orders (Plackett-Luce) with block-bootstrap intervals.
- :mod:`.bootstrap`: 95% intervals from bootstrap draws (normal with Student's quantile, percentile).
- :mod:`.clustered`: a mean over duplicate blocks with a cluster-robust 95% interval (starter effects).
- :mod:`.sprt`: the gate's sequential test over duplicate blocks.
"""
