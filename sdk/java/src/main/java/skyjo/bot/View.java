package skyjo.bot;

import java.util.List;
import java.util.OptionalInt;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Everything one seat may know when a decision is due: the bot's whole world.
 *
 * <p>It holds exactly what docs/rules.md's "Hidden information" allows: revealed and removed slots of every grid,
 * the discard pile, pile sizes, the card in hand (only to the seat holding it), scores, and whose turn it is. Never
 * a hidden value or the draw pile's order.
 *
 * @param gameId the game this decision belongs to
 * @param seat your seat, 0-based
 * @param players display names, one per seat (from GameStart)
 * @param rules the rules in force (from GameStart)
 * @param round the 0-based round
 * @param decision which of the four decisions is due
 * @param grids every seat's grid, in seat order
 * @param discardPile the discard pile, bottom first: the last value is the top card
 * @param drawPileSize cards left in the draw pile
 * @param hand the card you drew or took (only in the two swap decisions)
 * @param totals game totals before this round, one per seat
 * @param roundScores scores of the finished rounds, one list per round
 * @param finisher the seat that ended the round, once one has: everyone else has one last turn
 * @param starter the seat that started this round's turns (empty during the opening reveals)
 * @param legalActions the actions you may play now; answer with one of them
 * @param timeLeftMs your time for this answer in milliseconds (86,400,000 when there is no limit)
 */
public record View(
        String gameId,
        int seat,
        List<String> players,
        Rules rules,
        int round,
        DecisionKind decision,
        List<Grid> grids,
        List<Integer> discardPile,
        int drawPileSize,
        OptionalInt hand,
        List<Integer> totals,
        List<List<Integer>> roundScores,
        OptionalInt finisher,
        OptionalInt starter,
        List<Action> legalActions,
        long timeLeftMs) {

    /** How many cards of each value the 150-card deck holds: -2 five times, 0 fifteen times, the rest ten. */
    public static final SortedMap<Integer, Integer> DECK_COUNTS = deckCounts();

    /** Copies the lists (immutable). */
    public View {
        players = List.copyOf(players);
        grids = List.copyOf(grids);
        discardPile = List.copyOf(discardPile);
        totals = List.copyOf(totals);
        roundScores = roundScores.stream().map(List::copyOf).toList();
        legalActions = List.copyOf(legalActions);
    }

    private static SortedMap<Integer, Integer> deckCounts() {
        TreeMap<Integer, Integer> counts = new TreeMap<>();
        counts.put(-2, 5);
        counts.put(-1, 10);
        counts.put(0, 15);
        for (int value = 1; value <= 12; value++) {
            counts.put(value, 10);
        }
        return java.util.Collections.unmodifiableSortedMap(counts);
    }

    /** Seats at the table. */
    public int numPlayers() {
        return grids.size();
    }

    /** Your own grid. */
    public Grid myGrid() {
        return grids.get(seat);
    }

    /** The top card of the discard pile, if there is one. */
    public OptionalInt discardTop() {
        return discardPile.isEmpty() ? OptionalInt.empty() : OptionalInt.of(discardPile.get(discardPile.size() - 1));
    }

    /** Whether {@code action} is among the legal actions. */
    public boolean isLegal(Action action) {
        return legalActions.contains(action);
    }

    /**
     * The cards this seat cannot see (hidden slots plus the draw pile) as value to count: the deck minus every visible
     * card (grids, discard pile, hand). Its average is the expected value of any hidden card.
     */
    public SortedMap<Integer, Integer> unseenCards() {
        TreeMap<Integer, Integer> unseen = new TreeMap<>(DECK_COUNTS);
        for (int value : discardPile) {
            unseen.merge(value, -1, Integer::sum);
        }
        for (Grid grid : grids) {
            for (OptionalInt value : grid.values()) {
                value.ifPresent(v -> unseen.merge(v, -1, Integer::sum));
            }
        }
        hand.ifPresent(v -> unseen.merge(v, -1, Integer::sum));
        return unseen;
    }

    /** The average of {@link #unseenCards()}: what a hidden card is worth on average (0 when none is unseen). */
    public double expectedHiddenValue() {
        long count = 0;
        long sum = 0;
        for (var entry : unseenCards().entrySet()) {
            count += entry.getValue();
            sum += (long) entry.getKey() * entry.getValue();
        }
        return count == 0 ? 0.0 : (double) sum / count;
    }
}
