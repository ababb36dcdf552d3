package skyjo.bot;

/**
 * A Skyjo bot: implement {@link #decide(View)}; the other methods are optional hooks.
 *
 * <p>The client calls a bot for one game at a time, in order, on one thread: {@link #onGameStart}, then
 * {@link #decide} and {@link #onEvent} as the game goes, {@link #onRoundResult} after each round, and
 * {@link #onGameOver}; then the next game. A lambda is a bot too: {@code SkyjoBot.run(view -> Action.draw())}.
 *
 * <pre>{@code
 * final class MyBot implements Bot {
 *     public Action decide(View view) {
 *         return view.legalActions().get(0);
 *     }
 * }
 * public static void main(String[] args) { SkyjoBot.run(new MyBot(), args); }
 * }</pre>
 */
@FunctionalInterface
public interface Bot {
    /**
     * Chooses an action: one of {@code view.legalActions()}.
     *
     * <p>If it throws (or returns null), the SDK logs the exception with the decision and answers the referee with an
     * error reply carrying the exception's text: the referee strikes the seat at once, plays its default action and
     * records the text. The bot goes on with the next decision.
     */
    Action decide(View view) throws Exception;

    /** The name sent in Hello (informational: the seat's name comes from the match). Default: the class name. */
    default String name() {
        String simple = getClass().getSimpleName();
        return simple.isEmpty() || simple.contains("$$Lambda") ? "java-bot" : simple;
    }

    /** Your bot's version, sent in Hello and kept in every game record's {@code meta.bots}. */
    default String version() {
        return "";
    }

    /** A game begins: your seat, the players, the rules and the time control. */
    default void onGameStart(GameStart start) {}

    /** Something public happened at the table (events arrive before the decision that follows them). */
    default void onEvent(Event event) {}

    /** A round ended: its scores and the game totals. */
    default void onRoundResult(RoundResult result) {}

    /** The game ended. */
    default void onGameOver(GameResult result) {}

    /** The referee played for you: a timeout, an illegal answer or a malformed message (the SDK logs it too). */
    default void onStrike(Strike strike) {}
}
