// The SDK's own tests (ctest): the value types, and every conformance vector (../../conformance, written by
// scripts/gen_conformance.py): each recorded request read as its expected view and answered as the reference
// strategy (template/strategy.h) answers it; the seeded matches decision by decision.
//
//   sdk_tests types | views | matches
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "convert.h"
#include "strategy.h"

using nlohmann::json;

namespace {

int failures = 0;

#define CHECK(condition, what)                                                                   \
  do {                                                                                           \
    if (!(condition)) {                                                                          \
      ++failures;                                                                                \
      std::cerr << __FILE__ << ":" << __LINE__ << ": failed: " #condition " (" << what << ")\n"; \
    }                                                                                            \
  } while (0)

template <typename Fn>
bool throws(Fn&& fn, const std::string& fragment) {
  try {
    fn();
  } catch (const std::exception& error) {
    return std::string(error.what()).find(fragment) != std::string::npos;
  }
  return false;
}

std::string base64_decode(const std::string& text) {
  static const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=') break;
    auto index = alphabet.find(c);
    if (index == std::string::npos) throw std::invalid_argument("not base64: " + std::string(1, c));
    buffer = (buffer << 6) | static_cast<unsigned>(index);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xff));
    }
  }
  return out;
}

skyjo::v1::PlayResponse decode(const std::string& base64) {
  skyjo::v1::PlayResponse msg;
  if (!msg.ParseFromString(base64_decode(base64))) throw std::runtime_error("not a PlayResponse");
  return msg;
}

json load(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot read " + path + ": run the tests from the repository");
  return json::parse(file);
}

json optional_json(const std::optional<int>& value) { return value ? json(*value) : json(nullptr); }

// The View as the vectors spell it (conformance/README.md).
json view_json(const skyjo::View& view) {
  json grids = json::array();
  for (const auto& grid : view.grids) {
    json states = json::array(), values = json::array();
    for (int pos = 0; pos < skyjo::kGridSize; ++pos) {
      states.push_back(skyjo::to_string(grid.states[pos]));
      values.push_back(optional_json(grid.values[pos]));
    }
    grids.push_back({{"states", states}, {"values", values}});
  }
  json legal = json::array();
  for (const auto& action : view.legal_actions) legal.push_back(action.to_string());
  const auto& rules = view.rules;
  const auto& tc = view.time_control.value();
  return {
      {"game_id", view.game_id},
      {"request_id", view.request_id},
      {"seat", view.seat},
      {"num_players", view.num_players()},
      {"players", view.players},
      {"rules",
       {{"preset", rules.preset},
        {"column_clear", rules.column_clear},
        {"clear_on_final_reveal", rules.clear_on_final_reveal},
        {"finisher_penalty", skyjo::to_string(rules.finisher_penalty)},
        {"next_round_starter", skyjo::to_string(rules.next_round_starter)},
        {"end_score", rules.end_score},
        {"final_tie", skyjo::to_string(rules.final_tie)}}},
      {"time_control",
       {{"decision_ms", tc.decision_ms}, {"bank_ms", tc.bank_ms}, {"max_strikes", tc.max_strikes},
        {"grace_ms", tc.grace_ms}}},
      {"round", view.round},
      {"decision", skyjo::to_string(view.decision)},
      {"grids", grids},
      {"discard_pile", view.discard_pile},
      {"discard_top", optional_json(view.discard_top())},
      {"draw_pile_size", view.draw_pile_size},
      {"hand", optional_json(view.hand)},
      {"totals", view.totals},
      {"round_scores", view.round_scores},
      {"finisher", optional_json(view.finisher)},
      {"starter", optional_json(view.starter)},
      {"legal_actions", legal},
      {"time_left_ms", view.time_left_ms},
  };
}

void test_types() {
  using skyjo::Action;
  CHECK(Action::parse("swap 3") == Action::swap(3), "parse");
  CHECK(Action::parse(" Reveal  11 ").to_string() == "reveal 11", "case and spaces");
  CHECK(Action::draw().to_string() == "draw" && Action::take().to_string() == "take", "text form");
  CHECK(!Action::draw().pos() && Action::swap(7).pos() == 7, "positions");
  CHECK(throws([] { Action::swap(12); }, "needs a position 0-11"), "swap 12");
  CHECK(throws([] { Action::parse("swap x"); }, "is not a number 0-11"), "swap x");
  CHECK(throws([] { Action::parse("fly 3"); }, "expected 'draw', 'take', 'reveal POS' or 'swap POS'"), "fly");
  CHECK(throws([] { Action::parse("draw 3"); }, "takes no position"), "draw 3");
  CHECK(throws([] { Action::parse(""); }, "cannot read action"), "empty");

  skyjo::Grid grid;
  grid.states.fill(skyjo::SlotState::Hidden);
  grid.states[1] = grid.states[5] = skyjo::SlotState::Revealed;
  grid.values[1] = 7;
  grid.values[5] = -2;
  grid.states[3] = grid.states[7] = grid.states[11] = skyjo::SlotState::Removed;
  CHECK(grid.revealed_positions() == std::vector<int>({1, 5}), "revealed");
  CHECK(grid.hidden_positions().size() == 7 && grid.hidden_positions().front() == 0, "hidden");
  CHECK(grid.open_positions().size() == 9, "open");
  CHECK(grid.revealed_sum() == 5, "sum");
  CHECK(grid.column(1)[0] == 7 && grid.column(1)[1] == -2 && !grid.column(1)[2], "column");
  CHECK(grid.render() == "  ?   7   ?   .\n  ?  -2   ?   .\n  ?   ?   ?   .", grid.render());

  skyjo::View view;
  view.grids = {grid};
  view.discard_pile = {12, 3};
  view.hand = 12;
  view.legal_actions = {Action::draw(), Action::take()};
  auto unseen = view.unseen_cards();
  CHECK(unseen[12] == 8 && unseen[7] == 9 && unseen[-2] == 4 && unseen[3] == 9, "unseen cards");
  CHECK(view.discard_top() == 3 && view.is_legal(Action::take()) && !view.is_legal(Action::swap(0)), "view");
  CHECK(view.expected_hidden_value() > 4.0 && view.expected_hidden_value() < 6.0, view.expected_hidden_value());

  CHECK(skyjo::check_address("127.0.0.1:50051") == "127.0.0.1:50051", "host:port");
  CHECK(skyjo::check_address("grpc://[::1]:1") == "[::1]:1", "ipv6");
  CHECK(skyjo::check_address("unix:/tmp/r.sock") == "unix:/tmp/r.sock", "unix");
  CHECK(throws([] { skyjo::check_address("nowhere"); }, "expected HOST:PORT"), "no port");
  CHECK(throws([] { skyjo::check_address("h:70000"); }, "the port must be 0-65535"), "port");
  CHECK(throws([] { skyjo::check_address("unix:"); }, "expected a socket path"), "unix:");
  CHECK(skyjo::Rules::preset_named("slovenian").final_tie == skyjo::FinalTie::ExtraRound, "preset");
}

void test_views() {
  json data = load(std::string(SKYJO_CONFORMANCE_DIR) + "/views.json");
  CHECK(data["format"] == "skyjo-conformance/1", data["format"]);
  int count = 0;
  for (const auto& vector : data["vectors"]) {
    const std::string name = vector["name"];
    skyjo::GameStart start = skyjo::convert::game_start(decode(vector["game_start"]).game_start());
    skyjo::View view = skyjo::convert::view(decode(vector["request"]).decision(), start);
    json got = view_json(view);
    for (const auto& [key, expected] : vector["view"].items()) {
      CHECK(got.contains(key) && got[key] == expected,
            name << ": " << key << " is " << (got.contains(key) ? got[key].dump() : "missing") << ", expected "
                 << expected.dump());
    }
    CHECK(got.size() == vector["view"].size(), name << ": the view has keys the vector lacks");
    std::string answer = reference_decide(view).to_string();
    CHECK(answer == vector["reference"], name << ": answered " << answer << ", expected " << vector["reference"]);
    ++count;
  }
  CHECK(count >= 50, count);
  std::cout << "views: " << count << " vectors\n";
}

void test_matches() {
  int decisions = 0;
  for (const char* name : {"official-2p-vs-greedy", "french-3p", "slovenian-4p"}) {
    json match = load(std::string(SKYJO_CONFORMANCE_DIR) + "/matches/" + name + ".json");
    skyjo::GameStart start = skyjo::convert::game_start(decode(match["game_start"]).game_start());
    int index = 0;
    for (const auto& decision : match["decisions"]) {
      skyjo::View view = skyjo::convert::view(decode(decision["request"]).decision(), start);
      std::string answer = reference_decide(view).to_string();
      CHECK(answer == decision["reference"],
            name << " decision " << index << ": answered " << answer << ", expected " << decision["reference"]);
      ++index;
    }
    CHECK(index > 20, name << ": only " << index << " decisions");
    decisions += index;
  }
  std::cout << "matches: " << decisions << " decisions\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::string which = argc > 1 ? argv[1] : "";
  try {
    if (which == "types") {
      test_types();
    } else if (which == "views") {
      test_views();
    } else if (which == "matches") {
      test_matches();
    } else {
      std::cerr << "usage: sdk_tests types|views|matches\n";
      return 2;
    }
  } catch (const std::exception& error) {
    std::cerr << which << ": " << error.what() << "\n";
    return 1;
  }
  std::cout << which << ": " << (failures ? "FAILED" : "ok") << " (" << failures << " failures)\n";
  return failures ? 1 : 0;
}
