package skyjo.bot;

import java.util.Locale;
import java.util.Optional;

/** Public events: everything that happens at the table, as every seat sees it (the fields each sets in brackets). */
public enum EventKind {
    /** A round was dealt (round). */
    ROUND_START,
    /** An opening reveal, or a reveal after discarding a drawn card (seat, pos, value). */
    REVEAL,
    /** The seat drew from the draw pile; the value stays private (seat). */
    DRAW,
    /** The seat took the top discard (seat, value). */
    TAKE,
    /** The seat discarded the card it drew; a reveal follows (seat, value). */
    DISCARD,
    /** The seat placed value at pos; replaced went to the discard pile (seat, pos, value, replaced). */
    SWAP,
    /** Three equal revealed values left the grid (seat, pos = the column 0-3, value). */
    COLUMN_CLEARED,
    /** The discards became the draw pile (value = the new draw pile's size). */
    RESHUFFLE,
    /** Who plays the first turn of the round (seat). */
    TURNS_START,
    /** That seat revealed its last card: everyone else has one more turn (seat). */
    ROUND_FINISHING,
    /** Hidden cards turned at the end of the round (seat, pos, value). */
    FINAL_REVEAL;

    /** The wire and record name: {@code column_cleared}. */
    public String text() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The kind named {@code text} on the wire, or empty for a kind this SDK does not know (a later protocol's). */
    public static Optional<EventKind> fromText(String text) {
        for (EventKind kind : values()) {
            if (kind.text().equals(text)) {
                return Optional.of(kind);
            }
        }
        return Optional.empty();
    }
}
