package skyjo.bot;

/** The referee refused or ended the session for good: a bad token, another connection took over, a bad Hello. */
public class SessionRefusedException extends Exception {
    private static final long serialVersionUID = 1L;

    public SessionRefusedException(String message) {
        super(message);
    }
}
