// A Skyjo bot in Go for the skyjo-ref referee.
//
// It uses stubs generated from proto/skyjo/v1/skyjo.proto (see README.md:
// protoc writes them to skyjo/v1/ here), connects to SKYJO_ADDR with the
// bearer token SKYJO_TOKEN, says Hello, and plays game after game until the
// referee ends the session or it gets SIGTERM. When the stream drops it
// reconnects with exponential backoff and jitter; the referee then sends
// GameStart and the pending decision again.
//
//	SKYJO_ADDR=127.0.0.1:50051 SKYJO_TOKEN=... ./skyjo-go-bot
//
// TLS: set SKYJO_CA_FILE to the PEM of the CA that signed the referee's
// certificate (serve --tls-cert); add SKYJO_CLIENT_CERT and SKYJO_CLIENT_KEY
// when the referee asks for client certificates (serve --tls-client-ca).
//
// Strategy: keep low cards, as examples/node/bot.js does. See
// docs/writing-a-bot.md for the protocol, message by message.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"math/rand"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	skyjov1 "skyjobot/skyjo/v1"
)

const (
	protocolVersion = 1
	botVersion      = "1.0.0"
)

// Statuses after which reconnecting cannot help (docs/writing-a-bot.md, section 9).
var fatal = map[codes.Code]string{
	codes.Unauthenticated:    "the referee refused the token",
	codes.PermissionDenied:   "the referee refused the token",
	codes.InvalidArgument:    "the referee refused the session",
	codes.FailedPrecondition: "the referee refused the session",
	codes.Unimplemented:      "the server at this address is not a skyjo-ref referee",
	codes.Aborted:            "another connection with the same token replaced this one",
}

// ------------------------------------------------------------------ strategy

// choose returns the index in legal of the action to play.
func choose(view *skyjov1.View, legal []*skyjov1.Action) int {
	grid := view.Grids[view.Seat].Slots
	var hidden, revealed []uint32
	for pos, slot := range grid {
		switch slot.State {
		case skyjov1.SlotState_SLOT_STATE_HIDDEN:
			hidden = append(hidden, uint32(pos))
		case skyjov1.SlotState_SLOT_STATE_REVEALED:
			revealed = append(revealed, uint32(pos))
		}
	}
	find := func(kind skyjov1.ActionKind, pos *uint32) int {
		for i, a := range legal {
			if a.Kind == kind && (pos == nil || (a.Pos != nil && *a.Pos == *pos)) {
				return i
			}
		}
		return 0 // never expected: the first legal action
	}
	first := func(positions []uint32) *uint32 {
		if len(positions) == 0 {
			return nil
		}
		return &positions[0]
	}
	switch view.Decision {
	case skyjov1.DecisionKind_DECISION_KIND_OPENING_REVEAL:
		return find(skyjov1.ActionKind_ACTION_KIND_REVEAL, first(hidden))
	case skyjov1.DecisionKind_DECISION_KIND_DRAW_OR_TAKE:
		pile := view.DiscardPile
		if len(pile) > 0 && pile[len(pile)-1] <= 3 {
			return find(skyjov1.ActionKind_ACTION_KIND_TAKE, nil)
		}
		return find(skyjov1.ActionKind_ACTION_KIND_DRAW, nil)
	}
	card := view.GetHand() // set in the two swap decisions
	worst := -1
	for _, p := range revealed {
		if worst < 0 || grid[p].GetValue() > grid[worst].GetValue() {
			worst = int(p)
		}
	}
	if worst >= 0 && grid[worst].GetValue() > card {
		pos := uint32(worst)
		return find(skyjov1.ActionKind_ACTION_KIND_SWAP, &pos)
	}
	if len(hidden) > 0 && card <= 4 {
		return find(skyjov1.ActionKind_ACTION_KIND_SWAP, first(hidden))
	}
	if len(hidden) > 0 && view.Decision == skyjov1.DecisionKind_DECISION_KIND_SWAP_OR_REVEAL {
		return find(skyjov1.ActionKind_ACTION_KIND_REVEAL, first(hidden))
	}
	if len(hidden) > 0 {
		return find(skyjov1.ActionKind_ACTION_KIND_SWAP, first(hidden))
	}
	return find(skyjov1.ActionKind_ACTION_KIND_SWAP, first(revealed))
}

// ------------------------------------------------------------------ connection

type bot struct {
	name      string
	token     string
	client    skyjov1.BotServiceClient
	welcomed  bool // the last session was accepted: reconnects start afresh
	games     int
	decisions int
}

// session plays on one Play stream until it ends; it returns the stream's status.
func (b *bot) session(ctx context.Context) error {
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+b.token)
	stream, err := b.client.Play(ctx)
	if err != nil {
		return err
	}
	hello := &skyjov1.Hello{Name: b.name, Version: botVersion, ProtocolVersion: protocolVersion}
	if err := stream.Send(&skyjov1.PlayRequest{Message: &skyjov1.PlayRequest_Hello{Hello: hello}}); err != nil {
		return err
	}
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			return nil // status OK: the referee ended the session
		}
		if err != nil {
			return err
		}
		switch m := msg.Message.(type) {
		case *skyjov1.PlayResponse_Welcome:
			b.welcomed = true
			log.Printf("connected as '%s' (protocol %d)", m.Welcome.SeatName, m.Welcome.ProtocolVersion)
		case *skyjov1.PlayResponse_Decision:
			req := m.Decision
			index := choose(req.View, req.LegalActions)
			b.decisions++
			reply := &skyjov1.DecisionReply{RequestId: req.RequestId, Choice: &skyjov1.DecisionReply_Index{Index: uint32(index)}}
			if err := stream.Send(&skyjov1.PlayRequest{Message: &skyjov1.PlayRequest_Reply{Reply: reply}}); err != nil {
				return err
			}
		case *skyjov1.PlayResponse_Strike:
			s := m.Strike
			log.Printf("strike %d/%d (%s): %s", s.Strikes, s.MaxStrikes, s.Reason, s.Detail)
		case *skyjov1.PlayResponse_GameOver:
			b.games++
		default:
			// game_start, events, round results: this bot reads everything from the view
		}
	}
}

// transport is TLS when SKYJO_CA_FILE names the referee's CA (with this bot's certificate when
// SKYJO_CLIENT_CERT and SKYJO_CLIENT_KEY are set), plaintext otherwise and on unix: addresses.
func transport(addr string) (grpc.DialOption, error) {
	caFile := os.Getenv("SKYJO_CA_FILE")
	if caFile == "" || strings.HasPrefix(addr, "unix:") {
		return grpc.WithInsecure(), nil
	}
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("SKYJO_CA_FILE %s: cannot read: %v", caFile, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("SKYJO_CA_FILE %s: no PEM certificate in it", caFile)
	}
	config := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	certFile, keyFile := os.Getenv("SKYJO_CLIENT_CERT"), os.Getenv("SKYJO_CLIENT_KEY")
	if (certFile == "") != (keyFile == "") {
		return nil, fmt.Errorf("a client certificate needs both SKYJO_CLIENT_CERT and SKYJO_CLIENT_KEY")
	}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("SKYJO_CLIENT_CERT/SKYJO_CLIENT_KEY: %v", err)
		}
		config.Certificates = []tls.Certificate{pair}
	}
	return grpc.WithTransportCredentials(credentials.NewTLS(config)), nil
}

func main() {
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	addr := strings.TrimPrefix(os.Getenv("SKYJO_ADDR"), "grpc://")
	token := os.Getenv("SKYJO_TOKEN")
	if addr == "" || token == "" {
		fmt.Fprintln(os.Stderr, "error: set SKYJO_ADDR (HOST:PORT of the referee) and SKYJO_TOKEN (the bot token)")
		os.Exit(2)
	}
	name := os.Getenv("SKYJO_BOT_NAME")
	if name == "" {
		name = "go-lowcards"
	}
	giveUp := 60 * time.Second
	if ms, err := strconv.Atoi(os.Getenv("SKYJO_GIVE_UP_MS")); err == nil && ms > 0 {
		giveUp = time.Duration(ms) * time.Millisecond
	}
	log.SetPrefix(name + " ")

	// keepalive as the guide asks: a ping every 30 s, no more often than every 10 s
	security, err := transport(addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(2)
	}
	conn, err := grpc.Dial(addr, security, grpc.WithKeepaliveParams(keepalive.ClientParameters{
		Time: 30 * time.Second, Timeout: 10 * time.Second,
	}))
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: cannot use address %s: %v\n", addr, err)
		os.Exit(2)
	}
	defer conn.Close()
	b := &bot{name: name, token: token, client: skyjov1.NewBotServiceClient(conn)}

	ctx, stop := context.WithCancel(context.Background())
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		sig := <-signals
		log.Printf("%v: closing the session", sig)
		stop()
	}()

	finish := func(code int, message string) {
		if message != "" {
			fmt.Fprintln(os.Stderr, message)
		}
		log.Printf("played %d games, %d decisions", b.games, b.decisions)
		os.Exit(code)
	}
	attempt := 0
	lostSince := time.Now()
	for {
		err := b.session(ctx)
		if ctx.Err() != nil {
			finish(0, "")
		}
		if err == nil {
			log.Printf("the referee ended the session")
			finish(0, "")
		}
		st := status.Convert(err)
		if why, ok := fatal[st.Code()]; ok {
			finish(1, fmt.Sprintf("error: %s: %s: %s", why, st.Code(), st.Message()))
		}
		if b.welcomed {
			b.welcomed, attempt, lostSince = false, 0, time.Now()
		}
		if waited := time.Since(lostSince); waited > giveUp {
			finish(1, fmt.Sprintf("error: no session with the referee at %s for %.0f s (%s): giving up", addr, waited.Seconds(), st.Code()))
		}
		delay := 5 * time.Second
		if attempt < 6 {
			delay = 100 * time.Millisecond << attempt // 100 ms doubling to 5 s
		}
		delay = time.Duration(float64(delay) * (0.5 + rand.Float64()/2))
		attempt++
		log.Printf("stream lost (%s: %s); reconnecting in %d ms", st.Code(), st.Message(), delay.Milliseconds())
		select {
		case <-ctx.Done():
			finish(0, "")
		case <-time.After(delay):
		}
	}
}
