package skyjo.bot;

import java.util.List;

/**
 * Sent to every seat when a round ends.
 *
 * @param gameId the game
 * @param round the 0-based round
 * @param finisher the seat that revealed its last card first
 * @param raw round scores before the finisher penalty, one per seat
 * @param scores round scores after it, one per seat
 * @param totals game totals after this round, one per seat
 */
public record RoundResult(String gameId, int round, int finisher, List<Integer> raw, List<Integer> scores,
        List<Integer> totals) {
    /** Copies the lists (immutable). */
    public RoundResult {
        raw = List.copyOf(raw);
        scores = List.copyOf(scores);
        totals = List.copyOf(totals);
    }
}
