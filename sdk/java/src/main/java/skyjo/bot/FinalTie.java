package skyjo.bot;

/** What a tie for the lowest total at the end of the game does. */
public enum FinalTie {
    /** Tied players share the win (official). */
    SHARED,
    /** Further rounds until one player alone is lowest. */
    EXTRA_ROUND;

    /** The name used in rules files and records: {@code SHARED} is {@code shared}. */
    public String text() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
