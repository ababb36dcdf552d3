package skyjo.bot;

/** A message from the referee that cannot be read as what it claims to be (a grid of 11 slots, say). */
public class ProtocolException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ProtocolException(String message) {
        super(message);
    }
}
