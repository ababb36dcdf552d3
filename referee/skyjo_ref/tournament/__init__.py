"""Duplicate round-robin tournaments on a referee, with a SQLite results store and Elo tables.

``config`` reads and checks the YAML file; ``schedule`` lists the games;
``store`` keeps every finished game; ``elo`` and ``tables`` rate them;
``runner`` plays what the store lacks through the execution layer
(:mod:`skyjo_ref.execution`: a referee reached through MatchService, or Dask
workers). Rendering lives with the CLI (``cli/tournament_view``). See
docs/tournaments.md.
"""
