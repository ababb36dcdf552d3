package skyjo.bot;

/** Who starts the rounds after the first. */
public enum NextRoundStarter {
    /** The previous round's finisher (official). */
    FINISHER,
    /** The lowest round score after penalty; ties go to the lowest seat. */
    ROUND_WINNER,
    /** The highest sum of opening reveals, as in round 1. */
    HIGHEST_REVEAL;

    /** The name used in rules files and records: {@code FINISHER} is {@code finisher}. */
    public String text() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
