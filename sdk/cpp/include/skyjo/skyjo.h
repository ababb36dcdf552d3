// The skyjo-ref C++ SDK: write `decide`, the SDK speaks the protocol.
//
//   #include <skyjo/skyjo.h>
//   class MyBot : public skyjo::Bot {
//     skyjo::Action decide(const skyjo::View& view) override { return view.legal_actions.front(); }
//   };
//   int main() { MyBot bot; return skyjo::run(bot); }   // SKYJO_ADDR, SKYJO_TOKEN from the environment
//
// The vocabulary is the Python SDK's (skyjo_bot.types): plain value types, std::optional where a value may
// be absent (a hidden card, no hand, no finisher yet), enum classes for kinds. Grid positions are row-major,
// pos = 4*row + col (rows 0-2, columns 0-3); column c is positions c, c+4, c+8.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace skyjo {

inline constexpr int kRows = 3;
inline constexpr int kColumns = 4;
inline constexpr int kGridSize = kRows * kColumns;
inline constexpr std::uint32_t kProtocolVersion = 1;

// A string that does not spell an action, or a position outside 0-11.
class InvalidAction : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A message from the referee that breaks the protocol (a grid of 11 slots, a seat outside the game...).
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ------------------------------------------------------------------------------------------- actions

enum class ActionKind { Reveal, Draw, Take, Swap };

// One action, as in a game record: reveal and swap take a position, draw and take none.
class Action {
 public:
  static Action reveal(int pos);
  static Action swap(int pos);
  static Action draw();
  static Action take();
  // Reads "draw", "take", "reveal 5" or "swap 11"; throws InvalidAction naming what is expected.
  static Action parse(const std::string& text);

  ActionKind kind() const { return kind_; }
  std::optional<int> pos() const { return pos_; }
  // The text form parse reads: "swap 3".
  std::string to_string() const;

  bool operator==(const Action& other) const { return kind_ == other.kind_ && pos_ == other.pos_; }
  bool operator!=(const Action& other) const { return !(*this == other); }

 private:
  Action(ActionKind kind, std::optional<int> pos) : kind_(kind), pos_(pos) {}
  ActionKind kind_;
  std::optional<int> pos_;
};

const char* to_string(ActionKind kind);

// ------------------------------------------------------------------------------------------- rules

enum class FinisherPenalty { DoubleIfPositive, Double, Plus10 };
enum class NextRoundStarter { Finisher, RoundWinner, HighestReveal };
enum class FinalTie { Shared, ExtraRound };

const char* to_string(FinisherPenalty value);  // "double_if_positive", "double", "plus_10"
const char* to_string(NextRoundStarter value);  // "finisher", "round_winner", "highest_reveal"
const char* to_string(FinalTie value);          // "shared", "extra_round"

// The rules in force in a game (docs/rules.md): the preset's name and every option's value.
struct Rules {
  std::string preset = "official";
  bool column_clear = true;
  bool clear_on_final_reveal = true;
  FinisherPenalty finisher_penalty = FinisherPenalty::DoubleIfPositive;
  NextRoundStarter next_round_starter = NextRoundStarter::Finisher;
  int end_score = 100;
  FinalTie final_tie = FinalTie::Shared;

  // The preset's options (official, indonesian, turkish, french, slovenian); throws ProtocolError otherwise.
  static Rules preset_named(const std::string& name);
};

// How long a seat may think, and how many faults it may make, in one game (0: no limit / never / no grace).
struct TimeControl {
  std::uint32_t decision_ms = 0;
  std::uint32_t bank_ms = 0;
  std::uint32_t max_strikes = 0;
  std::uint32_t grace_ms = 0;
};

// --------------------------------------------------------------------------------------------- view

enum class DecisionKind { OpeningReveal, DrawOrTake, SwapOrReveal, SwapAfterTake };
enum class SlotState { Hidden, Revealed, Removed };

const char* to_string(DecisionKind kind);  // "opening_reveal", "draw_or_take", ...
const char* to_string(SlotState state);    // "hidden", "revealed", "removed"

// One player's 12 slots as everyone sees them: a hidden or removed slot has no value.
struct Grid {
  std::array<SlotState, kGridSize> states{};
  std::array<std::optional<int>, kGridSize> values{};

  std::vector<int> hidden_positions() const;    // ascending
  std::vector<int> revealed_positions() const;  // ascending
  std::vector<int> open_positions() const;      // not removed, ascending
  int revealed_sum() const;
  std::array<std::optional<int>, kRows> column(int column) const;  // top to bottom
  std::string render() const;  // three lines, "?" hidden, "." removed
};

// Everything one seat may know when a decision is due: the bot's whole world. Never a hidden card's value
// nor the draw pile's order.
struct View {
  std::string game_id;
  std::uint64_t request_id = 0;
  int seat = 0;
  std::vector<std::string> players;  // from GameStart, in seat order
  Rules rules;                       // from GameStart
  std::optional<TimeControl> time_control;  // from GameStart
  int round = 0;  // 0-based
  DecisionKind decision = DecisionKind::OpeningReveal;
  std::vector<Grid> grids;          // one per seat
  std::vector<int> discard_pile;    // bottom first; the top card is the last
  int draw_pile_size = 0;
  std::optional<int> hand;          // the card drawn or taken, when a swap decision is due
  std::vector<int> totals;          // game totals before this round
  std::vector<std::vector<int>> round_scores;  // finished rounds' scores, one list per round
  std::optional<int> finisher;      // the seat that ended the round, once one has
  std::optional<int> starter;       // who starts this round's turns; none during opening reveals
  std::vector<Action> legal_actions;  // what may be played, in the referee's order
  std::uint32_t time_left_ms = 0;   // time for this answer

  int num_players() const { return static_cast<int>(grids.size()); }
  const Grid& my_grid() const { return grids.at(static_cast<std::size_t>(seat)); }
  std::optional<int> discard_top() const;
  bool is_legal(const Action& action) const;
  // The multiset of cards this seat cannot see (hidden slots and the draw pile): value -> count.
  std::map<int, int> unseen_cards() const;
  double expected_hidden_value() const;
};

// ------------------------------------------------------------------------------------------- events

enum class EventKind {
  RoundStart, Reveal, Draw, Take, Discard, Swap, ColumnCleared, Reshuffle, TurnsStart, RoundFinishing,
  FinalReveal,
  Unknown,  // a kind this SDK does not know (later protocol versions may add some): see Event::name
};

// One public event at the table; only the fields its kind uses are set (docs/writing-a-bot.md, Events).
struct Event {
  EventKind kind = EventKind::Unknown;
  std::string name;  // the kind as sent: "swap", ...
  std::string game_id;
  std::optional<int> seat;
  std::optional<int> pos;  // for column_cleared: the column 0-3
  std::optional<int> value;  // for reshuffle: the new draw pile's size
  std::optional<int> replaced;
  std::optional<int> round;
};

struct GameStart {
  std::string game_id;
  int seat = 0;
  std::vector<std::string> players;
  Rules rules;
  std::optional<TimeControl> time_control;
};

struct RoundResult {
  std::string game_id;
  int round = 0;
  int finisher = 0;
  std::vector<int> raw;     // before the finisher penalty
  std::vector<int> scores;  // after it
  std::vector<int> totals;  // game totals after this round
};

struct GameResult {
  std::string game_id;
  std::vector<int> totals;
  std::vector<int> ranks;  // 1 = best, ties share
  std::vector<int> winners;
  std::vector<int> forfeits;
};

// The referee played for this seat because its answer (or silence) was at fault.
struct Strike {
  std::string game_id;
  std::uint64_t request_id = 0;  // 0 when the fault was not an answer to a request
  std::string reason;            // "timeout", "illegal" or "malformed"
  std::string detail;            // what was wrong and what was expected
  std::optional<Action> played;  // what the referee played instead
  int strikes = 0;
  int max_strikes = 0;
};

// ---------------------------------------------------------------------------------------------- bot

// Subclass and implement decide; the hooks are optional. They are called on one thread, in the order the
// referee's messages arrive: on_game_start, then on_event and decide as the game goes, on_round_result at
// each round's end, on_game_over. An exception from decide becomes an error reply with its text (the
// referee strikes the seat and plays its default action); the bot goes on. An exception from a hook is
// logged.
class Bot {
 public:
  virtual ~Bot() = default;
  virtual Action decide(const View& view) = 0;

  virtual std::string name() const { return "cpp-bot"; }  // sent in Hello (informational)
  virtual std::string version() const { return ""; }      // sent in Hello, kept in records' meta.bots

  virtual void on_game_start(const GameStart&) {}
  virtual void on_event(const Event&) {}
  virtual void on_round_result(const RoundResult&) {}
  virtual void on_game_over(const GameResult&) {}
  virtual void on_strike(const Strike&) {}
};

// How run reaches the referee; empty fields are read from the environment.
struct Options {
  std::string addr;         // HOST:PORT or unix:PATH (SKYJO_ADDR)
  std::string token;        // SKYJO_TOKEN
  std::string ca_file;      // the referee's CA, PEM: speak TLS (SKYJO_CA_FILE)
  std::string client_cert;  // this bot's certificate for mutual TLS (SKYJO_CLIENT_CERT)
  std::string client_key;   // its key (SKYJO_CLIENT_KEY)
  double give_up_after_s = 60.0;  // stop reconnecting after this long without a session
  double backoff_base_s = 0.1;    // reconnect delays: base doubling to max, times a random 0.5-1
  double backoff_max_s = 5.0;
};

// Exit codes run returns (docs/writing-a-bot.md): main returns them.
inline constexpr int kExitOk = 0;          // the referee ended the session, or SIGTERM/SIGINT/parent gone
inline constexpr int kExitRefused = 1;     // the referee refused the token or session, or gave up reconnecting
inline constexpr int kExitUsage = 2;       // no address or token, a bad address, an unreadable TLS file
inline constexpr int kExitOutOfMemory = 3; // decide ran out of memory under a memory limit (RLIMIT_AS)

// Plays bot on the referee until the session ends; returns the exit code. SIGTERM and SIGINT (and the death
// of SKYJO_PARENT_PID) close the session and return 0; if that takes more than 0.75 s (a decide that
// blocks), the process exits with status 0 at once. Logs go to stderr (SKYJO_LOG: error, warn, info
// (default), debug).
int run(Bot& bot, Options options = {});

// ---------------------------------------------------------------------------------------- utilities

// Checks a referee address: returns it without a grpc:// prefix, throws std::invalid_argument naming what is
// wrong and what is expected.
std::string check_address(const std::string& text);

}  // namespace skyjo
