package skyjo.bot;

/**
 * One action, as in a game record: {@code reveal 5}, {@code draw}, {@code take}, {@code swap 11}.
 *
 * <p>Build one with {@link #reveal(int)}, {@link #draw()}, {@link #take()}, {@link #swap(int)} or {@link #parse(String)};
 * {@link #toString()} is the text form {@code parse} reads. Grid positions are row-major, {@code pos = 4*row + col}
 * (rows 0-2, columns 0-3). Draw and take have no position: their {@code pos()} is {@link #NO_POSITION}.
 *
 * @param kind which action
 * @param pos the grid position 0-11 for reveal and swap, {@link #NO_POSITION} for draw and take
 */
public record Action(ActionKind kind, int pos) {
    /** The {@code pos()} of an action that takes no position (draw, take). */
    public static final int NO_POSITION = -1;

    private static final Action DRAW = new Action(ActionKind.DRAW, NO_POSITION);
    private static final Action TAKE = new Action(ActionKind.TAKE, NO_POSITION);

    /** Checks that reveal and swap have a position 0-11 and draw and take none. */
    public Action {
        if (kind == null) {
            throw new InvalidActionException("an action needs a kind: reveal, draw, take or swap");
        }
        if (kind.takesPosition()) {
            if (pos < 0 || pos >= Grid.SIZE) {
                throw new InvalidActionException(kind + " needs a position 0-11 (pos = 4*row + col), got " + pos);
            }
        } else if (pos != NO_POSITION) {
            throw new InvalidActionException(kind + " takes no position, got " + pos);
        }
    }

    /** Turn the hidden card at {@code pos}. */
    public static Action reveal(int pos) {
        return new Action(ActionKind.REVEAL, pos);
    }

    /** Put the card in hand at {@code pos}. */
    public static Action swap(int pos) {
        return new Action(ActionKind.SWAP, pos);
    }

    /** Draw from the draw pile. */
    public static Action draw() {
        return DRAW;
    }

    /** Take the top discard. */
    public static Action take() {
        return TAKE;
    }

    /** Whether this action names a position (reveal, swap). */
    public boolean hasPosition() {
        return pos != NO_POSITION;
    }

    /** Reads {@code "draw"}, {@code "take"}, {@code "reveal 5"} or {@code "swap 11"} (any case, any spacing). */
    public static Action parse(String text) {
        String[] words = text.trim().split("\\s+");
        if (text.isBlank() || words.length > 2) {
            throw new InvalidActionException(
                    "cannot read action '" + text + "': expected 'draw', 'take', 'reveal POS' or 'swap POS'");
        }
        ActionKind kind = ActionKind.fromText(words[0]);
        if (words.length == 1) {
            return new Action(kind, NO_POSITION);
        }
        int pos;
        try {
            pos = Integer.parseInt(words[1]);
        } catch (NumberFormatException e) {
            throw new InvalidActionException(
                    "cannot read action '" + text + "': position '" + words[1] + "' is not a number 0-11");
        }
        return new Action(kind, pos);
    }

    /** The text form: {@code "swap 3"}, {@code "draw"}. */
    @Override
    public String toString() {
        return hasPosition() ? kind.text() + " " + pos : kind.text();
    }
}
