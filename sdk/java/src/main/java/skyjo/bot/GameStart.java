package skyjo.bot;

import java.util.List;
import java.util.Optional;

/**
 * Sent to every seat when a game begins.
 *
 * @param gameId the referee's id for the game
 * @param seat your seat, 0-based: {@code players().get(seat())} is you
 * @param players display names, one per seat, in seat order
 * @param rules the rules in force
 * @param timeControl the time control in force (empty only when a referee sends none)
 */
public record GameStart(String gameId, int seat, List<String> players, Rules rules,
        Optional<TimeControl> timeControl) {
    /** Copies the list (immutable). */
    public GameStart {
        players = List.copyOf(players);
    }
}
