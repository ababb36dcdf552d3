package skyjo.bot;

import com.google.protobuf.ByteString;
import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import skyjo.v1.BotServiceGrpc;
import skyjo.v1.DecisionReply;
import skyjo.v1.DecisionRequest;
import skyjo.v1.PlayRequest;
import skyjo.v1.PlayResponse;

/**
 * Plays a {@link Bot} on a skyjo-ref referee: one {@code BotService.Play} stream, Hello, then game after game.
 *
 * <p>{@link SkyjoBot#run(Bot, String...)} is the usual way in (it adds signals, the parent's death and exit codes);
 * use a client directly to embed a bot in a program of your own:
 *
 * <pre>{@code
 * BotClient client = BotClient.builder(new MyBot()).address("127.0.0.1:50051").token(token).build();
 * BotClient.Stats stats = client.run();   // blocks; client.stop() from another thread ends it
 * }</pre>
 *
 * <ul>
 *   <li>The bot's code runs in message order on gRPC's network thread, as each message arrives (the lowest
 *       latency); {@link Builder#inline(boolean) inline(false)} runs it on the thread that called {@link #run()}
 *       instead, so keepalive pings are answered while a slow {@code decide} thinks.
 *   <li>When the stream drops, the client reconnects with exponential backoff and jitter (0.1 s doubling to 5 s, times
 *       0.5-1) with the same token; the referee sends the pending decision again, and the client answers it from the
 *       answer it already computed, without calling {@code decide} twice. It gives up after 60 s without a session.
 *   <li>A {@code decide} that throws (or returns null) becomes an error reply with the exception's text.
 *   <li>It ends when the referee ends the session (status OK) or on {@link #stop()}; a refused session (bad token,
 *       replaced, unsupported protocol) throws {@link SessionRefusedException}, giving up {@link ConnectionLostException}.
 * </ul>
 */
public final class BotClient {
    static final Logger LOG = Logger.getLogger("skyjo.bot");

    /** How often the client pings the referee (the referee allows one ping every 10 s at most). */
    static final Duration KEEPALIVE_TIME = Duration.ofSeconds(30);
    static final Duration KEEPALIVE_TIMEOUT = Duration.ofSeconds(10);
    private static final int MAX_RECEIVE_BYTES = 1 << 20;
    private static final int MAX_SEND_BYTES = 64 << 10;
    private static final int ANSWERS_KEPT = 8;
    private static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    /** Statuses after which reconnecting cannot help, and what they mean. */
    private static final Map<Status.Code, String> FATAL = Map.of(
            Status.Code.UNAUTHENTICATED, "the referee refused the token",
            Status.Code.PERMISSION_DENIED, "the referee refused the token",
            Status.Code.INVALID_ARGUMENT, "the referee refused the session",
            Status.Code.FAILED_PRECONDITION, "the referee refused the session",
            Status.Code.UNIMPLEMENTED, "the server at this address is not a skyjo-ref referee",
            Status.Code.ABORTED, "another connection with the same token replaced this one");
    private static final Object STOP = new Object();
    /**
     * Netty's warnings that say nothing to a bot author, in every bot's log otherwise: gRPC sets SO_KEEPALIVE on every
     * connection, which does not apply to a Unix socket; without a network (a league's sandbox) no MAC address makes
     * the machine id. Kept in fields: the logging framework holds loggers weakly.
     */
    private static final Logger NETTY_BOOTSTRAP = quiet("io.grpc.netty.shaded.io.netty.bootstrap");
    private static final Logger NETTY_MAC = quiet("io.grpc.netty.shaded.io.netty.util.internal.MacAddressUtil");

    private static Logger quiet(String name) {
        Logger logger = Logger.getLogger(name);
        logger.setLevel(Level.SEVERE);
        return logger;
    }

    /** What a client did, for logs and tests. */
    public record Stats(int games, int decisions, int decideErrors, int strikes, int sessions) {}

    private final Bot bot;
    private final Endpoint endpoint;
    private final String token;
    private final TlsFiles tls;
    private final String name;
    private final String version;
    private final Duration giveUpAfter;
    private final boolean wantsEvents;
    private final boolean inline;

    private final CountDownLatch stopped = new CountDownLatch(1);
    private final CountDownLatch welcomed = new CountDownLatch(1);
    private volatile Session current;
    private volatile String seatName = "";

    // written by the thread that runs the bot's code, read by anyone (stats())
    private volatile int games;
    private volatile int decisions;
    private volatile int decideErrors;
    private volatile int strikes;
    private volatile int sessions;

    private final Map<String, GameStart> started = new HashMap<>();
    /** Decisions answered (or being answered) -> the reply, kept for a request the referee sends again. */
    private final LinkedHashMap<DecisionKey, DecisionReply> answers = new LinkedHashMap<>();

    private BotClient(Builder b) {
        this.bot = b.bot;
        this.endpoint = Endpoint.parse(b.address);
        this.token = b.token;
        TlsFiles files = TlsFiles.of(b.caFile, b.clientCert, b.clientKey);
        this.tls = endpoint.isUnix() ? null : files;
        this.name = b.name != null ? b.name : bot.name();
        this.version = b.version != null ? b.version : bot.version();
        this.giveUpAfter = b.giveUpAfter;
        this.inline = b.inline;
        this.wantsEvents = overrides(bot, "onEvent", Event.class);
    }

    /** A builder whose address, token and TLS files default to SKYJO_ADDR, SKYJO_TOKEN, SKYJO_CA_FILE, ... */
    public static Builder builder(Bot bot) {
        return new Builder(bot);
    }

    /** Settings of a {@link BotClient}; {@link #build()} checks them. */
    public static final class Builder {
        private final Bot bot;
        private String address = env("SKYJO_ADDR");
        private String token = env("SKYJO_TOKEN");
        private String caFile = env("SKYJO_CA_FILE");
        private String clientCert = env("SKYJO_CLIENT_CERT");
        private String clientKey = env("SKYJO_CLIENT_KEY");
        private String name;
        private String version;
        private Duration giveUpAfter = Duration.ofSeconds(60);
        private boolean inline = true;

        private Builder(Bot bot) {
            if (bot == null) {
                throw new IllegalArgumentException("no bot given");
            }
            this.bot = bot;
        }

        /** The referee: {@code HOST:PORT} or {@code unix:PATH} (default: SKYJO_ADDR). */
        public Builder address(String address) {
            this.address = address;
            return this;
        }

        /** The bot's token (default: SKYJO_TOKEN). */
        public Builder token(String token) {
            this.token = token;
            return this;
        }

        /** Speak TLS, trusting this CA (PEM) for the referee's certificate (default: SKYJO_CA_FILE). */
        public Builder caFile(String caFile) {
            this.caFile = caFile;
            return this;
        }

        /** This bot's certificate and key (PEM), for a referee that asks for one (default: SKYJO_CLIENT_CERT/KEY). */
        public Builder clientCertificate(String certFile, String keyFile) {
            this.clientCert = certFile;
            this.clientKey = keyFile;
            return this;
        }

        /** The name sent in Hello (default: {@link Bot#name()}). */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /** The version sent in Hello (default: {@link Bot#version()}). */
        public Builder version(String version) {
            this.version = version;
            return this;
        }

        /** Stop reconnecting after this long without a session (default 60 s). */
        public Builder giveUpAfter(Duration giveUpAfter) {
            this.giveUpAfter = giveUpAfter;
            return this;
        }

        /**
         * Where the bot's code runs. {@code true} (the default): on gRPC's network thread, as each message arrives:
         * the lowest latency, no thread hop. While {@code decide} runs, that thread answers no keepalive ping: the
         * referee drops a connection whose ping goes unanswered for about 30 s (20 s between pings, 10 s to answer),
         * so a bot that may think that long (only possible without a time limit) should pass {@code false}: its code
         * then runs on the thread that called {@link BotClient#run()}, one hop away, and the connection stays alive.
         */
        public Builder inline(boolean inline) {
            this.inline = inline;
            return this;
        }

        /** The client; an {@link IllegalArgumentException} says which setting is wrong and what is expected. */
        public BotClient build() {
            if (address == null || address.isBlank()) {
                throw new IllegalArgumentException("no referee address: pass --addr HOST:PORT or set SKYJO_ADDR");
            }
            if (token == null || token.isBlank()) {
                throw new IllegalArgumentException(
                        "no bot token: pass --token TOKEN or set SKYJO_TOKEN (skyjo-ref serve issues tokens)");
            }
            return new BotClient(this);
        }

        private static String env(String name) {
            String value = System.getenv(name);
            return value == null ? "" : value;
        }
    }

    /** The name the referee knows this bot's token by (empty until the first Welcome). */
    public String seatName() {
        return seatName;
    }

    /** Waits until the referee has answered Hello once; false if {@code timeout} passed first. */
    public boolean awaitWelcome(Duration timeout) throws InterruptedException {
        return welcomed.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Asks {@link #run()} to end (any thread, a signal handler's too): the stream is closed and run returns. */
    public void stop() {
        stopped.countDown();
        Session session = current;
        if (session != null) {
            session.inbox.add(STOP);
            session.channel.shutdownNow();
        }
    }

    private boolean isStopped() {
        return stopped.getCount() == 0;
    }

    /** Plays until the referee ends the session or {@link #stop()} is called; blocks, runs the bot's code. */
    public Stats run() throws SessionRefusedException, ConnectionLostException, InterruptedException {
        // one network thread, a daemon: a bot's thread count is capped in leagues (limits.processes)
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("skyjo-net", true),
                Epoll.isAvailable() ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
        if (endpoint.isUnix() && !Epoll.isAvailable()) {
            throw new ConnectionLostException("cannot reach " + endpoint + ": Unix domain sockets need netty's epoll "
                    + "transport, which did not load here: " + Epoll.unavailabilityCause());
        }
        try {
            int attempt = 0;
            long lostSince = System.nanoTime();
            while (!isStopped()) {
                int welcomedBefore = sessions;
                String outcome = oneSession(group);
                if (outcome == null || isStopped()) {
                    break;
                }
                if (sessions > welcomedBefore) {
                    attempt = 0;
                    lostSince = System.nanoTime();
                }
                double waited = (System.nanoTime() - lostSince) / 1e9;
                if (waited > giveUpAfter.toMillis() / 1000.0) {
                    throw new ConnectionLostException(String.format("no session with the referee at %s for %.0f s"
                            + " (%s): giving up%s", endpoint, waited, outcome, closedHint(outcome)));
                }
                double delay = Math.min(5.0, 0.1 * Math.pow(2, Math.min(attempt, 20)))
                        * ThreadLocalRandom.current().nextDouble(0.5, 1.0);
                attempt++;
                LOG.warning(String.format("stream to %s lost (%s); reconnecting in %.2f s", endpoint, outcome, delay));
                stopped.await((long) (delay * 1e9), TimeUnit.NANOSECONDS);
            }
        } finally {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
        }
        return stats();
    }

    /** What this client has done so far. */
    public Stats stats() {
        return new Stats(games, decisions, decideErrors, strikes, sessions);
    }

    private String closedHint(String outcome) {
        boolean closedAtOnce = outcome.contains("closed") || outcome.contains("reset") || outcome.contains("handshake")
                || outcome.contains("Handshake") || outcome.contains("SSL");
        if (!closedAtOnce) {
            return "";
        }
        if (tls == null && !endpoint.isUnix()) {
            return "; the referee closed the connection at once: if it serves TLS, set SKYJO_CA_FILE (--ca-file) to its CA";
        }
        if (tls != null && tls.cert() == null) {
            return "; the referee closed the connection at once: if it asks for client certificates, set "
                    + "SKYJO_CLIENT_CERT and SKYJO_CLIENT_KEY";
        }
        return "";
    }

    // ------------------------------------------------------------------ one stream

    /** One Play stream and what arrives on it; the network thread only queues, the session thread does the rest. */
    private final class Session implements ClientResponseObserver<PlayRequest, PlayResponse> {
        final ManagedChannel channel;
        final LinkedBlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
        ClientCallStreamObserver<PlayRequest> requests;
        /** Request ids grow within one referee's life; a restarted referee starts again. */
        long latestRequest;
        final Set<Long> struck = new HashSet<>();

        Session(ManagedChannel channel) {
            this.channel = channel;
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<PlayRequest> requestStream) {
            this.requests = requestStream;
        }

        @Override
        public void onNext(PlayResponse value) {
            if (inline) {
                receive(this, value);
            } else {
                inbox.add(value);
            }
        }

        @Override
        public void onError(Throwable t) {
            inbox.add(Status.fromThrowable(t));
        }

        @Override
        public void onCompleted() {
            inbox.add(Status.OK);
        }
    }

    private ManagedChannel channel(EventLoopGroup group) throws IOException {
        ChannelCredentials credentials = tls != null ? tls.credentials() : InsecureChannelCredentials.create();
        NettyChannelBuilder builder;
        if (endpoint.isUnix()) {
            builder = NettyChannelBuilder.forAddress(new DomainSocketAddress(endpoint.socketPath()), credentials)
                    .channelType(EpollDomainSocketChannel.class);
        } else {
            builder = NettyChannelBuilder.forAddress(endpoint.host(), endpoint.port(), credentials)
                    .channelType(Epoll.isAvailable() ? EpollSocketChannel.class : NioSocketChannel.class);
        }
        return builder.eventLoopGroup(group)
                .directExecutor() // the observer only queues: no thread hop before the session thread
                .keepAliveTime(KEEPALIVE_TIME.toMillis(), TimeUnit.MILLISECONDS)
                .keepAliveTimeout(KEEPALIVE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                .maxInboundMessageSize(MAX_RECEIVE_BYTES)
                .disableRetry()
                .build();
    }

    /** One Play stream until it ends: null when the session is over for good, else why it broke. */
    private String oneSession(EventLoopGroup group) throws SessionRefusedException, InterruptedException {
        ManagedChannel channel;
        try {
            channel = channel(group);
        } catch (IOException e) {
            throw new SessionRefusedException("cannot use the TLS files: " + e.getMessage());
        }
        Session session = new Session(channel);
        current = session;
        if (isStopped()) { // a stop() that came before current was set
            channel.shutdownNow();
            return null;
        }
        Metadata headers = new Metadata();
        headers.put(AUTHORIZATION, "Bearer " + token);
        int welcomedBefore = sessions;
        try {
            BotServiceGrpc.newStub(channel)
                    .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
                    .withMaxOutboundMessageSize(MAX_SEND_BYTES)
                    .play(session);
            session.requests.onNext(Convert.hello(name, version));
            LOG.fine(() -> "-> hello name=" + name + " version=" + version);
            while (true) {
                Object item = session.inbox.take();
                if (item == STOP) {
                    return null;
                }
                if (item instanceof Status status) {
                    return ended(status, welcomedBefore);
                }
                receive(session, (PlayResponse) item);
            }
        } finally {
            current = null;
            if (session.requests != null) {
                session.requests.cancel("the bot closed the session", null);
            }
            channel.shutdownNow();
        }
    }

    /** One message from the referee, on whichever thread runs the bot's code; a malformed one is logged and skipped. */
    private void receive(Session session, PlayResponse msg) {
        try {
            if (msg.getMessageCase() == PlayResponse.MessageCase.DECISION) {
                DecisionRequest request = msg.getDecision();
                // request ids are uint64: compared unsigned (an id past 2^63 is a negative long)
                if (Long.compareUnsigned(request.getRequestId(), session.latestRequest) > 0) {
                    session.latestRequest = request.getRequestId();
                }
                answer(request, session);
            } else {
                handle(msg, session.struck);
            }
        } catch (ProtocolException e) {
            LOG.severe("skipping a malformed " + msg.getMessageCase() + " message: " + e.getMessage());
        }
    }

    private String ended(Status status, int welcomedBefore) throws SessionRefusedException {
        if (isStopped()) {
            return null;
        }
        if (status.isOk()) {
            LOG.info("the referee ended the session");
            return null;
        }
        String fatal = FATAL.get(status.getCode());
        String details = status.getDescription() != null ? status.getDescription()
                : status.getCause() != null ? status.getCause().toString() : "";
        if (fatal != null) {
            throw new SessionRefusedException(fatal + ": " + status.getCode() + ": " + details);
        }
        return status.getCode() + ": " + details;
    }

    private void handle(PlayResponse msg, Set<Long> struck) {
        if (LOG.isLoggable(Level.FINE)) {
            LOG.fine("<- " + msg.getMessageCase() + " " + oneLine(msg));
        }
        switch (msg.getMessageCase()) {
            case WELCOME -> {
                seatName = msg.getWelcome().getSeatName();
                sessions++;
                welcomed.countDown();
                LOG.info("connected to " + endpoint + " as '" + seatName + "' (protocol "
                        + msg.getWelcome().getProtocolVersion() + ")");
            }
            case GAME_START -> {
                GameStart start = Convert.gameStart(msg.getGameStart());
                if (started.putIfAbsent(start.gameId(), start) == null) { // a re-sent GameStart is not news
                    hook("onGameStart", () -> bot.onGameStart(start));
                }
            }
            case EVENTS -> deliverEvents(msg.getEvents().getEventsList());
            case ROUND_RESULT -> {
                RoundResult result = Convert.roundResult(msg.getRoundResult());
                hook("onRoundResult", () -> bot.onRoundResult(result));
            }
            case GAME_OVER -> {
                GameResult result = Convert.gameResult(msg.getGameOver());
                started.remove(result.gameId());
                games++;
                hook("onGameOver", () -> bot.onGameOver(result));
            }
            case STRIKE -> {
                Strike strike = Convert.strike(msg.getStrike());
                struck.add(strike.requestId());
                strikes++;
                LOG.warning(String.format("strike %d/%d in game %s (request %d, %s): %s; the referee played %s",
                        strike.strikes(), strike.maxStrikes(), strike.gameId(), strike.requestId(), strike.reason(),
                        strike.detail(), strike.played().map(Action::toString).orElse("nothing")));
                hook("onStrike", () -> bot.onStrike(strike));
            }
            default -> LOG.fine(() -> "skipping unknown message " + msg.getMessageCase());
        }
    }

    private void deliverEvents(java.util.List<skyjo.v1.Event> events) {
        if (wantsEvents && !events.isEmpty()) {
            for (Event event : Convert.events(events)) {
                hook("onEvent", () -> bot.onEvent(event));
            }
        }
    }

    /** Runs a hook; its errors are logged, never fatal. */
    private void hook(String what, Runnable call) {
        try {
            call.run();
        } catch (OutOfMemoryError e) {
            SkyjoBot.outOfMemory(e);
        } catch (RuntimeException | StackOverflowError e) {
            LOG.log(Level.WARNING, bot.getClass().getSimpleName() + "." + what + " raised " + e, e);
        }
    }

    // ------------------------------------------------------------------ decisions

    /** What identifies a decision across a re-send: its id, game and view (not the time left or the events). */
    private record DecisionKey(long requestId, int legalCount, String gameId, ByteString view) {}

    private void answer(DecisionRequest request, Session session) {
        if (LOG.isLoggable(Level.FINE)) {
            LOG.fine("<- DECISION " + oneLine(request));
        }
        deliverEvents(request.getEventsList()); // events that came with the request go first
        long rid = request.getRequestId();
        DecisionKey key = new DecisionKey(rid, request.getLegalActionsCount(), request.getGameId(),
                request.getView().toByteString());
        DecisionReply reply = answers.get(key);
        if (reply == null) {
            reply = decide(request);
            answers.put(key, reply);
            while (answers.size() > ANSWERS_KEPT) {
                answers.remove(answers.keySet().iterator().next());
            }
        } else {
            LOG.info("decision " + rid + " came again (a reconnect): answering it as before");
        }
        if (session.struck.contains(rid) || Long.compareUnsigned(rid, session.latestRequest) < 0) {
            LOG.warning("decision " + rid + " came too late (the referee moved on); not sent");
            return;
        }
        session.requests.onNext(PlayRequest.newBuilder().setReply(reply).build());
        if (LOG.isLoggable(Level.FINE)) {
            LOG.fine("-> reply " + oneLine(reply));
        }
    }

    private DecisionReply decide(DecisionRequest request) {
        long rid = request.getRequestId();
        GameStart start = started.get(request.getGameId());
        if (start == null) {
            LOG.warning("decision " + rid + " for game '" + request.getGameId()
                    + "' that never started here; guessing players and rules");
            int n = request.getView().getGridsCount();
            start = new GameStart(request.getGameId(), request.getView().getSeat(),
                    java.util.stream.IntStream.range(0, n).mapToObj(i -> "seat " + i).toList(), Rules.OFFICIAL,
                    java.util.Optional.empty());
        }
        View view;
        try {
            view = Convert.view(request, start);
        } catch (ProtocolException e) {
            LOG.severe("decision " + rid + " is malformed: " + e.getMessage());
            return Convert.errorReply(rid, "the bot could not read the request: " + e.getMessage());
        }
        decisions++;
        Action action;
        try {
            action = bot.decide(view);
            if (action == null) {
                throw new IllegalStateException("decide returned null, expected an Action (one of view.legalActions())");
            }
        } catch (OutOfMemoryError e) {
            SkyjoBot.outOfMemory(e);
            throw e;
        } catch (Exception | StackOverflowError | AssertionError e) {
            decideErrors++;
            LOG.log(Level.WARNING, "decide raised on decision " + rid + " (" + describe(view) + ")", e);
            return Convert.errorReply(rid, e.getClass().getSimpleName() + ": " + e.getMessage() + raisedAt(e));
        }
        if (!view.isLegal(action)) {
            LOG.warning("decide chose " + action + ", which is not legal in decision " + rid + " (" + describe(view) + ")");
        }
        return Convert.reply(rid, action, view.legalActions());
    }

    /** {@code " (at MyBot.java:12 in decide)"}: the bot's innermost frame, not the SDK's, gRPC's nor the JDK's. */
    static String raisedAt(Throwable e) {
        StackTraceElement[] frames = e.getStackTrace();
        StackTraceElement found = frames.length > 0 ? frames[0] : null;
        for (StackTraceElement frame : frames) {
            if (!isLibrary(frame.getClassName())) {
                found = frame;
                break;
            }
        }
        if (found == null) {
            return "";
        }
        return " (at " + found.getFileName() + ":" + found.getLineNumber() + " in " + found.getMethodName() + ")";
    }

    /** Whether a class is the JDK's or the SDK's own (loaded from where this class was), not the bot's. */
    private static boolean isLibrary(String className) {
        if (className.startsWith("java.") || className.startsWith("jdk.") || className.startsWith("sun.")) {
            return true;
        }
        if (!className.startsWith("skyjo.bot.")) {
            return false;
        }
        try {
            Class<?> cls = Class.forName(className, false, BotClient.class.getClassLoader());
            var mine = BotClient.class.getProtectionDomain().getCodeSource();
            var theirs = cls.getProtectionDomain().getCodeSource();
            return mine != null && theirs != null && mine.getLocation().equals(theirs.getLocation());
        } catch (ClassNotFoundException | SecurityException | LinkageError err) {
            return false;
        }
    }

    private static String describe(View view) {
        return "round " + view.round() + ", seat " + view.seat() + ", " + view.decision().text() + ", hand "
                + (view.hand().isPresent() ? view.hand().getAsInt() : "none") + ", legal: "
                + String.join(", ", view.legalActions().stream().map(Action::toString).toList());
    }

    private static String oneLine(com.google.protobuf.MessageOrBuilder msg) {
        String text = com.google.protobuf.TextFormat.printer().emittingSingleLine(true).printToString(msg);
        return text.length() > 400 ? text.substring(0, 400) + "..." : text;
    }

    private static boolean overrides(Bot bot, String method, Class<?> parameter) {
        try {
            return bot.getClass().getMethod(method, parameter).getDeclaringClass() != Bot.class;
        } catch (NoSuchMethodException e) {
            return true;
        }
    }
}
