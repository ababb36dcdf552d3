package skyjo.bot;

import java.util.Optional;

/**
 * The referee played for this seat because its answer (or its silence) was at fault.
 *
 * @param gameId the game
 * @param requestId the request concerned (0 when the fault was not an answer to a request)
 * @param reason {@code timeout}, {@code illegal} or {@code malformed}
 * @param detail what was wrong and what was expected
 * @param played the action the referee played instead, if any
 * @param strikes this seat's strikes in this game, this one included
 * @param maxStrikes strikes that make the seat forfeit (0: never)
 */
public record Strike(String gameId, long requestId, String reason, String detail, Optional<Action> played,
        int strikes, int maxStrikes) {}
