"""The gate: is a candidate bot better than (or as good as) a baseline? A sequential test on duplicate deals."""
