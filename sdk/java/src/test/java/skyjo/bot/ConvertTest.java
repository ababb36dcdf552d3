package skyjo.bot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class ConvertTest {
    private final GameStart start = Convert.gameStart(Protos.gameStart("g1", 0, "me", "you"));

    @Test
    void readsAViewWithEverythingTheRequestHolds() {
        View view = Convert.view(Protos.drawOrTake(7, "g1"), start);
        assertEquals("g1", view.gameId());
        assertEquals(0, view.seat());
        assertEquals(List.of("me", "you"), view.players());
        assertEquals(Rules.OFFICIAL, view.rules());
        assertEquals(DecisionKind.DRAW_OR_TAKE, view.decision());
        assertEquals(List.of(Action.draw(), Action.take()), view.legalActions());
        assertEquals(OptionalInt.of(2), view.discardTop());
        assertEquals(123, view.drawPileSize());
        assertEquals(OptionalInt.empty(), view.hand());
        assertEquals(OptionalInt.of(0), view.starter());
        assertEquals(OptionalInt.empty(), view.finisher());
        assertEquals(2000, view.timeLeftMs());
        assertEquals(List.of(0, 5), view.myGrid().revealedPositions());
        assertEquals(10, view.myGrid().hiddenPositions().size());
        assertEquals(12, view.myGrid().revealedSum());
        assertEquals(OptionalInt.of(7), view.myGrid().value(5));
        assertTrue(view.myGrid().isHidden(1));
        assertEquals(List.of(1, 7), view.grids().get(1).revealedPositions());
        assertEquals("  5   ?   ?   ?\n  ?   7   ?   ?\n  ?   ?   ?   ?", view.myGrid().render());
        // the deck minus 5, 7, 1, 2 (grids) and 9, 2 (discards): 144 cards
        int unseen = view.unseenCards().values().stream().mapToInt(Integer::intValue).sum();
        assertEquals(144, unseen);
        assertEquals(8, view.unseenCards().get(2));
        assertEquals(TimeControl.class, start.timeControl().orElseThrow().getClass());
    }

    @Test
    void refusesMalformedViews() {
        skyjo.v1.DecisionRequest good = Protos.drawOrTake(7, "g1");
        skyjo.v1.DecisionRequest shortGrid = good.toBuilder()
                .setView(good.getView().toBuilder().setGrids(0, Protos.grid(1, 2, 3))).build();
        assertThrows(ProtocolException.class, () -> Convert.view(shortGrid, start));
        skyjo.v1.DecisionRequest hiddenWithValue = good.toBuilder().setView(good.getView().toBuilder()
                .setGrids(0, good.getView().getGrids(0).toBuilder().setSlots(1,
                        skyjo.v1.Slot.newBuilder().setState(skyjo.v1.SlotState.SLOT_STATE_HIDDEN).setValue(3))))
                .build();
        ProtocolException e = assertThrows(ProtocolException.class, () -> Convert.view(hiddenWithValue, start));
        assertTrue(e.getMessage().contains("slot 1 is hidden and has a value"), e.getMessage());
        skyjo.v1.DecisionRequest noLegal = good.toBuilder().clearLegalActions().build();
        assertThrows(ProtocolException.class, () -> Convert.view(noLegal, start));
    }

    @Test
    void repliesByIndexWhenLegalElseSpelledOut() {
        List<Action> legal = List.of(Action.draw(), Action.take());
        skyjo.v1.DecisionReply byIndex = Convert.reply(9, Action.take(), legal);
        assertEquals(9, byIndex.getRequestId());
        assertEquals(1, byIndex.getIndex());
        skyjo.v1.DecisionReply spelled = Convert.reply(9, Action.swap(4), legal);
        assertTrue(spelled.hasAction());
        assertEquals(Action.swap(4), Convert.action(spelled.getAction()));
        assertFalse(Convert.errorReply(9, "x").hasAction());
    }

    @Test
    void rulesFillAPresetsValues() {
        Rules french = Convert.rules(skyjo.v1.Rules.newBuilder().setPreset("french").build());
        assertEquals(FinisherPenalty.PLUS_10, french.finisherPenalty());
        assertEquals(NextRoundStarter.HIGHEST_REVEAL, french.nextRoundStarter());
        Rules noClear = Convert.rules(skyjo.v1.Rules.newBuilder().setColumnClear(false).setEndScore(50).build());
        assertFalse(noClear.columnClear());
        assertEquals(50, noClear.endScore());
        assertThrows(ProtocolException.class, () -> Convert.rules(skyjo.v1.Rules.newBuilder().setPreset("x").build()));
    }

    @Test
    void unknownEventKindsAreSkipped() {
        List<Event> events = Convert.events(List.of(
                skyjo.v1.Event.newBuilder().setKind("swap").setSeat(1).setPos(3).setValue(4).setReplaced(9).build(),
                skyjo.v1.Event.newBuilder().setKind("a_later_kind").build()));
        assertEquals(1, events.size());
        assertEquals(EventKind.SWAP, events.get(0).kind());
        assertEquals(OptionalInt.of(9), events.get(0).replaced());
        assertEquals(OptionalInt.empty(), events.get(0).round());
    }
}
