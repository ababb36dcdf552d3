package skyjo_test

import "skyjo-ref/skyjo"

// reference is the reference strategy (examples/python/minimal_bot.py's decide, as template/main.go plays it):
// the SDK's tests play it on the conformance vectors.
func reference(view *skyjo.View) (skyjo.Action, error) {
	grid := view.MyGrid()
	hidden := grid.HiddenPositions()
	switch view.Decision {
	case skyjo.OpeningReveal:
		return skyjo.Reveal(hidden[0]), nil
	case skyjo.DrawOrTake:
		if top, ok := view.DiscardTop(); ok && top <= 3 {
			return skyjo.Take(), nil
		}
		return skyjo.Draw(), nil
	}
	card := *view.Hand
	revealed := grid.RevealedPositions()
	worst := -1
	for _, pos := range revealed {
		if worst < 0 || grid[pos].Value > grid[worst].Value {
			worst = pos
		}
	}
	switch {
	case worst >= 0 && grid[worst].Value > card:
		return skyjo.Swap(worst), nil
	case len(hidden) > 0 && card <= 4:
		return skyjo.Swap(hidden[0]), nil
	case len(hidden) > 0 && view.Decision == skyjo.SwapOrReveal:
		return skyjo.Reveal(hidden[0]), nil
	case len(hidden) > 0:
		return skyjo.Swap(hidden[0]), nil
	}
	return skyjo.Swap(revealed[0]), nil
}
