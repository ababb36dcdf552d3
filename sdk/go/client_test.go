package skyjo_test

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"skyjo-ref/skyjo"
	pb "skyjo-ref/skyjo/skyjov1"
)

// referee is a scripted BotService: each stream runs the next script in turn.
type referee struct {
	pb.UnimplementedBotServiceServer
	mu      sync.Mutex
	scripts []func(stream pb.BotService_PlayServer) error
	hellos  []*pb.Hello
	tokens  []string
	refuse  bool // refuse every stream at once, before its Hello is read (as the referee does a bad token)
}

func (r *referee) Play(stream pb.BotService_PlayServer) error {
	if r.refuse {
		return status.Error(codes.Unauthenticated, "unknown bot token")
	}
	md, _ := metadata.FromIncomingContext(stream.Context())
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.tokens = append(r.tokens, strings.Join(md.Get("authorization"), ","))
	r.hellos = append(r.hellos, first.GetHello())
	script := r.scripts[0]
	r.scripts = r.scripts[1:]
	r.mu.Unlock()
	return script(stream)
}

// serve starts r on a unix socket in a temporary folder and returns its address.
func serve(t *testing.T, r *referee) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "referee.sock")
	listener, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	server := grpc.NewServer()
	pb.RegisterBotServiceServer(server, r)
	go server.Serve(listener)
	t.Cleanup(server.Stop)
	return "unix:" + path
}

func send(stream pb.BotService_PlayServer, msg *pb.PlayResponse) {
	_ = stream.Send(msg)
}

func welcome() *pb.PlayResponse {
	return &pb.PlayResponse{Message: &pb.PlayResponse_Welcome{Welcome: &pb.Welcome{ProtocolVersion: 1, SeatName: "me"}}}
}

func gameStart(id string) *pb.PlayResponse {
	on := true
	return &pb.PlayResponse{Message: &pb.PlayResponse_GameStart{GameStart: &pb.GameStart{
		GameId: id, Seat: 0, Players: []string{"me", "greedy"},
		Rules: &pb.Rules{Preset: "french", ColumnClear: &on, ClearOnFinalReveal: &on,
			FinisherPenalty:  pb.FinisherPenalty_FINISHER_PENALTY_PLUS_10,
			NextRoundStarter: pb.NextRoundStarter_NEXT_ROUND_STARTER_HIGHEST_REVEAL, EndScore: 100,
			FinalTie: pb.FinalTie_FINAL_TIE_SHARED},
		TimeControl: &pb.TimeControl{DecisionMs: 2000, BankMs: 120000, MaxStrikes: 3, GraceMs: 10000},
	}}}
}

// decision asks seat 0 of game id for an opening reveal (all hidden), with one event attached.
func decision(id string, rid uint64) *pb.PlayResponse {
	hidden := func() *pb.Grid {
		grid := &pb.Grid{}
		for range skyjo.GridSize {
			grid.Slots = append(grid.Slots, &pb.Slot{State: pb.SlotState_SLOT_STATE_HIDDEN})
		}
		return grid
	}
	var legal []*pb.Action
	for pos := range uint32(skyjo.GridSize) {
		legal = append(legal, &pb.Action{Kind: pb.ActionKind_ACTION_KIND_REVEAL, Pos: &pos})
	}
	round := uint32(0)
	return &pb.PlayResponse{Message: &pb.PlayResponse_Decision{Decision: &pb.DecisionRequest{
		RequestId: rid, GameId: id, LegalActions: legal, TimeLeftMs: 2000,
		View: &pb.View{Decision: pb.DecisionKind_DECISION_KIND_OPENING_REVEAL, Grids: []*pb.Grid{hidden(), hidden()},
			DiscardPile: []int32{5}, DrawPileSize: 125, Totals: []int32{0, 0}},
		Events: []*pb.Event{{GameId: id, Kind: "round_start", Round: &round}},
	}}}
}

func reply(t *testing.T, stream pb.BotService_PlayServer) *pb.DecisionReply {
	msg, err := stream.Recv()
	if err != nil {
		t.Errorf("no reply: %v", err)
		return nil
	}
	return msg.GetReply()
}

// recorder is a bot that records every call; Decide reveals the last hidden slot, fails or panics by request id.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) note(call string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call)
}

func (r *recorder) Decide(view *skyjo.View) (skyjo.Action, error) {
	r.note("decide " + view.GameID)
	switch view.RequestID {
	case 2:
		return skyjo.Action{}, errors.New("no idea")
	case 3:
		var nothing []int
		return skyjo.Reveal(nothing[5]), nil // panics
	}
	hidden := view.MyGrid().HiddenPositions()
	return skyjo.Reveal(hidden[len(hidden)-1]), nil
}

func (r *recorder) OnGameStart(start *skyjo.GameStart) {
	r.note("start " + start.GameID + " " + string(start.Rules.FinisherPenalty))
}
func (r *recorder) OnEvent(event skyjo.Event)               { r.note("event " + string(event.Kind)) }
func (r *recorder) OnGameOver(result *skyjo.GameResult)     { r.note("over " + result.GameID) }
func (r *recorder) OnRoundResult(result *skyjo.RoundResult) { r.note("round") }

func TestPlaysRepliesReconnectsAndEnds(t *testing.T) {
	var replies []*pb.DecisionReply
	ref := &referee{scripts: []func(pb.BotService_PlayServer) error{
		func(s pb.BotService_PlayServer) error {
			send(s, welcome())
			send(s, gameStart("g1"))
			send(s, decision("g1", 1))
			replies = append(replies, reply(t, s))
			return status.Error(codes.Unavailable, "the referee restarts") // the bot reconnects
		},
		func(s pb.BotService_PlayServer) error {
			send(s, welcome())
			send(s, gameStart("g1"))   // sent again: not news
			send(s, decision("g1", 1)) // sent again: answered without deciding twice
			replies = append(replies, reply(t, s))
			send(s, decision("g1", 2))
			replies = append(replies, reply(t, s))
			send(s, decision("g1", 3))
			replies = append(replies, reply(t, s))
			send(s, &pb.PlayResponse{Message: &pb.PlayResponse_RoundResult{RoundResult: &pb.RoundResult{GameId: "g1"}}})
			send(s, &pb.PlayResponse{Message: &pb.PlayResponse_GameOver{GameOver: &pb.GameOver{GameId: "g1"}}})
			return nil // status OK: the session is over
		},
	}}
	addr := serve(t, ref)
	bot := &recorder{}
	client, err := skyjo.NewClient(bot, skyjo.WithAddress(addr), skyjo.WithToken("secret-token-0123456789"),
		skyjo.WithName("rec"), skyjo.WithVersion("9.9"), skyjo.WithBackoff(time.Millisecond, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Play(context.Background()); err != nil {
		t.Fatalf("Play: %v", err)
	}
	if len(ref.hellos) != 2 || ref.hellos[1].GetProtocolVersion() != 1 || ref.hellos[1].GetName() != "rec" || ref.hellos[1].GetVersion() != "9.9" {
		t.Errorf("hellos: %v", ref.hellos)
	}
	if ref.tokens[0] != "Bearer secret-token-0123456789" || ref.tokens[1] != ref.tokens[0] {
		t.Errorf("authorization: %v", ref.tokens)
	}
	if len(replies) != 4 {
		t.Fatalf("replies: %v", replies)
	}
	for i, want := range []uint64{1, 1, 2, 3} {
		if replies[i].GetRequestId() != want {
			t.Errorf("reply %d answers request %d, expected %d", i, replies[i].GetRequestId(), want)
		}
	}
	if replies[0].GetIndex() != 11 || replies[1].GetIndex() != 11 {
		t.Errorf("reveal 11 is legal action 11: %v %v", replies[0], replies[1])
	}
	if replies[2].GetError() != "no idea" {
		t.Errorf("an error from Decide is the reply's error: %v", replies[2])
	}
	if text := replies[3].GetError(); !strings.HasPrefix(text, "panic: runtime error: index out of range") || !strings.Contains(text, "client_test.go:") {
		t.Errorf("a panic in Decide is the reply's error, with the bot's line: %q", text)
	}
	want := []string{
		"start g1 plus_10", "event round_start", "decide g1", // the first session
		"event round_start", // the request sent again: its events are delivered, Decide is not called again
		"event round_start", "decide g1", "event round_start", "decide g1", "round", "over g1",
	}
	if strings.Join(bot.calls, "|") != strings.Join(want, "|") {
		t.Errorf("calls:\n%v\nexpected\n%v", bot.calls, want)
	}
	stats := client.Stats()
	if stats.Sessions != 2 || stats.Games != 1 || stats.Decisions != 3 || stats.DecideErrors != 2 {
		t.Errorf("stats: %+v", stats)
	}
}

// A refusal is a RefusedError whether it comes after the Hello was read or before (then the Hello's Send may
// fail with io.EOF, and the status is the one Recv reports).
func TestRefusedTokenIsARefusedError(t *testing.T) {
	for _, early := range []bool{false, true, true, true} {
		ref := &referee{refuse: early, scripts: []func(pb.BotService_PlayServer) error{
			func(pb.BotService_PlayServer) error { return status.Error(codes.Unauthenticated, "unknown bot token") },
		}}
		client, err := skyjo.NewClient(&recorder{}, skyjo.WithAddress(serve(t, ref)), skyjo.WithToken("wrong"))
		if err != nil {
			t.Fatal(err)
		}
		err = client.Play(context.Background())
		var refused *skyjo.RefusedError
		if !errors.As(err, &refused) || refused.Code != codes.Unauthenticated || skyjo.ExitCode(err) != skyjo.ExitRefused {
			t.Fatalf("Play (refused before the Hello is read: %v): %v", early, err)
		}
		if err.Error() != "the referee refused the token: Unauthenticated: unknown bot token" {
			t.Errorf("message: %q", err)
		}
	}
}

func TestCancelEndsPlayWhileTheServerNeverAnswers(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0") // accepts connections, never speaks HTTP/2
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			accepted <- conn
		}
	}()
	client, err := skyjo.NewClient(&recorder{}, skyjo.WithAddress(listener.Addr().String()), skyjo.WithToken("t"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- client.Play(ctx) }()
	conn := <-accepted // the client is connecting
	defer conn.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("a cancelled Play returns nil, got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Play did not end within 5 s of the cancel")
	}
}

func TestGivesUpWithALostError(t *testing.T) {
	listener, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := listener.Addr().String()
	listener.Close() // nothing listens there now
	client, err := skyjo.NewClient(&recorder{}, skyjo.WithAddress(addr), skyjo.WithToken("t"),
		skyjo.WithGiveUp(50*time.Millisecond), skyjo.WithBackoff(time.Millisecond, 10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	err = client.Play(context.Background())
	var lost *skyjo.LostError
	if !errors.As(err, &lost) || !strings.Contains(err.Error(), "giving up") || skyjo.ExitCode(err) != skyjo.ExitRefused {
		t.Fatalf("Play: %v", err)
	}
}

func TestSettingsThatCannotWorkAreUsageErrors(t *testing.T) {
	t.Setenv("SKYJO_ADDR", "")
	t.Setenv("SKYJO_TOKEN", "")
	cases := map[string][]skyjo.Option{
		"no referee address: set SKYJO_ADDR": {skyjo.WithToken("t")},
		"no bot token: set SKYJO_TOKEN":      {skyjo.WithAddress("127.0.0.1:1")},
		"expected HOST:PORT":                 {skyjo.WithAddress("nowhere"), skyjo.WithToken("t")},
		"the port must be 0-65535":           {skyjo.WithAddress("127.0.0.1:99999"), skyjo.WithToken("t")},
		"expected a socket path after unix:": {skyjo.WithAddress("unix:"), skyjo.WithToken("t")},
		"CA file /nonexistent.pem (SKYJO_CA_FILE): cannot read: no such file or directory": {
			skyjo.WithAddress("127.0.0.1:1"), skyjo.WithToken("t"), skyjo.WithTLS(skyjo.TLSFiles{CAFile: "/nonexistent.pem"})},
		"needs both its certificate and its key": {skyjo.WithAddress("127.0.0.1:1"), skyjo.WithToken("t"),
			skyjo.WithTLS(skyjo.TLSFiles{CAFile: "/dev/null", CertFile: "bot.pem"})},
	}
	for want, options := range cases {
		_, err := skyjo.NewClient(&recorder{}, options...)
		var usage *skyjo.UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), want) || skyjo.ExitCode(err) != skyjo.ExitUsage {
			t.Errorf("expected a usage error with %q, got %v", want, err)
		}
	}
}

func TestActionsTextAndParse(t *testing.T) {
	for _, action := range []skyjo.Action{skyjo.Draw(), skyjo.Take(), skyjo.Reveal(0), skyjo.Swap(11)} {
		parsed, err := skyjo.ParseAction(action.String())
		if err != nil || parsed != action {
			t.Errorf("ParseAction(%q) = %v, %v", action.String(), parsed, err)
		}
	}
	if skyjo.Swap(3).String() != "swap 3" || skyjo.Draw().String() != "draw" {
		t.Errorf("text forms: %s, %s", skyjo.Swap(3), skyjo.Draw())
	}
	for text, want := range map[string]string{
		"swap 12": "swap needs a position 0-11", "draw 1": "draw takes no position", "fly": "unknown action",
		"swap": "swap needs a position", "swap x": "is not a number", "": "expected 'draw', 'take'",
	} {
		if _, err := skyjo.ParseAction(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseAction(%q): %v, expected %q", text, err, want)
		}
	}
}
