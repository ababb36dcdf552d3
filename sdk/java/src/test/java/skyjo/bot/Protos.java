package skyjo.bot;

import java.util.List;

/** Protocol messages for tests, built the way the referee builds them. */
final class Protos {
    private Protos() {}

    static skyjo.v1.Slot hidden() {
        return skyjo.v1.Slot.newBuilder().setState(skyjo.v1.SlotState.SLOT_STATE_HIDDEN).build();
    }

    static skyjo.v1.Slot revealed(int value) {
        return skyjo.v1.Slot.newBuilder().setState(skyjo.v1.SlotState.SLOT_STATE_REVEALED).setValue(value).build();
    }

    static skyjo.v1.Slot removed() {
        return skyjo.v1.Slot.newBuilder().setState(skyjo.v1.SlotState.SLOT_STATE_REMOVED).build();
    }

    /** A grid from 12 cells: null hidden, Integer.MIN_VALUE removed, else revealed. */
    static skyjo.v1.Grid grid(Integer... cells) {
        skyjo.v1.Grid.Builder out = skyjo.v1.Grid.newBuilder();
        for (Integer cell : cells) {
            out.addSlots(cell == null ? hidden() : cell == Integer.MIN_VALUE ? removed() : revealed(cell));
        }
        return out.build();
    }

    static skyjo.v1.Action action(Action action) {
        return Convert.action(action);
    }

    static skyjo.v1.GameStart gameStart(String gameId, int seat, String... players) {
        return skyjo.v1.GameStart.newBuilder()
                .setGameId(gameId)
                .setSeat(seat)
                .addAllPlayers(List.of(players))
                .setRules(skyjo.v1.Rules.newBuilder()
                        .setPreset("official")
                        .setColumnClear(true)
                        .setClearOnFinalReveal(true)
                        .setFinisherPenalty(skyjo.v1.FinisherPenalty.FINISHER_PENALTY_DOUBLE_IF_POSITIVE)
                        .setNextRoundStarter(skyjo.v1.NextRoundStarter.NEXT_ROUND_STARTER_FINISHER)
                        .setEndScore(100)
                        .setFinalTie(skyjo.v1.FinalTie.FINAL_TIE_SHARED))
                .setTimeControl(skyjo.v1.TimeControl.newBuilder().setDecisionMs(2000).setBankMs(120000)
                        .setMaxStrikes(3).setGraceMs(10000))
                .build();
    }

    /** A draw-or-take decision for seat 0 of two, discard top 2, with both actions legal. */
    static skyjo.v1.DecisionRequest drawOrTake(long requestId, String gameId) {
        return skyjo.v1.DecisionRequest.newBuilder()
                .setRequestId(requestId)
                .setGameId(gameId)
                .setView(skyjo.v1.View.newBuilder()
                        .setSeat(0)
                        .setRound(0)
                        .setDecision(skyjo.v1.DecisionKind.DECISION_KIND_DRAW_OR_TAKE)
                        .addGrids(grid(5, null, null, null, null, 7, null, null, null, null, null, null))
                        .addGrids(grid(null, 1, null, null, null, null, null, 2, null, null, null, null))
                        .addAllDiscardPile(List.of(9, 2))
                        .setDrawPileSize(123)
                        .addAllTotals(List.of(0, 0))
                        .setStarter(0))
                .addLegalActions(action(Action.draw()))
                .addLegalActions(action(Action.take()))
                .setTimeLeftMs(2000)
                .build();
    }
}
