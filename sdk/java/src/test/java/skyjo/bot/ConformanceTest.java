package skyjo.bot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.OptionalInt;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import skyjo.v1.PlayResponse;

/**
 * The repository's language-neutral vectors (conformance/README.md): every recorded request read into the View the
 * vector expects, and the reference strategy's answer to it, decision by decision, as the Python SDK's.
 */
class ConformanceTest {
    /** The vectors, found from this SDK's folder in the repository (sdk/java -> ../../conformance). */
    static final Path VECTORS = Path.of("..", "..", "conformance");

    private static JsonObject json(Path path) throws IOException {
        return JsonParser.parseString(Files.readString(path)).getAsJsonObject();
    }

    private static PlayResponse decode(JsonElement base64) throws IOException {
        return PlayResponse.parseFrom(Base64.getDecoder().decode(base64.getAsString()));
    }

    private static JsonElement optional(OptionalInt value) {
        return value.isPresent() ? new com.google.gson.JsonPrimitive(value.getAsInt()) : JsonNull.INSTANCE;
    }

    private static JsonArray ints(List<Integer> values) {
        JsonArray out = new JsonArray();
        values.forEach(out::add);
        return out;
    }

    /** The View as the vectors spell it: one key per thing a typed View offers. */
    static JsonObject spell(View view, GameStart start, long requestId) {
        JsonObject out = new JsonObject();
        out.addProperty("game_id", view.gameId());
        out.addProperty("request_id", requestId);
        out.addProperty("seat", view.seat());
        JsonArray players = new JsonArray();
        view.players().forEach(players::add);
        out.add("players", players);
        out.addProperty("num_players", view.numPlayers());
        JsonObject rules = new JsonObject();
        Rules r = view.rules();
        rules.addProperty("preset", r.preset());
        rules.addProperty("column_clear", r.columnClear());
        rules.addProperty("clear_on_final_reveal", r.clearOnFinalReveal());
        rules.addProperty("finisher_penalty", r.finisherPenalty().text());
        rules.addProperty("next_round_starter", r.nextRoundStarter().text());
        rules.addProperty("end_score", r.endScore());
        rules.addProperty("final_tie", r.finalTie().text());
        out.add("rules", rules);
        TimeControl tc = start.timeControl().orElseThrow();
        JsonObject time = new JsonObject();
        time.addProperty("decision_ms", tc.decisionMs());
        time.addProperty("bank_ms", tc.bankMs());
        time.addProperty("max_strikes", tc.maxStrikes());
        time.addProperty("grace_ms", tc.graceMs());
        out.add("time_control", time);
        out.addProperty("round", view.round());
        out.addProperty("decision", view.decision().text());
        JsonArray grids = new JsonArray();
        for (Grid grid : view.grids()) {
            JsonObject g = new JsonObject();
            JsonArray states = new JsonArray();
            JsonArray values = new JsonArray();
            for (int pos = 0; pos < Grid.SIZE; pos++) {
                states.add(grid.state(pos).text());
                values.add(optional(grid.value(pos)));
            }
            g.add("states", states);
            g.add("values", values);
            grids.add(g);
        }
        out.add("grids", grids);
        out.add("discard_pile", ints(view.discardPile()));
        out.add("discard_top", optional(view.discardTop()));
        out.addProperty("draw_pile_size", view.drawPileSize());
        out.add("hand", optional(view.hand()));
        out.add("totals", ints(view.totals()));
        JsonArray rounds = new JsonArray();
        view.roundScores().forEach(scores -> rounds.add(ints(scores)));
        out.add("round_scores", rounds);
        out.add("finisher", optional(view.finisher()));
        out.add("starter", optional(view.starter()));
        JsonArray legal = new JsonArray();
        view.legalActions().forEach(action -> legal.add(action.toString()));
        out.add("legal_actions", legal);
        out.addProperty("time_left_ms", view.timeLeftMs());
        return out;
    }

    @TestFactory
    Stream<DynamicTest> everyViewReadsAsTheVectorSays() throws IOException {
        JsonObject file = json(VECTORS.resolve("views.json"));
        assertEquals("skyjo-conformance/1", file.get("format").getAsString());
        List<DynamicTest> tests = new ArrayList<>();
        for (JsonElement element : file.getAsJsonArray("vectors")) {
            JsonObject vector = element.getAsJsonObject();
            tests.add(DynamicTest.dynamicTest(vector.get("name").getAsString(), () -> {
                GameStart start = Convert.gameStart(decode(vector.get("game_start")).getGameStart());
                skyjo.v1.DecisionRequest request = decode(vector.get("request")).getDecision();
                View view = Convert.view(request, start);
                JsonObject expected = vector.getAsJsonObject("view");
                JsonObject actual = spell(view, start, request.getRequestId());
                for (String key : expected.keySet()) {
                    assertEquals(expected.get(key), actual.get(key), "view." + key);
                }
                assertEquals(expected.keySet(), actual.keySet(), "the keys a typed View offers");
                assertEquals(vector.get("reference").getAsString(), new MinimalBot().decide(view).toString());
            }));
        }
        assertTrue(tests.size() >= 10, "too few vectors: " + tests.size());
        return tests.stream();
    }

    @TestFactory
    Stream<DynamicTest> everySeededGamePlaysTheReferenceMoves() throws IOException {
        List<DynamicTest> tests = new ArrayList<>();
        try (Stream<Path> files = Files.list(VECTORS.resolve("matches"))) {
            for (Path path : files.filter(p -> p.toString().endsWith(".json")).sorted().toList()) {
                tests.add(DynamicTest.dynamicTest(path.getFileName().toString(), () -> {
                    JsonObject match = json(path);
                    GameStart start = Convert.gameStart(decode(match.get("game_start")).getGameStart());
                    JsonArray decisions = match.getAsJsonArray("decisions");
                    assertTrue(decisions.size() > 20, "a whole game has more decisions");
                    MinimalBot bot = new MinimalBot();
                    int index = 0;
                    for (JsonElement element : decisions) {
                        JsonObject decision = element.getAsJsonObject();
                        View view = Convert.view(decode(decision.get("request")).getDecision(), start);
                        assertEquals(decision.get("reference").getAsString(), bot.decide(view).toString(),
                                "decision " + index);
                        index++;
                    }
                }));
            }
        }
        assertTrue(tests.size() >= 3, "too few seeded games: " + tests.size());
        return tests.stream();
    }
}
