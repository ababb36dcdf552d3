package skyjo

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Grid geometry: positions are row-major, pos = 4*row + col (rows 0-2, columns 0-3);
// column c is positions c, c+4, c+8.
const (
	Rows     = 3
	Columns  = 4
	GridSize = Rows * Columns
)

// DeckCounts is how many cards of each value the 150-card deck holds.
var DeckCounts = map[int]int{-2: 5, -1: 10, 0: 15, 1: 10, 2: 10, 3: 10, 4: 10, 5: 10, 6: 10, 7: 10, 8: 10, 9: 10, 10: 10, 11: 10, 12: 10}

// ColumnPositions returns the three grid positions of column (0-3), top to bottom.
func ColumnPositions(column int) [3]int {
	return [3]int{column, column + Columns, column + 2*Columns}
}

// ------------------------------------------------------------------ actions

// ActionKind is the action vocabulary of the game record format skyjo-game/1.
type ActionKind string

const (
	ActionReveal ActionKind = "reveal"
	ActionDraw   ActionKind = "draw"
	ActionTake   ActionKind = "take"
	ActionSwap   ActionKind = "swap"
)

// Action is one action. Pos is the grid position (0-11) of a reveal or a swap and 0 for draw and take,
// so actions compare with ==: Swap(3) == Swap(3).
type Action struct {
	Kind ActionKind
	Pos  int
}

// Reveal turns the hidden card at pos (an opening reveal, or after discarding a drawn card).
func Reveal(pos int) Action { return Action{ActionReveal, pos} }

// Swap places the card in hand at pos; the card that was there goes to the discard pile.
func Swap(pos int) Action { return Action{ActionSwap, pos} }

// Draw takes the top card of the draw pile into the hand.
func Draw() Action { return Action{Kind: ActionDraw} }

// Take takes the top card of the discard pile into the hand.
func Take() Action { return Action{Kind: ActionTake} }

// HasPos reports whether the action's kind takes a position (reveal and swap).
func (a Action) HasPos() bool { return a.Kind == ActionReveal || a.Kind == ActionSwap }

// String is the action's text form, which ParseAction reads: "draw", "take", "reveal 5", "swap 11".
func (a Action) String() string {
	if a.HasPos() {
		return string(a.Kind) + " " + strconv.Itoa(a.Pos)
	}
	return string(a.Kind)
}

// Valid returns nil if a spells an action: a known kind, and a position 0-11 for reveal and swap.
func (a Action) Valid() error {
	switch a.Kind {
	case ActionReveal, ActionSwap:
		if a.Pos < 0 || a.Pos >= GridSize {
			return fmt.Errorf("%s needs a position 0-11 (pos = 4*row + col), got %d", a.Kind, a.Pos)
		}
	case ActionDraw, ActionTake:
		if a.Pos != 0 {
			return fmt.Errorf("%s takes no position, got %d", a.Kind, a.Pos)
		}
	default:
		return fmt.Errorf("unknown action %q: expected one of reveal, draw, take, swap", string(a.Kind))
	}
	return nil
}

// ParseAction reads "draw", "take", "reveal 5" or "swap 11".
func ParseAction(text string) (Action, error) {
	words := strings.Fields(text)
	if len(words) == 0 || len(words) > 2 {
		return Action{}, fmt.Errorf("cannot read action %q: expected 'draw', 'take', 'reveal POS' or 'swap POS'", text)
	}
	action := Action{Kind: ActionKind(strings.ToLower(words[0]))}
	if len(words) == 2 {
		pos, err := strconv.Atoi(words[1])
		if err != nil {
			return Action{}, fmt.Errorf("cannot read action %q: position %q is not a number 0-11", text, words[1])
		}
		action.Pos = pos
	} else if action.HasPos() {
		return Action{}, fmt.Errorf("cannot read action %q: %s needs a position 0-11", text, action.Kind)
	}
	if err := action.Valid(); err != nil {
		return Action{}, err
	}
	return action, nil
}

// ------------------------------------------------------------------ rules

// FinisherPenalty says what happens to a finisher who does not have the lowest round score.
type FinisherPenalty string

const (
	PenaltyDoubleIfPositive FinisherPenalty = "double_if_positive"
	PenaltyDouble           FinisherPenalty = "double"
	PenaltyPlus10           FinisherPenalty = "plus_10"
)

// NextRoundStarter says who starts the turns of the next round.
type NextRoundStarter string

const (
	StarterFinisher      NextRoundStarter = "finisher"
	StarterRoundWinner   NextRoundStarter = "round_winner"
	StarterHighestReveal NextRoundStarter = "highest_reveal"
)

// FinalTie says what a tie for the win at the end of the game does.
type FinalTie string

const (
	TieShared     FinalTie = "shared"
	TieExtraRound FinalTie = "extra_round"
)

// Rules are the options in force in a game (docs/rules.md), as GameStart reports them.
type Rules struct {
	Preset             string // "official", "french", ...; "" when options were changed beside a preset
	ColumnClear        bool
	ClearOnFinalReveal bool
	FinisherPenalty    FinisherPenalty
	NextRoundStarter   NextRoundStarter
	EndScore           int
	FinalTie           FinalTie
}

// OfficialRules are the publisher's rules.
func OfficialRules() Rules {
	return Rules{"official", true, true, PenaltyDoubleIfPositive, StarterFinisher, 100, TieShared}
}

// TimeControl is how long a seat may think and how many faults it may make in one game (0: no limit, never
// forfeit on strikes, no grace).
type TimeControl struct {
	DecisionMS, BankMS, MaxStrikes, GraceMS int
}

// ------------------------------------------------------------------ view

// DecisionKind says which of the four decisions is due.
type DecisionKind string

const (
	OpeningReveal DecisionKind = "opening_reveal"  // reveal one of two opening cards
	DrawOrTake    DecisionKind = "draw_or_take"    // the start of a turn
	SwapOrReveal  DecisionKind = "swap_or_reveal"  // after drawing: swap the card, or discard it and reveal
	SwapAfterTake DecisionKind = "swap_after_take" // after taking the discard: place it
)

// SlotState is what a grid slot shows.
type SlotState string

const (
	Hidden   SlotState = "hidden"
	Revealed SlotState = "revealed"
	Removed  SlotState = "removed"
)

// Slot is one grid slot; Value is the card of a revealed slot (0 otherwise: check State).
type Slot struct {
	State SlotState
	Value int
}

// Grid is one player's 12 slots as everyone sees them.
type Grid [GridSize]Slot

// Value is the card at pos and true when it is revealed; 0 and false when hidden or removed.
func (g *Grid) Value(pos int) (int, bool) {
	if g[pos].State != Revealed {
		return 0, false
	}
	return g[pos].Value, true
}

func (g *Grid) positions(state SlotState) []int {
	out := make([]int, 0, GridSize)
	for pos := range g {
		if g[pos].State == state {
			out = append(out, pos)
		}
	}
	return out
}

// HiddenPositions are the hidden slots' positions, ascending.
func (g *Grid) HiddenPositions() []int { return g.positions(Hidden) }

// RevealedPositions are the revealed slots' positions, ascending.
func (g *Grid) RevealedPositions() []int { return g.positions(Revealed) }

// OpenPositions are the positions that are not removed (hidden or revealed), ascending.
func (g *Grid) OpenPositions() []int {
	out := make([]int, 0, GridSize)
	for pos := range g {
		if g[pos].State != Removed {
			out = append(out, pos)
		}
	}
	return out
}

// RevealedSum is the sum of the revealed cards.
func (g *Grid) RevealedSum() int {
	sum := 0
	for pos := range g {
		if g[pos].State == Revealed {
			sum += g[pos].Value
		}
	}
	return sum
}

// String draws the grid in three lines, "?" for hidden and "." for removed slots.
func (g *Grid) String() string {
	var b strings.Builder
	for row := 0; row < Rows; row++ {
		for col := 0; col < Columns; col++ {
			cell := "?"
			switch slot := g[Columns*row+col]; slot.State {
			case Revealed:
				cell = strconv.Itoa(slot.Value)
			case Removed:
				cell = "."
			}
			if col > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%3s", cell)
		}
		if row < Rows-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// View is everything one seat may know when a decision is due: the bot's whole world. It never holds a
// hidden card's value nor the order of the draw pile.
type View struct {
	GameID       string
	RequestID    uint64
	Seat         int
	Players      []string // names in seat order, from GameStart
	Rules        Rules
	TimeControl  TimeControl
	Round        int // 0-based
	Decision     DecisionKind
	Grids        []Grid // one per seat
	DiscardPile  []int  // bottom first; the top card is the last
	DrawPileSize int
	Hand         *int    // the card drawn or taken, in the two swap decisions; nil otherwise
	Totals       []int   // game totals before this round, one per seat
	RoundScores  [][]int // scores of the finished rounds, one slice per round
	Finisher     *int    // the seat that ended the round, once one has: everyone else has one last turn
	Starter      *int    // who starts this round's turns; nil during the opening reveals
	LegalActions []Action
	TimeLeft     time.Duration // for this answer: the smaller of the per-decision limit and the bank
}

// NumPlayers is the number of seats.
func (v *View) NumPlayers() int { return len(v.Grids) }

// MyGrid is this seat's grid.
func (v *View) MyGrid() *Grid { return &v.Grids[v.Seat] }

// DiscardTop is the top card of the discard pile, and false when the pile is empty.
func (v *View) DiscardTop() (int, bool) {
	if len(v.DiscardPile) == 0 {
		return 0, false
	}
	return v.DiscardPile[len(v.DiscardPile)-1], true
}

// IsLegal reports whether action is one of the legal actions.
func (v *View) IsLegal(action Action) bool {
	for _, a := range v.LegalActions {
		if a == action {
			return true
		}
	}
	return false
}

// UnseenCards is the multiset of cards this seat cannot see (hidden slots plus the draw pile): the deck minus
// every visible card (grids, discard pile, hand).
func (v *View) UnseenCards() map[int]int {
	unseen := make(map[int]int, len(DeckCounts))
	for value, count := range DeckCounts {
		unseen[value] = count
	}
	for _, card := range v.DiscardPile {
		unseen[card]--
	}
	for i := range v.Grids {
		for _, slot := range v.Grids[i] {
			if slot.State == Revealed {
				unseen[slot.Value]--
			}
		}
	}
	if v.Hand != nil {
		unseen[*v.Hand]--
	}
	return unseen
}

// ExpectedHiddenValue is the average of the unseen cards: the expected value of any hidden card.
func (v *View) ExpectedHiddenValue() float64 {
	sum, count := 0, 0
	for value, n := range v.UnseenCards() {
		sum += value * n
		count += n
	}
	if count == 0 {
		return 0
	}
	return float64(sum) / float64(count)
}

// ------------------------------------------------------------------ events and game messages

// EventKind names a public event (docs/writing-a-bot.md, Events); accept kinds you do not know.
type EventKind string

const (
	EventRoundStart     EventKind = "round_start"     // Round
	EventReveal         EventKind = "reveal"          // Seat, Pos, Value
	EventDraw           EventKind = "draw"            // Seat
	EventTake           EventKind = "take"            // Seat, Value
	EventDiscard        EventKind = "discard"         // Seat, Value
	EventSwap           EventKind = "swap"            // Seat, Pos, Value (placed), Replaced
	EventColumnCleared  EventKind = "column_cleared"  // Seat, Pos (the column 0-3), Value
	EventReshuffle      EventKind = "reshuffle"       // Value: the new draw pile's size
	EventTurnsStart     EventKind = "turns_start"     // Seat
	EventRoundFinishing EventKind = "round_finishing" // Seat
	EventFinalReveal    EventKind = "final_reveal"    // Seat, Pos, Value
)

// Event is one public event; only the fields its kind uses are set (nil otherwise).
type Event struct {
	GameID   string
	Kind     EventKind
	Seat     *int
	Pos      *int
	Value    *int
	Replaced *int
	Round    *int
}

// GameStart is sent to every seat when a game begins.
type GameStart struct {
	GameID      string
	Seat        int
	Players     []string
	Rules       Rules
	TimeControl TimeControl
}

// RoundResult ends a round: scores before (Raw) and after (Scores) the finisher penalty, and the game totals.
type RoundResult struct {
	GameID   string
	Round    int
	Finisher int
	Raw      []int
	Scores   []int
	Totals   []int
}

// GameResult ends a game: totals (lower is better), competition ranks (1 = best), winners and forfeits.
type GameResult struct {
	GameID   string
	Totals   []int
	Ranks    []int
	Winners  []int
	Forfeits []int
}

// Strike says the referee played for this seat because its answer (or silence) was at fault.
type Strike struct {
	GameID     string
	RequestID  uint64
	Reason     string  // "timeout", "illegal" or "malformed"
	Detail     string  // what was wrong and what was expected
	Played     *Action // what the referee played instead, if anything
	Strikes    int     // this seat's strikes in this game, this one included
	MaxStrikes int
}
