// __BOT_NAME__: a Skyjo bot for the skyjo-ref referee, on the Go SDK (skyjo-sdk/, package skyjo).
//
// Build it with ./build, check it with `skyjo-ref check-bot league.yaml --bot __BOT_NAME__`, play it with
// `skyjo-ref tournament league.yaml`. The strategy is Decide below: replace it with your own.
package main

import "skyjo-ref/skyjo"

// bot keeps low cards. It may also implement the SDK's hooks (OnGameStart, OnEvent, OnRoundResult,
// OnGameOver, OnStrike) to keep its own memory between decisions.
type bot struct{}

// Decide returns one of view.LegalActions. Returning an error (or panicking) answers the referee with its
// text: the seat takes a strike and the referee plays a default action for it.
func (bot) Decide(view *skyjo.View) (skyjo.Action, error) {
	grid := view.MyGrid() // your 12 slots, pos = 4*row + col
	hidden := grid.HiddenPositions()

	// Opening: reveal any two of your hidden cards.
	if view.Decision == skyjo.OpeningReveal {
		return skyjo.Reveal(hidden[0]), nil
	}

	// Start of a turn: take the top discard when it is low, otherwise draw.
	if view.Decision == skyjo.DrawOrTake {
		if top, ok := view.DiscardTop(); ok && top <= 3 {
			return skyjo.Take(), nil
		}
		return skyjo.Draw(), nil
	}

	// You hold a card (view.Hand): put it where it saves the most points.
	card := *view.Hand
	revealed := grid.RevealedPositions()
	worst := -1 // the first revealed position of the highest value
	for _, pos := range revealed {
		if worst < 0 || grid[pos].Value > grid[worst].Value {
			worst = pos
		}
	}
	if worst >= 0 && grid[worst].Value > card {
		return skyjo.Swap(worst), nil // replace your highest revealed card
	}
	if len(hidden) > 0 && card <= 4 {
		return skyjo.Swap(hidden[0]), nil // a low card beats an unknown one (about 5 on average)
	}
	if len(hidden) > 0 && view.Decision == skyjo.SwapOrReveal {
		return skyjo.Reveal(hidden[0]), nil // discard the drawn card and turn a hidden one
	}
	// A card you took must be placed somewhere.
	if len(hidden) > 0 {
		return skyjo.Swap(hidden[0]), nil
	}
	return skyjo.Swap(revealed[0]), nil
}

func main() {
	skyjo.Main(bot{}, skyjo.WithName("__BOT_NAME__"), skyjo.WithVersion("0.1.0"))
}
