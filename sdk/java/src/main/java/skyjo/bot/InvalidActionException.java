package skyjo.bot;

/** A text or value that does not spell an action (an unknown word, a position outside 0-11). */
public class InvalidActionException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public InvalidActionException(String message) {
        super(message);
    }
}
