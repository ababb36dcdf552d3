package skyjo

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	pathpkg "path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "skyjo-ref/skyjo/skyjov1"
)

// ProtocolVersion is the protocol this SDK speaks (sent in Hello).
const ProtocolVersion = 1

// fatal are the statuses after which reconnecting cannot help (docs/writing-a-bot.md, section 9).
var fatal = map[codes.Code]string{
	codes.Unauthenticated:    "the referee refused the token",
	codes.PermissionDenied:   "the referee refused the token",
	codes.InvalidArgument:    "the referee refused the session",
	codes.FailedPrecondition: "the referee refused the session",
	codes.Unimplemented:      "the server at this address is not a skyjo-ref referee",
	codes.Aborted:            "another connection with the same token replaced this one",
}

// UsageError is a setting the client cannot use (no address or token, a TLS file that cannot be read): exit 2.
type UsageError struct{ Problem string }

func (e *UsageError) Error() string { return e.Problem }

// RefusedError is a session the referee refused or ended for good (a bad token, a newer connection with the
// same token, an unsupported protocol): exit 1, reconnecting cannot help.
type RefusedError struct {
	Code    codes.Code
	Message string
	why     string
}

func (e *RefusedError) Error() string { return fmt.Sprintf("%s: %s: %s", e.why, e.Code, e.Message) }

// LostError is a client that found no session with the referee for the give-up time: exit 1.
type LostError struct{ Problem string }

func (e *LostError) Error() string { return e.Problem }

// Stats is what a client did, for logs and tests.
type Stats struct {
	Games, Decisions, DecideErrors, Strikes int
	Sessions                                int // streams the referee welcomed: 1 + reconnects
}

// Option changes a client's settings.
type Option func(*settings)

type settings struct {
	addr, token, name, version string
	tls                        TLSFiles
	giveUp                     time.Duration
	backoffBase, backoffMax    time.Duration
	logger                     *slog.Logger
}

// WithAddress sets the referee's address (default: SKYJO_ADDR): HOST:PORT or unix:PATH.
func WithAddress(addr string) Option { return func(s *settings) { s.addr = addr } }

// WithToken sets the bot's token (default: SKYJO_TOKEN).
func WithToken(token string) Option { return func(s *settings) { s.token = token } }

// WithName sets the name sent in Hello (default: SKYJO_BOT_NAME, else the program's file name).
func WithName(name string) Option { return func(s *settings) { s.name = name } }

// WithVersion sets the version sent in Hello; game records keep it in meta.bots.
func WithVersion(version string) Option { return func(s *settings) { s.version = version } }

// WithTLS sets TLS files (default: SKYJO_CA_FILE, SKYJO_CLIENT_CERT, SKYJO_CLIENT_KEY; none: plaintext).
func WithTLS(files TLSFiles) Option { return func(s *settings) { s.tls = files } }

// WithGiveUp sets how long the client tries to reconnect without a session before it gives up (default 60 s).
func WithGiveUp(d time.Duration) Option { return func(s *settings) { s.giveUp = d } }

// WithBackoff sets the reconnect backoff: base doubling to max, times a random 0.5-1 (default 100 ms, 5 s).
func WithBackoff(base, max time.Duration) Option {
	return func(s *settings) { s.backoffBase, s.backoffMax = base, max }
}

// WithLogger sets the logger (default: text on stderr at the level SKYJO_LOG names: debug, info, warn).
func WithLogger(logger *slog.Logger) Option { return func(s *settings) { s.logger = logger } }

// Client plays one Bot on a referee: one Play stream, game after game, reconnecting when the stream breaks.
type Client struct {
	bot      Bot
	s        settings
	tls      *tls.Config
	log      *slog.Logger
	stats    Stats
	games    map[string]*GameStart
	answers  []answer // the last few replies computed, for a request the referee sends again after a reconnect
	welcomed chan struct{}
}

// answer is a reply computed for a decision, kept to answer the same decision sent again.
type answer struct {
	requestID uint64
	gameID    string
	legal     int
	view      *pb.View
	reply     *pb.DecisionReply
}

// NewClient checks the settings (a *UsageError names what is wrong) and returns a client ready to Play.
func NewClient(bot Bot, options ...Option) (*Client, error) {
	s := settings{
		addr: os.Getenv("SKYJO_ADDR"), token: os.Getenv("SKYJO_TOKEN"), name: os.Getenv("SKYJO_BOT_NAME"),
		giveUp: 60 * time.Second, backoffBase: 100 * time.Millisecond, backoffMax: 5 * time.Second,
	}
	for _, option := range options {
		option(&s)
	}
	if s.addr == "" {
		return nil, &UsageError{"no referee address: set SKYJO_ADDR (HOST:PORT or unix:PATH of the referee)"}
	}
	if s.token == "" {
		return nil, &UsageError{"no bot token: set SKYJO_TOKEN (skyjo-ref serve issues tokens)"}
	}
	addr, err := CheckAddress(s.addr)
	if err != nil {
		return nil, &UsageError{err.Error()}
	}
	s.addr = addr
	config, err := s.tls.config()
	if err != nil {
		return nil, &UsageError{err.Error()}
	}
	if s.name == "" {
		s.name = pathpkg.Base(os.Args[0])
	}
	if s.logger == nil {
		s.logger = defaultLogger()
	}
	c := &Client{bot: bot, s: s, log: s.logger, games: map[string]*GameStart{}, welcomed: make(chan struct{})}
	if !isUnix(addr) {
		c.tls = config // a unix: address is always plaintext
	}
	return c, nil
}

func isUnix(addr string) bool { return len(addr) >= 5 && addr[:5] == "unix:" }

func defaultLogger() *slog.Logger {
	level := slog.LevelInfo
	_ = level.UnmarshalText([]byte(os.Getenv("SKYJO_LOG"))) // debug, info, warn, error; else info
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// Stats is what the client did so far (read it after Play returns).
func (c *Client) Stats() Stats { return c.stats }

// Welcomed is closed once the referee has answered Hello: a session holds.
func (c *Client) Welcomed() <-chan struct{} { return c.welcomed }

// Play plays until the referee ends the session (nil), ctx is cancelled (nil), the referee refuses the
// session (*RefusedError) or no session holds for the give-up time (*LostError).
func (c *Client) Play(ctx context.Context) error {
	attempt := 0
	lostSince := time.Now()
	for {
		welcomedBefore := c.stats.Sessions
		outcome, err := c.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil || outcome == "" {
			return err
		}
		if c.stats.Sessions > welcomedBefore {
			attempt, lostSince = 0, time.Now()
		}
		if waited := time.Since(lostSince); waited > c.s.giveUp {
			return &LostError{fmt.Sprintf("no session with the referee at %s for %.0f s (%s): giving up", c.s.addr, waited.Seconds(), outcome)}
		}
		delay := c.s.backoffMax
		if attempt < 30 && c.s.backoffBase<<attempt < delay {
			delay = c.s.backoffBase << attempt
		}
		delay = time.Duration(float64(delay) * (0.5 + rand.Float64()/2))
		attempt++
		c.log.Warn(fmt.Sprintf("stream to %s lost (%s); reconnecting in %v", c.s.addr, outcome, delay.Round(time.Millisecond)))
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
	}
}

func (c *Client) dial() (*grpc.ClientConn, error) {
	security := insecure.NewCredentials()
	if c.tls != nil {
		security = credentials.NewTLS(c.tls)
	}
	return grpc.NewClient(c.s.addr,
		grpc.WithTransportCredentials(security),
		// the referee accepts a ping every 10 s at most: ping every 30 s to notice a dead referee
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<20), grpc.MaxCallSendMsgSize(64<<10)),
		grpc.WithDisableRetry(),
	)
}

// session plays on one Play stream until it ends: "" when the referee ended it (status OK), else why it broke;
// an error when reconnecting cannot help.
func (c *Client) session(ctx context.Context) (string, error) {
	conn, err := c.dial()
	if err != nil {
		return "", &UsageError{fmt.Sprintf("cannot use referee address %s: %v", c.s.addr, err)}
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+c.s.token))
	defer cancel()
	stream, err := pb.NewBotServiceClient(conn).Play(ctx)
	if err == nil {
		hello := &pb.Hello{Name: c.s.name, Version: c.s.version, ProtocolVersion: ProtocolVersion}
		c.log.Debug("-> hello", "name", c.s.name, "version", c.s.version)
		if err = stream.Send(&pb.PlayRequest{Message: &pb.PlayRequest_Hello{Hello: hello}}); err == io.EOF {
			_, err = stream.Recv() // Send's io.EOF means the stream ended: its status comes from Recv
		}
	}
	for err == nil {
		var msg *pb.PlayResponse
		if msg, err = stream.Recv(); err == nil {
			err = c.handle(msg, stream)
		}
	}
	if err == io.EOF {
		c.log.Info("the referee ended the session")
		return "", nil
	}
	if ctx.Err() != nil {
		return "stopped", nil
	}
	st := status.Convert(err)
	if why, ok := fatal[st.Code()]; ok {
		return "", &RefusedError{Code: st.Code(), Message: st.Message(), why: why}
	}
	return fmt.Sprintf("%s: %s", st.Code(), st.Message()), nil
}

// handle reacts to one message from the referee; an error ends the stream.
func (c *Client) handle(msg *pb.PlayResponse, stream pb.BotService_PlayClient) error {
	debug := c.log.Enabled(context.Background(), slog.LevelDebug)
	if debug {
		c.log.Debug("<- message", "body", msg.String())
	}
	switch m := msg.Message.(type) {
	case *pb.PlayResponse_Decision:
		c.events(m.Decision.GetEvents())
		reply := c.answer(m.Decision)
		if debug {
			c.log.Debug("-> reply", "body", reply.String())
		}
		if err := stream.Send(&pb.PlayRequest{Message: &pb.PlayRequest_Reply{Reply: reply}}); err != nil {
			_, err = stream.Recv() // Send's io.EOF means the stream ended: its status comes from Recv
			return err
		}
	case *pb.PlayResponse_Events:
		c.events(m.Events.GetEvents())
	case *pb.PlayResponse_GameStart:
		start, err := GameStartFromProto(m.GameStart)
		if err != nil {
			c.log.Error("unreadable game start", "err", err)
		} else if _, seen := c.games[start.GameID]; !seen { // sent again after a reconnect: not news
			c.games[start.GameID] = start
			if hook, ok := c.bot.(GameStarter); ok {
				c.hook("OnGameStart", func() { hook.OnGameStart(start) })
			}
		}
	case *pb.PlayResponse_RoundResult:
		if hook, ok := c.bot.(RoundResultHandler); ok {
			result := roundResultFromProto(m.RoundResult)
			c.hook("OnRoundResult", func() { hook.OnRoundResult(result) })
		}
	case *pb.PlayResponse_GameOver:
		result := gameOverFromProto(m.GameOver)
		delete(c.games, result.GameID)
		c.stats.Games++
		c.log.Info(fmt.Sprintf("game %s over: totals %v, ranks %v", result.GameID, result.Totals, result.Ranks))
		if hook, ok := c.bot.(GameOverHandler); ok {
			c.hook("OnGameOver", func() { hook.OnGameOver(result) })
		}
	case *pb.PlayResponse_Strike:
		strike := strikeFromProto(m.Strike)
		c.stats.Strikes++
		played := "nothing"
		if strike.Played != nil {
			played = strike.Played.String()
		}
		c.log.Warn(fmt.Sprintf("strike %d/%d", strike.Strikes, strike.MaxStrikes), "game", strike.GameID,
			"request", strike.RequestID, "reason", strike.Reason, "detail", strike.Detail, "played", played)
		if hook, ok := c.bot.(StrikeHandler); ok {
			c.hook("OnStrike", func() { hook.OnStrike(strike) })
		}
	case *pb.PlayResponse_Welcome:
		c.stats.Sessions++
		if c.stats.Sessions == 1 {
			close(c.welcomed)
		}
		c.log.Info(fmt.Sprintf("connected to %s as '%s' (protocol %d)", c.s.addr, m.Welcome.GetSeatName(), m.Welcome.GetProtocolVersion()))
	default:
		c.log.Debug("skipping an unknown message")
	}
	return nil
}

func (c *Client) events(events []*pb.Event) {
	hook, ok := c.bot.(EventHandler)
	if !ok {
		return
	}
	for _, e := range events {
		event := eventFromProto(e)
		c.hook("OnEvent", func() { hook.OnEvent(event) })
	}
}

// hook calls a bot hook; a panic in it is logged, never fatal.
func (c *Client) hook(name string, call func()) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error(name+" panicked", "panic", fmt.Sprint(r), "at", panicSite())
		}
	}()
	call()
}
