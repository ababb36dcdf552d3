package skyjo.bot;

/** What happens to a finisher whose score is not strictly lowest. */
public enum FinisherPenalty {
    /** Doubled, but only if above 0 (official). */
    DOUBLE_IF_POSITIVE,
    /** Doubled whatever its sign. */
    DOUBLE,
    /** Plus 10 points. */
    PLUS_10;

    /** The name used in rules files and records: {@code DOUBLE_IF_POSITIVE} is {@code double_if_positive}. */
    public String text() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
