package skyjo

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	pb "skyjo-ref/skyjo/skyjov1"
)

// rememberedAnswers is how many replies the client keeps for requests sent again after a reconnect.
const rememberedAnswers = 8

// answer is the reply to req: the one computed before when the referee sends the same decision again (after a
// reconnect), else the bot's decision. The same decision is the same id, game, number of legal actions and
// view; not the time left nor the events that came with it (they differ when it is sent again), and not the
// id alone (a restarted referee counts ids from 1 again). Views are compared only when the rest matches.
func (c *Client) answer(req *pb.DecisionRequest) *pb.DecisionReply {
	for _, a := range c.answers {
		if a.requestID == req.GetRequestId() && a.gameID == req.GetGameId() && a.legal == len(req.GetLegalActions()) &&
			proto.Equal(a.view, req.GetView()) {
			c.log.Info("decision sent again after a reconnect: answering it as before", "request", req.GetRequestId())
			return a.reply
		}
	}
	reply := c.decide(req)
	if len(c.answers) == rememberedAnswers {
		c.answers = c.answers[1:]
	}
	c.answers = append(c.answers, answer{req.GetRequestId(), req.GetGameId(), len(req.GetLegalActions()), req.GetView(), reply})
	return reply
}

func (c *Client) decide(req *pb.DecisionRequest) *pb.DecisionReply {
	rid := req.GetRequestId()
	start, ok := c.games[req.GetGameId()]
	if !ok {
		c.log.Warn("decision for a game that never started here; guessing players and rules", "request", rid, "game", req.GetGameId())
		n := len(req.GetView().GetGrids())
		start = &GameStart{GameID: req.GetGameId(), Seat: int(req.GetView().GetSeat()), Players: make([]string, n), Rules: OfficialRules()}
		for i := range start.Players {
			start.Players[i] = fmt.Sprintf("seat %d", i)
		}
	}
	view, err := ViewFromProto(req, start)
	if err != nil {
		c.log.Error("unreadable decision request", "request", rid, "err", err)
		return errorReply(rid, "the bot could not read the request: "+err.Error())
	}
	c.stats.Decisions++
	action, err := c.callDecide(view)
	if err != nil {
		c.stats.DecideErrors++
		c.log.Error("Decide failed: replying with the error", "request", rid, "err", err, "view", describe(view))
		return errorReply(rid, err.Error())
	}
	if !view.IsLegal(action) {
		c.log.Warn("Decide chose an action that is not legal", "request", rid, "action", action.String(), "view", describe(view))
	}
	return replyFor(rid, action, view.LegalActions)
}

// callDecide runs the bot's Decide; a panic becomes an error naming the bot's line that panicked.
func (c *Client) callDecide(view *View) (action Action, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v (at %s)", r, panicSite())
		}
	}()
	return c.bot.Decide(view)
}

// panicSite is "file.go:12 in pkg.Func": the innermost frame of a recovered panic outside the Go runtime and
// this SDK (an SDK function such as a slice index helper is blamed on the bot's line that called it).
func panicSite() string {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		frame, more := frames.Next()
		sdk := strings.HasPrefix(frame.Function, "skyjo-ref/skyjo.")
		if !sdk && !strings.HasPrefix(frame.Function, "runtime.") && frame.Function != "" {
			return fmt.Sprintf("%s:%d in %s", baseName(frame.File), frame.Line, frame.Function)
		}
		if !more {
			return "unknown"
		}
	}
}

func baseName(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}

func describe(view *View) string {
	legal := make([]string, len(view.LegalActions))
	for i, a := range view.LegalActions {
		legal[i] = a.String()
	}
	hand := "none"
	if view.Hand != nil {
		hand = strconv.Itoa(*view.Hand)
	}
	return fmt.Sprintf("round %d, seat %d, %s, hand %s, legal: %s", view.Round, view.Seat, view.Decision, hand, strings.Join(legal, ", "))
}
