"""``python -m skyjo_ref`` is the ``skyjo-ref`` command (handy in tests and venvs without scripts on PATH)."""

from skyjo_ref.cli.entry import main

main()
