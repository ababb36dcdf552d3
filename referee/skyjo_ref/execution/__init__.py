"""The execution layer: plays games on a referee (local, or Dask workers) and knows nothing of ratings.

``play`` plays a list of games and commits each to a writer; ``backend`` is
the local referee and its bot processes; ``executor`` reads the executor
setting and ``dask_backend`` runs it on Dask workers; ``types`` is the neutral
vocabulary (GameId, RoomConfig, errors) the tournament, the gate and
``match`` hand it. Imports point down only: never to ``tournament``, ``gate``
or ``cli`` (tests/test_execution_imports.py). See docs/architecture.md.
"""
