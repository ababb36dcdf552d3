package skyjo.bot;

/** No session with the referee could be (re)established within the give-up time. */
public class ConnectionLostException extends Exception {
    private static final long serialVersionUID = 1L;

    public ConnectionLostException(String message) {
        super(message);
    }
}
