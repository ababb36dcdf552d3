package skyjo.bot;

import java.util.List;

/** The reference strategy, exactly as the template's bot/MyBot.java plays it (and examples/python/minimal_bot.py). */
final class MinimalBot implements Bot {
    @Override
    public Action decide(View view) {
        Grid grid = view.myGrid();
        List<Integer> hidden = grid.hiddenPositions();
        if (view.decision() == DecisionKind.OPENING_REVEAL) {
            return Action.reveal(hidden.get(0));
        }
        if (view.decision() == DecisionKind.DRAW_OR_TAKE) {
            boolean low = view.discardTop().isPresent() && view.discardTop().getAsInt() <= 3;
            return low ? Action.take() : Action.draw();
        }
        int card = view.hand().getAsInt();
        List<Integer> revealed = grid.revealedPositions();
        Integer worst = null;
        for (int pos : revealed) {
            if (worst == null || grid.value(pos).getAsInt() > grid.value(worst).getAsInt()) {
                worst = pos;
            }
        }
        if (worst != null && grid.value(worst).getAsInt() > card) {
            return Action.swap(worst);
        }
        if (!hidden.isEmpty() && card <= 4) {
            return Action.swap(hidden.get(0));
        }
        if (!hidden.isEmpty() && view.decision() == DecisionKind.SWAP_OR_REVEAL) {
            return Action.reveal(hidden.get(0));
        }
        return Action.swap(hidden.isEmpty() ? revealed.get(0) : hidden.get(0));
    }
}
