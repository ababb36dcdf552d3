package skyjo.bot;

/** The action vocabulary of {@code skyjo-game/1}: what a player may do. */
public enum ActionKind {
    /** Turn a hidden card: an opening reveal, or after discarding a drawn card. Takes a position. */
    REVEAL("reveal"),
    /** Take the top card of the draw pile into hand. */
    DRAW("draw"),
    /** Take the top discard into hand (a swap must follow). */
    TAKE("take"),
    /** Put the card in hand at a position; the card there is discarded. Takes a position. */
    SWAP("swap");

    private final String text;

    ActionKind(String text) {
        this.text = text;
    }

    /** The word of the text form and of game records: {@code reveal}, {@code draw}, {@code take}, {@code swap}. */
    public String text() {
        return text;
    }

    /** Whether actions of this kind name a grid position. */
    public boolean takesPosition() {
        return this == REVEAL || this == SWAP;
    }

    /** The kind spelled {@code word} (any case), or an {@link InvalidActionException} naming the four. */
    public static ActionKind fromText(String word) {
        for (ActionKind kind : values()) {
            if (kind.text.equalsIgnoreCase(word)) {
                return kind;
            }
        }
        throw new InvalidActionException("unknown action '" + word + "': expected one of reveal, draw, take, swap");
    }

    @Override
    public String toString() {
        return text;
    }
}
