package skyjo.bot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import skyjo.v1.PlayRequest;
import skyjo.v1.PlayResponse;

/** The client against a scripted referee: a real gRPC server on a Unix socket (or loopback TCP). */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ClientTest {
    @TempDir
    Path tmp;

    /** Remembers what it saw; takes the discard (index 1) when asked to draw or take. */
    static final class Recorder implements Bot {
        final List<String> seen = new ArrayList<>();

        @Override
        public Action decide(View view) {
            seen.add("decide " + view.gameId() + " " + view.decision().text());
            return Action.take();
        }

        @Override
        public String version() {
            return "9.9";
        }

        @Override
        public void onGameStart(GameStart start) {
            seen.add("start " + start.gameId() + " seat " + start.seat());
        }

        @Override
        public void onEvent(Event event) {
            seen.add("event " + event.kind().text());
        }

        @Override
        public void onRoundResult(RoundResult result) {
            seen.add("round " + result.round());
        }

        @Override
        public void onGameOver(GameResult result) {
            seen.add("over " + result.gameId());
        }

        @Override
        public void onStrike(Strike strike) {
            seen.add("strike " + strike.reason());
        }
    }

    private static PlayResponse start(String gameId) {
        return PlayResponse.newBuilder().setGameStart(Protos.gameStart(gameId, 0, "me", "you")).build();
    }

    private static PlayResponse decision(long rid, String gameId) {
        return PlayResponse.newBuilder().setDecision(Protos.drawOrTake(rid, gameId).toBuilder()
                .addEvents(skyjo.v1.Event.newBuilder().setGameId(gameId).setKind("turns_start").setSeat(0))).build();
    }

    private static PlayResponse over(String gameId) {
        return PlayResponse.newBuilder().setGameOver(skyjo.v1.GameOver.newBuilder().setGameId(gameId)
                .addTotals(1).addTotals(2).addRanks(1).addRanks(2).addWinners(0)).build();
    }

    private static CompletableFuture<Object> runInBackground(BotClient client) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return client.run();
            } catch (Exception e) {
                return e;
            }
        });
    }

    @Test
    void playsGameAfterGameOverAUnixSocket() throws Exception {
        playsGameAfterGame(true);
    }

    @Test
    void playsGameAfterGameWithTheBotOnItsOwnThread() throws Exception {
        playsGameAfterGame(false);
    }

    private void playsGameAfterGame(boolean inline) throws Exception {
        try (FakeReferee referee = FakeReferee.unix(tmp.resolve("referee.sock"))) {
            List<PlayRequest> replies = new ArrayList<>();
            List<skyjo.v1.Hello> hellos = new ArrayList<>();
            referee.scripts.add(stream -> {
                hellos.add(stream.welcome("rec"));
                for (String game : List.of("g1", "g2")) {
                    stream.send(start(game));
                    stream.send(decision(game.equals("g1") ? 1 : 2, game));
                    replies.add(stream.next());
                    stream.send(PlayResponse.newBuilder().setRoundResult(skyjo.v1.RoundResult.newBuilder()
                            .setGameId(game).setRound(0)).build());
                    stream.send(over(game));
                }
                stream.out.onCompleted(); // the referee ends the session: the client returns
            });
            Recorder bot = new Recorder();
            BotClient client = BotClient.builder(bot).address(referee.address).token("tok-1234567890abcdef")
                    .inline(inline).build();
            BotClient.Stats stats = client.run();
            assertEquals(new BotClient.Stats(2, 2, 0, 0, 1), stats);
            assertEquals("rec", client.seatName());
            assertEquals("Bearer tok-1234567890abcdef", referee.streams.take().authorization);
            assertEquals(1, hellos.get(0).getProtocolVersion());
            assertEquals("Recorder", hellos.get(0).getName());
            assertEquals("9.9", hellos.get(0).getVersion());
            assertEquals(1, replies.get(0).getReply().getRequestId());
            assertEquals(1, replies.get(0).getReply().getIndex()); // take is legal action 1
            assertEquals(2, replies.get(1).getReply().getRequestId());
            assertEquals(List.of("start g1 seat 0", "event turns_start", "decide g1 draw_or_take", "round 0", "over g1",
                    "start g2 seat 0", "event turns_start", "decide g2 draw_or_take", "round 0", "over g2"), bot.seen);
        }
    }

    @Test
    void aDecideThatThrowsBecomesAnErrorReplyNamingTheLine() throws Exception {
        try (FakeReferee referee = FakeReferee.tcp()) {
            List<PlayRequest> replies = new ArrayList<>();
            referee.scripts.add(stream -> {
                stream.welcome("boom");
                stream.send(start("g1"));
                stream.send(decision(5, "g1"));
                replies.add(stream.next());
                stream.send(PlayResponse.newBuilder().setStrike(skyjo.v1.Strike.newBuilder().setGameId("g1")
                        .setRequestId(5).setReason("illegal").setDetail("error reply").setStrikes(1)
                        .setMaxStrikes(3)).build());
                stream.send(decision(6, "g1"));
                replies.add(stream.next());
                stream.out.onCompleted();
            });
            Bot bot = view -> {
                if (view.legalActions().size() == 2) {
                    throw new IllegalStateException("no idea what to do");
                }
                return Action.draw();
            };
            BotClient.Stats stats = BotClient.builder(bot).address(referee.address).token("t").build().run();
            String error = replies.get(0).getReply().getError();
            assertTrue(error.startsWith("IllegalStateException: no idea what to do (at ClientTest.java:"), error);
            assertTrue(error.endsWith("in lambda$aDecideThatThrowsBecomesAnErrorReplyNamingTheLine$2)")
                    || error.contains(" in lambda$"), error);
            assertEquals(6, replies.get(1).getReply().getRequestId()); // the bot goes on
            assertEquals(2, stats.decideErrors());
            assertEquals(1, stats.strikes());
        }
    }

    @Test
    void aRepeatedRequestAfterAReconnectIsAnsweredWithoutDecidingTwice() throws Exception {
        try (FakeReferee referee = FakeReferee.unix(tmp.resolve("r.sock"))) {
            List<PlayRequest> replies = new ArrayList<>();
            referee.scripts.add(stream -> {
                stream.welcome("again");
                stream.send(start("g1"));
                stream.send(decision(3, "g1"));
                replies.add(stream.next());
                stream.out.onError(Status.UNAVAILABLE.withDescription("the referee restarts").asRuntimeException());
            });
            referee.scripts.add(stream -> {
                stream.welcome("again");
                stream.send(start("g1")); // sent again on a new stream: not news to the bot
                stream.send(decision(3, "g1")); // the same pending decision (the time left differs)
                replies.add(stream.next());
                stream.send(over("g1"));
                stream.out.onCompleted();
            });
            Recorder bot = new Recorder();
            BotClient.Stats stats = BotClient.builder(bot).address(referee.address).token("t").build().run();
            assertEquals(2, stats.sessions());
            assertEquals(1, stats.decisions());
            assertEquals(replies.get(0), replies.get(1));
            assertEquals(List.of("start g1 seat 0", "event turns_start", "decide g1 draw_or_take", "event turns_start",
                    "over g1"), bot.seen);
        }
    }

    @Test
    void aRefusedTokenEndsWithSessionRefused() throws Exception {
        try (FakeReferee referee = FakeReferee.unix(tmp.resolve("r.sock"))) {
            referee.scripts.add(stream -> stream.out.onError(
                    Status.UNAUTHENTICATED.withDescription("unknown bot token").asRuntimeException()));
            BotClient client = BotClient.builder(view -> Action.draw()).address(referee.address).token("bad").build();
            SessionRefusedException e = assertThrows(SessionRefusedException.class, client::run);
            assertEquals("the referee refused the token: UNAUTHENTICATED: unknown bot token", e.getMessage());
        }
    }

    @Test
    void givesUpWithoutAReferee() {
        BotClient client = BotClient.builder(view -> Action.draw()).address("unix:" + tmp.resolve("nobody.sock"))
                .token("t").giveUpAfter(Duration.ofMillis(300)).build();
        ConnectionLostException e = assertThrows(ConnectionLostException.class, client::run);
        assertTrue(e.getMessage().startsWith("no session with the referee at unix:"), e.getMessage());
    }

    @Test
    void stopEndsAWaitingSession() throws Exception {
        try (FakeReferee referee = FakeReferee.unix(tmp.resolve("r.sock"))) {
            referee.scripts.add(stream -> {
                stream.welcome("idle");
                stream.in.take(); // waits for the bot to leave
            });
            BotClient client = BotClient.builder(view -> Action.draw()).address(referee.address).token("t").build();
            CompletableFuture<Object> running = runInBackground(client);
            assertTrue(client.awaitWelcome(Duration.ofSeconds(20)));
            client.stop();
            Object result = running.get(10, TimeUnit.SECONDS);
            assertEquals(new BotClient.Stats(0, 0, 0, 0, 1), result);
        }
    }

    @Test
    void badSettingsAreOneLineErrors() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> BotClient.builder(view -> Action.draw()).address("nowhere").token("t").build());
        assertEquals("referee address 'nowhere': expected HOST:PORT, e.g. 127.0.0.1:50051 or [::1]:50051, or unix:PATH",
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> BotClient.builder(view -> Action.draw())
                .address("127.0.0.1:1").token("t").caFile(tmp.resolve("missing.pem").toString()).build());
        assertTrue(e.getMessage().startsWith("CA file "), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> BotClient.builder(view -> Action.draw()).address("127.0.0.1:1").token("").build());
        assertTrue(e.getMessage().startsWith("no bot token"), e.getMessage());
    }
}
