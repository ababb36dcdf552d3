package bot;

import java.util.List;
import skyjo.bot.Action;
import skyjo.bot.Bot;
import skyjo.bot.DecisionKind;
import skyjo.bot.Grid;
import skyjo.bot.SkyjoBot;
import skyjo.bot.View;

/**
 * __BOT_NAME__: keep low cards. Take a low discard, put every card where it lowers the score most.
 *
 * <p>This is the reference strategy every SDK's template plays, move for move: replace {@link #decide} with yours.
 * The SDK does the rest (the connection, Hello, games one after another, reconnects, signals, exit codes).
 */
public final class MyBot implements Bot {
    @Override
    public String name() {
        return "__BOT_NAME__";
    }

    @Override
    public Action decide(View view) {
        // view holds everything this seat may see; view.legalActions() lists what may be played.
        Grid grid = view.myGrid(); // your 12 slots: grid.value(pos) is empty while a card is hidden
        List<Integer> hidden = grid.hiddenPositions();

        // Opening: reveal any two of your hidden cards.
        if (view.decision() == DecisionKind.OPENING_REVEAL) {
            return Action.reveal(hidden.get(0));
        }

        // Start of a turn: take the top discard when it is low, otherwise draw.
        if (view.decision() == DecisionKind.DRAW_OR_TAKE) {
            boolean low = view.discardTop().isPresent() && view.discardTop().getAsInt() <= 3;
            return low ? Action.take() : Action.draw();
        }

        // You hold a card (view.hand()): put it where it saves the most points.
        int card = view.hand().getAsInt();
        List<Integer> revealed = grid.revealedPositions();
        Integer worst = null; // the first revealed position with the highest value
        for (int pos : revealed) {
            if (worst == null || grid.value(pos).getAsInt() > grid.value(worst).getAsInt()) {
                worst = pos;
            }
        }
        if (worst != null && grid.value(worst).getAsInt() > card) {
            return Action.swap(worst); // replace your highest revealed card
        }
        if (!hidden.isEmpty() && card <= 4) {
            return Action.swap(hidden.get(0)); // a low card beats an unknown one (about 5 on average)
        }
        if (!hidden.isEmpty() && view.decision() == DecisionKind.SWAP_OR_REVEAL) {
            return Action.reveal(hidden.get(0)); // discard the drawn card and turn a hidden one
        }
        // A card you took must be placed somewhere.
        return Action.swap(hidden.isEmpty() ? revealed.get(0) : hidden.get(0));
    }

    /** Plays on the referee in SKYJO_ADDR with the token in SKYJO_TOKEN (or --addr/--token); see README.md. */
    public static void main(String[] args) {
        SkyjoBot.run(new MyBot(), args);
    }
}
