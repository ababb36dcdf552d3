package skyjo

import (
	"fmt"
	"time"

	pb "skyjo-ref/skyjo/skyjov1"
)

// ProtocolError is a referee message the SDK cannot read (it answers the decision with an error reply).
type ProtocolError struct{ Problem string }

func (e *ProtocolError) Error() string { return "protocol: " + e.Problem }

func protocolErrorf(format string, args ...any) error {
	return &ProtocolError{fmt.Sprintf(format, args...)}
}

// The protocol's enums by number (0 is UNSPECIFIED, never valid): slices, read once per slot and action.
var (
	actionKinds   = []ActionKind{"", ActionReveal, ActionDraw, ActionTake, ActionSwap}
	decisionKinds = []DecisionKind{"", OpeningReveal, DrawOrTake, SwapOrReveal, SwapAfterTake}
	slotStates    = []SlotState{"", Hidden, Revealed, Removed}
)

// enum is table[value], or "" when value is out of range (unknown or unspecified).
func enum[T ~string, E ~int32](table []T, value E) T {
	if value < 0 || int(value) >= len(table) {
		return ""
	}
	return table[value]
}

var (
	actionKindsPB = map[ActionKind]pb.ActionKind{
		ActionReveal: pb.ActionKind_ACTION_KIND_REVEAL, ActionDraw: pb.ActionKind_ACTION_KIND_DRAW,
		ActionTake: pb.ActionKind_ACTION_KIND_TAKE, ActionSwap: pb.ActionKind_ACTION_KIND_SWAP,
	}
	penalties = map[pb.FinisherPenalty]FinisherPenalty{
		pb.FinisherPenalty_FINISHER_PENALTY_DOUBLE_IF_POSITIVE: PenaltyDoubleIfPositive,
		pb.FinisherPenalty_FINISHER_PENALTY_DOUBLE:             PenaltyDouble,
		pb.FinisherPenalty_FINISHER_PENALTY_PLUS_10:            PenaltyPlus10,
	}
	starters = map[pb.NextRoundStarter]NextRoundStarter{
		pb.NextRoundStarter_NEXT_ROUND_STARTER_FINISHER:       StarterFinisher,
		pb.NextRoundStarter_NEXT_ROUND_STARTER_ROUND_WINNER:   StarterRoundWinner,
		pb.NextRoundStarter_NEXT_ROUND_STARTER_HIGHEST_REVEAL: StarterHighestReveal,
	}
	ties = map[pb.FinalTie]FinalTie{
		pb.FinalTie_FINAL_TIE_SHARED: TieShared, pb.FinalTie_FINAL_TIE_EXTRA_ROUND: TieExtraRound,
	}
)

// presets are the named rule sets (docs/rules.md); a GameStart sets every option, these fill what it leaves unset.
var presets = map[string]func(*Rules){
	"official":   func(*Rules) {},
	"indonesian": func(r *Rules) { r.FinisherPenalty, r.NextRoundStarter = PenaltyDouble, StarterRoundWinner },
	"turkish":    func(r *Rules) { r.FinisherPenalty, r.NextRoundStarter = PenaltyDouble, StarterRoundWinner },
	"french":     func(r *Rules) { r.FinisherPenalty, r.NextRoundStarter = PenaltyPlus10, StarterHighestReveal },
	"slovenian": func(r *Rules) {
		r.FinisherPenalty, r.NextRoundStarter, r.FinalTie = PenaltyDouble, StarterHighestReveal, TieExtraRound
	},
}

func intPtr[T ~int32 | ~uint32](p *T) *int {
	if p == nil {
		return nil
	}
	v := int(*p)
	return &v
}

func ints[T ~int32 | ~uint32](values []T) []int {
	out := make([]int, len(values))
	for i, v := range values {
		out[i] = int(v)
	}
	return out
}

func actionFromProto(msg *pb.Action) (Action, error) {
	kind := enum(actionKinds, msg.GetKind())
	if kind == "" {
		return Action{}, protocolErrorf("action kind %d is not an action: expected reveal, draw, take or swap", msg.GetKind())
	}
	action := Action{Kind: kind}
	if action.HasPos() {
		if msg.Pos == nil {
			return Action{}, protocolErrorf("%s without a position", kind)
		}
		action.Pos = int(*msg.Pos)
	}
	return action, action.Valid()
}

func actionToProto(a Action) *pb.Action {
	msg := &pb.Action{Kind: actionKindsPB[a.Kind]}
	if a.HasPos() {
		pos := uint32(a.Pos)
		msg.Pos = &pos
	}
	return msg
}

func rulesFromProto(msg *pb.Rules) (Rules, error) {
	rules := OfficialRules()
	rules.Preset = msg.GetPreset()
	if rules.Preset != "" {
		apply, ok := presets[rules.Preset]
		if !ok {
			return rules, protocolErrorf("unknown rules preset %q", rules.Preset)
		}
		apply(&rules)
	}
	if msg.ColumnClear != nil {
		rules.ColumnClear = *msg.ColumnClear
	}
	if msg.ClearOnFinalReveal != nil {
		rules.ClearOnFinalReveal = *msg.ClearOnFinalReveal
	}
	if p, ok := penalties[msg.GetFinisherPenalty()]; ok {
		rules.FinisherPenalty = p
	}
	if s, ok := starters[msg.GetNextRoundStarter()]; ok {
		rules.NextRoundStarter = s
	}
	if t, ok := ties[msg.GetFinalTie()]; ok {
		rules.FinalTie = t
	}
	if msg.GetEndScore() > 0 {
		rules.EndScore = int(msg.GetEndScore())
	}
	return rules, nil
}

// GameStartFromProto reads a GameStart message.
func GameStartFromProto(msg *pb.GameStart) (*GameStart, error) {
	if len(msg.GetPlayers()) == 0 {
		return nil, protocolErrorf("game start lists no players")
	}
	if int(msg.GetSeat()) >= len(msg.GetPlayers()) {
		return nil, protocolErrorf("game start gives seat %d in a game of %d players", msg.GetSeat(), len(msg.GetPlayers()))
	}
	rules, err := rulesFromProto(msg.GetRules())
	if err != nil {
		return nil, err
	}
	tc := msg.GetTimeControl()
	return &GameStart{
		GameID:  msg.GetGameId(),
		Seat:    int(msg.GetSeat()),
		Players: append([]string(nil), msg.GetPlayers()...),
		Rules:   rules,
		TimeControl: TimeControl{
			int(tc.GetDecisionMs()), int(tc.GetBankMs()), int(tc.GetMaxStrikes()), int(tc.GetGraceMs()),
		},
	}, nil
}

func gridFromProto(msg *pb.Grid, index int) (Grid, error) {
	var grid Grid
	if len(msg.GetSlots()) != GridSize {
		return grid, protocolErrorf("grid %d has %d slots, expected %d", index, len(msg.GetSlots()), GridSize)
	}
	for pos, slot := range msg.GetSlots() {
		state := enum(slotStates, slot.GetState())
		if state == "" {
			return grid, protocolErrorf("grid %d slot %d has state %d: expected hidden, revealed or removed", index, pos, slot.GetState())
		}
		if (state == Revealed) != (slot.Value != nil) {
			has := map[bool]string{true: "has", false: "lacks"}[slot.Value != nil]
			return grid, protocolErrorf("grid %d slot %d is %s and %s a value: only revealed slots carry one", index, pos, state, has)
		}
		grid[pos] = Slot{State: state, Value: int(slot.GetValue())}
	}
	return grid, nil
}

// ViewFromProto reads the View a DecisionRequest asks about, in the game start began (players, rules, time).
func ViewFromProto(msg *pb.DecisionRequest, start *GameStart) (*View, error) {
	pv := msg.GetView()
	decision := enum(decisionKinds, pv.GetDecision())
	if decision == "" {
		return nil, protocolErrorf("view.decision is %d: expected one of the four DecisionKind values", pv.GetDecision())
	}
	n := len(pv.GetGrids())
	if n != len(start.Players) {
		return nil, protocolErrorf("view has %d grids for %d players", n, len(start.Players))
	}
	if int(pv.GetSeat()) >= n || len(pv.GetTotals()) != n {
		return nil, protocolErrorf("view has seat %d and %d totals in a game of %d players", pv.GetSeat(), len(pv.GetTotals()), n)
	}
	if len(msg.GetLegalActions()) == 0 {
		return nil, protocolErrorf("decision request %d lists no legal actions", msg.GetRequestId())
	}
	view := &View{
		GameID: msg.GetGameId(), RequestID: msg.GetRequestId(), Seat: int(pv.GetSeat()),
		Players: start.Players, Rules: start.Rules, TimeControl: start.TimeControl,
		Round: int(pv.GetRound()), Decision: decision, Grids: make([]Grid, n),
		DiscardPile: ints(pv.GetDiscardPile()), DrawPileSize: int(pv.GetDrawPileSize()),
		Hand: intPtr(pv.Hand), Totals: ints(pv.GetTotals()), RoundScores: make([][]int, len(pv.GetRoundScores())),
		Finisher: intPtr(pv.Finisher), Starter: intPtr(pv.Starter),
		LegalActions: make([]Action, len(msg.GetLegalActions())),
		TimeLeft:     time.Duration(msg.GetTimeLeftMs()) * time.Millisecond,
	}
	for i, g := range pv.GetGrids() {
		grid, err := gridFromProto(g, i)
		if err != nil {
			return nil, err
		}
		view.Grids[i] = grid
	}
	for i, s := range pv.GetRoundScores() {
		view.RoundScores[i] = ints(s.GetValues())
	}
	for i, a := range msg.GetLegalActions() {
		action, err := actionFromProto(a)
		if err != nil {
			return nil, err
		}
		view.LegalActions[i] = action
	}
	return view, nil
}

func eventFromProto(msg *pb.Event) Event {
	return Event{
		GameID: msg.GetGameId(), Kind: EventKind(msg.GetKind()), Seat: intPtr(msg.Seat), Pos: intPtr(msg.Pos),
		Value: intPtr(msg.Value), Replaced: intPtr(msg.Replaced), Round: intPtr(msg.Round),
	}
}

func roundResultFromProto(msg *pb.RoundResult) *RoundResult {
	return &RoundResult{
		GameID: msg.GetGameId(), Round: int(msg.GetRound()), Finisher: int(msg.GetFinisher()),
		Raw: ints(msg.GetRaw()), Scores: ints(msg.GetScores()), Totals: ints(msg.GetTotals()),
	}
}

func gameOverFromProto(msg *pb.GameOver) *GameResult {
	return &GameResult{
		GameID: msg.GetGameId(), Totals: ints(msg.GetTotals()), Ranks: ints(msg.GetRanks()),
		Winners: ints(msg.GetWinners()), Forfeits: ints(msg.GetForfeits()),
	}
}

func strikeFromProto(msg *pb.Strike) *Strike {
	strike := &Strike{
		GameID: msg.GetGameId(), RequestID: msg.GetRequestId(), Reason: msg.GetReason(), Detail: msg.GetDetail(),
		Strikes: int(msg.GetStrikes()), MaxStrikes: int(msg.GetMaxStrikes()),
	}
	if msg.Played != nil {
		if played, err := actionFromProto(msg.Played); err == nil {
			strike.Played = &played
		}
	}
	return strike
}

// replyFor answers request rid with action: by its index when it is legal, else spelled out (the referee
// then strikes it as illegal and says why).
func replyFor(rid uint64, action Action, legal []Action) *pb.DecisionReply {
	for i, a := range legal {
		if a == action {
			return &pb.DecisionReply{RequestId: rid, Choice: &pb.DecisionReply_Index{Index: uint32(i)}}
		}
	}
	return &pb.DecisionReply{RequestId: rid, Choice: &pb.DecisionReply_Action{Action: actionToProto(action)}}
}

// errorReply gives up on decision rid and says why (the referee strikes at once and plays its default).
func errorReply(rid uint64, reason string) *pb.DecisionReply {
	if len(reason) > 500 {
		reason = reason[:500]
	}
	return &pb.DecisionReply{RequestId: rid, Choice: &pb.DecisionReply_Error{Error: reason}}
}
