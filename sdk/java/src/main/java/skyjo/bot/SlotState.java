package skyjo.bot;

/** What a grid slot shows. */
public enum SlotState {
    /** Face down: its value is unknown to everyone. */
    HIDDEN,
    /** Face up: its value is known. */
    REVEALED,
    /** Its column was cleared: it scores 0 and cannot be played. */
    REMOVED;

    /** The lower-case name: {@code hidden}, {@code revealed}, {@code removed}. */
    public String text() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
