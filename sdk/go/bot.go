package skyjo

// Bot is a Skyjo player: Decide receives the seat's View (view.LegalActions lists what may be played) and
// returns one of those actions. An error (or a panic) becomes DecisionReply.error with its text: the referee
// strikes the seat at once, plays its default action and records the text; the bot plays on.
//
// A bot may also implement any of the hook interfaces below (GameStarter, EventHandler, RoundResultHandler,
// GameOverHandler, StrikeHandler); the client calls them in message order, on the same goroutine as Decide,
// so a bot needs no locks.
type Bot interface {
	Decide(view *View) (Action, error)
}

// GameStarter is told when a game begins: the seat, the players, the rules and the time control.
// A GameStart sent again after a reconnect is not news: it is delivered once per game.
type GameStarter interface {
	OnGameStart(start *GameStart)
}

// EventHandler receives every public event at the table, oldest first, before the decision that follows it.
type EventHandler interface {
	OnEvent(event Event)
}

// RoundResultHandler receives the scores at the end of each round.
type RoundResultHandler interface {
	OnRoundResult(result *RoundResult)
}

// GameOverHandler receives the result of each game.
type GameOverHandler interface {
	OnGameOver(result *GameResult)
}

// StrikeHandler is told when the referee struck this seat (the client also logs it).
type StrikeHandler interface {
	OnStrike(strike *Strike)
}

// BotFunc makes a Bot of a function.
type BotFunc func(view *View) (Action, error)

// Decide calls f.
func (f BotFunc) Decide(view *View) (Action, error) { return f(view) }
