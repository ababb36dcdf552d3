"""``skyjo-ref report``: one static HTML file of a tournament's results, with charts and a game viewer.

A reader of the results store and the game records, never a writer; it
imports nothing of the referee server. :mod:`.data` gathers the numbers,
:mod:`.render` puts them in the page.
"""

from skyjo_ref.report.data import ReportOptions, collect
from skyjo_ref.report.render import render, write_game, write_report

__all__ = ["ReportOptions", "collect", "render", "write_game", "write_report"]
