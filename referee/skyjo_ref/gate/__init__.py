"""The gate: is a candidate bot better than (or as good as) a baseline? A sequential test on duplicate deals."""

from typing import Final

#: A gate without ``--max-games`` stops without a verdict after this many games (a truncated test). Here, not in
#: :mod:`skyjo_ref.gate.spec`, so that ``gate --help`` shows it without loading the store and the statistics.
DEFAULT_MAX_GAMES: Final = 20_000
