package skyjo.bot;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/** Between the generated protocol messages ({@code skyjo.v1}) and the SDK's value types; checks what it reads. */
final class Convert {
    static final int PROTOCOL_VERSION = 1;

    private Convert() {}

    static skyjo.v1.PlayRequest hello(String name, String version) {
        return skyjo.v1.PlayRequest.newBuilder()
                .setHello(skyjo.v1.Hello.newBuilder()
                        .setName(name)
                        .setVersion(version)
                        .setProtocolVersion(PROTOCOL_VERSION))
                .build();
    }

    static Action action(skyjo.v1.Action msg) {
        ActionKind kind = switch (msg.getKind()) {
            case ACTION_KIND_REVEAL -> ActionKind.REVEAL;
            case ACTION_KIND_DRAW -> ActionKind.DRAW;
            case ACTION_KIND_TAKE -> ActionKind.TAKE;
            case ACTION_KIND_SWAP -> ActionKind.SWAP;
            default -> throw new ProtocolException("action kind " + msg.getKindValue()
                    + ": expected reveal, draw, take or swap");
        };
        if (kind.takesPosition() != msg.hasPos()) {
            throw new ProtocolException("action " + kind + (msg.hasPos() ? " has a position" : " lacks a position"));
        }
        try {
            return new Action(kind, msg.hasPos() ? msg.getPos() : Action.NO_POSITION);
        } catch (InvalidActionException e) {
            throw new ProtocolException(e.getMessage());
        }
    }

    static skyjo.v1.Action action(Action action) {
        skyjo.v1.Action.Builder out = skyjo.v1.Action.newBuilder().setKind(switch (action.kind()) {
            case REVEAL -> skyjo.v1.ActionKind.ACTION_KIND_REVEAL;
            case DRAW -> skyjo.v1.ActionKind.ACTION_KIND_DRAW;
            case TAKE -> skyjo.v1.ActionKind.ACTION_KIND_TAKE;
            case SWAP -> skyjo.v1.ActionKind.ACTION_KIND_SWAP;
        });
        if (action.hasPosition()) {
            out.setPos(action.pos());
        }
        return out.build();
    }

    /** A reply by index when {@code action} is legal (the simplest for the referee), else spelled out. */
    static skyjo.v1.DecisionReply reply(long requestId, Action action, List<Action> legalActions) {
        skyjo.v1.DecisionReply.Builder out = skyjo.v1.DecisionReply.newBuilder().setRequestId(requestId);
        int index = legalActions.indexOf(action);
        return (index >= 0 ? out.setIndex(index) : out.setAction(action(action))).build();
    }

    static skyjo.v1.DecisionReply errorReply(long requestId, String reason) {
        return skyjo.v1.DecisionReply.newBuilder().setRequestId(requestId).setError(reason).build();
    }

    static Rules rules(skyjo.v1.Rules msg) {
        Rules base;
        try {
            base = Rules.preset(msg.getPreset());
        } catch (IllegalArgumentException e) {
            throw new ProtocolException(e.getMessage());
        }
        FinisherPenalty penalty = switch (msg.getFinisherPenalty()) {
            case FINISHER_PENALTY_UNSPECIFIED -> base.finisherPenalty();
            case FINISHER_PENALTY_DOUBLE_IF_POSITIVE -> FinisherPenalty.DOUBLE_IF_POSITIVE;
            case FINISHER_PENALTY_DOUBLE -> FinisherPenalty.DOUBLE;
            case FINISHER_PENALTY_PLUS_10 -> FinisherPenalty.PLUS_10;
            default -> throw new ProtocolException("rules option finisher_penalty has unknown enum value "
                    + msg.getFinisherPenaltyValue());
        };
        NextRoundStarter starter = switch (msg.getNextRoundStarter()) {
            case NEXT_ROUND_STARTER_UNSPECIFIED -> base.nextRoundStarter();
            case NEXT_ROUND_STARTER_FINISHER -> NextRoundStarter.FINISHER;
            case NEXT_ROUND_STARTER_ROUND_WINNER -> NextRoundStarter.ROUND_WINNER;
            case NEXT_ROUND_STARTER_HIGHEST_REVEAL -> NextRoundStarter.HIGHEST_REVEAL;
            default -> throw new ProtocolException("rules option next_round_starter has unknown enum value "
                    + msg.getNextRoundStarterValue());
        };
        FinalTie tie = switch (msg.getFinalTie()) {
            case FINAL_TIE_UNSPECIFIED -> base.finalTie();
            case FINAL_TIE_SHARED -> FinalTie.SHARED;
            case FINAL_TIE_EXTRA_ROUND -> FinalTie.EXTRA_ROUND;
            default -> throw new ProtocolException("rules option final_tie has unknown enum value "
                    + msg.getFinalTieValue());
        };
        return new Rules(
                base.preset(),
                msg.hasColumnClear() ? msg.getColumnClear() : base.columnClear(),
                msg.hasClearOnFinalReveal() ? msg.getClearOnFinalReveal() : base.clearOnFinalReveal(),
                penalty,
                starter,
                msg.getEndScore() != 0 ? msg.getEndScore() : base.endScore(),
                tie);
    }

    static GameStart gameStart(skyjo.v1.GameStart msg) {
        if (msg.getPlayersCount() == 0) {
            throw new ProtocolException("game start lists no players");
        }
        if (msg.getSeat() >= msg.getPlayersCount()) {
            throw new ProtocolException("game start gives seat " + msg.getSeat() + " in a game of "
                    + msg.getPlayersCount() + " players");
        }
        Optional<TimeControl> timeControl = Optional.empty();
        if (msg.hasTimeControl()) {
            skyjo.v1.TimeControl tc = msg.getTimeControl();
            timeControl = Optional.of(new TimeControl(Integer.toUnsignedLong(tc.getDecisionMs()),
                    Integer.toUnsignedLong(tc.getBankMs()), tc.getMaxStrikes(), Integer.toUnsignedLong(tc.getGraceMs())));
        }
        return new GameStart(msg.getGameId(), msg.getSeat(), msg.getPlayersList(), rules(msg.getRules()), timeControl);
    }

    /** The view (with its legal actions) a request asks about, in the game {@code start} began. */
    static View view(skyjo.v1.DecisionRequest request, GameStart start) {
        if (request.getLegalActionsCount() == 0) {
            throw new ProtocolException("decision request " + Long.toUnsignedString(request.getRequestId())
                    + " lists no legal actions");
        }
        List<Action> legal = new ArrayList<>(request.getLegalActionsCount());
        for (skyjo.v1.Action action : request.getLegalActionsList()) {
            legal.add(action(action));
        }
        skyjo.v1.View msg = request.getView();
        DecisionKind decision = switch (msg.getDecision()) {
            case DECISION_KIND_OPENING_REVEAL -> DecisionKind.OPENING_REVEAL;
            case DECISION_KIND_DRAW_OR_TAKE -> DecisionKind.DRAW_OR_TAKE;
            case DECISION_KIND_SWAP_OR_REVEAL -> DecisionKind.SWAP_OR_REVEAL;
            case DECISION_KIND_SWAP_AFTER_TAKE -> DecisionKind.SWAP_AFTER_TAKE;
            default -> throw new ProtocolException("view.decision is " + msg.getDecisionValue()
                    + ": expected one of the four DecisionKind values");
        };
        int n = msg.getGridsCount();
        if (n != start.players().size()) {
            throw new ProtocolException("view has " + n + " grids for " + start.players().size() + " players");
        }
        if (msg.getSeat() >= n) {
            throw new ProtocolException("view.seat " + msg.getSeat() + " is not a seat of this " + n + "-player game");
        }
        if (msg.getTotalsCount() != n) {
            throw new ProtocolException("view has " + msg.getTotalsCount() + " totals for " + n + " players");
        }
        List<Grid> grids = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            grids.add(grid(msg.getGrids(i), i));
        }
        List<List<Integer>> roundScores = new ArrayList<>(msg.getRoundScoresCount());
        for (skyjo.v1.Scores scores : msg.getRoundScoresList()) {
            roundScores.add(scores.getValuesList());
        }
        return new View(
                request.getGameId(),
                msg.getSeat(),
                start.players(),
                start.rules(),
                msg.getRound(),
                decision,
                grids,
                msg.getDiscardPileList(),
                msg.getDrawPileSize(),
                msg.hasHand() ? OptionalInt.of(msg.getHand()) : OptionalInt.empty(),
                msg.getTotalsList(),
                roundScores,
                msg.hasFinisher() ? OptionalInt.of(msg.getFinisher()) : OptionalInt.empty(),
                msg.hasStarter() ? OptionalInt.of(msg.getStarter()) : OptionalInt.empty(),
                legal,
                Integer.toUnsignedLong(request.getTimeLeftMs()));
    }

    private static Grid grid(skyjo.v1.Grid msg, int index) {
        if (msg.getSlotsCount() != Grid.SIZE) {
            throw new ProtocolException("grid " + index + " has " + msg.getSlotsCount() + " slots, expected 12");
        }
        List<SlotState> states = new ArrayList<>(Grid.SIZE);
        List<OptionalInt> values = new ArrayList<>(Grid.SIZE);
        for (int pos = 0; pos < Grid.SIZE; pos++) {
            skyjo.v1.Slot slot = msg.getSlots(pos);
            SlotState state = switch (slot.getState()) {
                case SLOT_STATE_HIDDEN -> SlotState.HIDDEN;
                case SLOT_STATE_REVEALED -> SlotState.REVEALED;
                case SLOT_STATE_REMOVED -> SlotState.REMOVED;
                default -> throw new ProtocolException("grid " + index + " slot " + pos + " has state "
                        + slot.getStateValue() + ": expected hidden, revealed or removed");
            };
            if ((state == SlotState.REVEALED) != slot.hasValue()) {
                throw new ProtocolException("grid " + index + " slot " + pos + " is " + state.text() + " and "
                        + (slot.hasValue() ? "has" : "lacks") + " a value: only revealed slots carry one");
            }
            states.add(state);
            values.add(slot.hasValue() ? OptionalInt.of(slot.getValue()) : OptionalInt.empty());
        }
        return new Grid(states, values);
    }

    /** The events this SDK knows, in order; kinds of a later protocol are skipped. */
    static List<Event> events(List<skyjo.v1.Event> messages) {
        List<Event> out = new ArrayList<>(messages.size());
        for (skyjo.v1.Event msg : messages) {
            Optional<EventKind> kind = EventKind.fromText(msg.getKind());
            if (kind.isPresent()) {
                out.add(new Event(msg.getGameId(), kind.get(),
                        msg.hasSeat() ? OptionalInt.of(msg.getSeat()) : OptionalInt.empty(),
                        msg.hasPos() ? OptionalInt.of(msg.getPos()) : OptionalInt.empty(),
                        msg.hasValue() ? OptionalInt.of(msg.getValue()) : OptionalInt.empty(),
                        msg.hasReplaced() ? OptionalInt.of(msg.getReplaced()) : OptionalInt.empty(),
                        msg.hasRound() ? OptionalInt.of(msg.getRound()) : OptionalInt.empty()));
            }
        }
        return out;
    }

    static RoundResult roundResult(skyjo.v1.RoundResult msg) {
        return new RoundResult(msg.getGameId(), msg.getRound(), msg.getFinisher(), msg.getRawList(),
                msg.getScoresList(), msg.getTotalsList());
    }

    static GameResult gameResult(skyjo.v1.GameOver msg) {
        return new GameResult(msg.getGameId(), msg.getTotalsList(), msg.getRanksList(), msg.getWinnersList(),
                msg.getForfeitsList());
    }

    static Strike strike(skyjo.v1.Strike msg) {
        Optional<Action> played = Optional.empty();
        if (msg.hasPlayed()) {
            try {
                played = Optional.of(action(msg.getPlayed()));
            } catch (ProtocolException e) {
                played = Optional.empty();
            }
        }
        return new Strike(msg.getGameId(), msg.getRequestId(), msg.getReason(), msg.getDetail(), played,
                msg.getStrikes(), msg.getMaxStrikes());
    }
}
