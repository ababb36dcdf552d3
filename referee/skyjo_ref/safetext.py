"""Text a bot wrote, made safe to show on a terminal: no escape sequences, no control characters.

A bot's exception message, its output's last lines and the detail of its strikes reach the operator's
terminal (the "first failure" note, a crash's tail, the tournament's notes). Raw, they could move the cursor,
rewrite earlier lines, change the window title, ring the bell or reorder text (Unicode bidirectional
overrides). The HTML report escapes on its own; this is the terminal's side, applied where bot text enters
the referee's messages and records (:mod:`skyjo_ref.players`, :mod:`skyjo_ref.match.runner`).
"""

from __future__ import annotations

import re
from typing import Final

#: ESC sequences: CSI (``ESC [ ... final``), OSC/DCS/APC/PM/SOS strings (up to BEL or ST), and two-byte ones.
_ESCAPES: Final = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, erase
    r"|\x1b[\]P^_X][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC (window title, hyperlinks), DCS, PM, APC, SOS
    r"|\x1b[@-Z\\-_]"  # other two-byte sequences
    r"|\x9b[0-?]*[ -/]*[@-~]"  # CSI as its one-byte C1 form
)
#: Control characters (C0 but tab and newline, DEL, C1) and Unicode's bidirectional overrides and isolates.
_CONTROLS: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` without escape sequences, each other control character shown as ``?`` (tabs and newlines
    stay)."""
    return _CONTROLS.sub("?", _ESCAPES.sub("", text))
