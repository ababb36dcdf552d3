package skyjo.bot;

/** Which decision is due: the four moments a player chooses something. */
public enum DecisionKind {
    /** Reveal one of your two opening cards (legal: reveal of hidden slots). */
    OPENING_REVEAL,
    /** The start of your turn (legal: draw, take). */
    DRAW_OR_TAKE,
    /** You drew {@code view.hand()}: swap it, or discard it and reveal a hidden slot. */
    SWAP_OR_REVEAL,
    /** You took {@code view.hand()} from the discard pile: you must swap it. */
    SWAP_AFTER_TAKE;

    /** The snake_case name used by game records and the other SDKs: {@code draw_or_take}. */
    public String text() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
