package skyjo.bot;

import java.util.List;

/**
 * Sent to every seat when a game is over.
 *
 * @param gameId the game
 * @param totals final totals, one per seat (lower is better)
 * @param ranks competition ranks, one per seat: 1 = best, ties share a rank
 * @param winners seats with rank 1, ascending
 * @param forfeits seats that forfeited (they rank last)
 */
public record GameResult(String gameId, List<Integer> totals, List<Integer> ranks, List<Integer> winners,
        List<Integer> forfeits) {
    /** Copies the lists (immutable). */
    public GameResult {
        totals = List.copyOf(totals);
        ranks = List.copyOf(ranks);
        winners = List.copyOf(winners);
        forfeits = List.copyOf(forfeits);
    }
}
