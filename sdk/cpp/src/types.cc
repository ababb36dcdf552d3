// The value types: actions and their text form, rules presets, grid and view helpers, addresses.
#include <cctype>
#include <sstream>

#include "skyjo/skyjo.h"

namespace skyjo {

namespace {

void check_pos(const char* kind, int pos) {
  if (pos < 0 || pos >= kGridSize) {
    throw InvalidAction(std::string(kind) + " needs a position 0-11 (pos = 4*row + col), got " +
                        std::to_string(pos));
  }
}

// The 150-card deck: value -> count.
const std::map<int, int>& deck_counts() {
  static const std::map<int, int> counts = [] {
    std::map<int, int> out{{-2, 5}, {-1, 10}, {0, 15}};
    for (int v = 1; v <= 12; ++v) out[v] = 10;
    return out;
  }();
  return counts;
}

}  // namespace

// ------------------------------------------------------------------------------------------- actions

Action Action::reveal(int pos) {
  check_pos("reveal", pos);
  return Action(ActionKind::Reveal, pos);
}

Action Action::swap(int pos) {
  check_pos("swap", pos);
  return Action(ActionKind::Swap, pos);
}

Action Action::draw() { return Action(ActionKind::Draw, std::nullopt); }
Action Action::take() { return Action(ActionKind::Take, std::nullopt); }

Action Action::parse(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  const std::string expected = "cannot read action '" + text + "': expected 'draw', 'take', 'reveal POS' or 'swap POS'";
  if (words.empty() || words.size() > 2) throw InvalidAction(expected);
  std::string kind = words[0];
  for (char& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (words.size() == 1) {
    if (kind == "draw") return draw();
    if (kind == "take") return take();
    if (kind == "reveal" || kind == "swap") throw InvalidAction(kind + " needs a position 0-11 (pos = 4*row + col)");
    throw InvalidAction(expected);
  }
  if (kind != "reveal" && kind != "swap") {
    if (kind == "draw" || kind == "take") throw InvalidAction(kind + " takes no position, got '" + words[1] + "'");
    throw InvalidAction(expected);
  }
  const std::string& number = words[1];
  bool digits = !number.empty() && number.size() <= 3;
  for (char c : number) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  if (!digits) {
    throw InvalidAction("cannot read action '" + text + "': position '" + number + "' is not a number 0-11");
  }
  int pos = std::stoi(number);
  return kind == "reveal" ? reveal(pos) : swap(pos);
}

std::string Action::to_string() const {
  std::string text = skyjo::to_string(kind_);
  if (pos_) text += " " + std::to_string(*pos_);
  return text;
}

const char* to_string(ActionKind kind) {
  switch (kind) {
    case ActionKind::Reveal: return "reveal";
    case ActionKind::Draw: return "draw";
    case ActionKind::Take: return "take";
    case ActionKind::Swap: return "swap";
  }
  return "?";
}

// --------------------------------------------------------------------------------------------- rules

const char* to_string(FinisherPenalty value) {
  switch (value) {
    case FinisherPenalty::DoubleIfPositive: return "double_if_positive";
    case FinisherPenalty::Double: return "double";
    case FinisherPenalty::Plus10: return "plus_10";
  }
  return "?";
}

const char* to_string(NextRoundStarter value) {
  switch (value) {
    case NextRoundStarter::Finisher: return "finisher";
    case NextRoundStarter::RoundWinner: return "round_winner";
    case NextRoundStarter::HighestReveal: return "highest_reveal";
  }
  return "?";
}

const char* to_string(FinalTie value) {
  switch (value) {
    case FinalTie::Shared: return "shared";
    case FinalTie::ExtraRound: return "extra_round";
  }
  return "?";
}

Rules Rules::preset_named(const std::string& name) {
  Rules rules;
  rules.preset = name;
  if (name == "official") return rules;
  if (name == "indonesian" || name == "turkish") {
    rules.finisher_penalty = FinisherPenalty::Double;
    rules.next_round_starter = NextRoundStarter::RoundWinner;
  } else if (name == "french") {
    rules.finisher_penalty = FinisherPenalty::Plus10;
    rules.next_round_starter = NextRoundStarter::HighestReveal;
  } else if (name == "slovenian") {
    rules.finisher_penalty = FinisherPenalty::Double;
    rules.next_round_starter = NextRoundStarter::HighestReveal;
    rules.final_tie = FinalTie::ExtraRound;
  } else {
    throw ProtocolError("unknown rules preset '" + name +
                        "': expected one of official, indonesian, turkish, french, slovenian");
  }
  return rules;
}

// ---------------------------------------------------------------------------------------------- view

const char* to_string(DecisionKind kind) {
  switch (kind) {
    case DecisionKind::OpeningReveal: return "opening_reveal";
    case DecisionKind::DrawOrTake: return "draw_or_take";
    case DecisionKind::SwapOrReveal: return "swap_or_reveal";
    case DecisionKind::SwapAfterTake: return "swap_after_take";
  }
  return "?";
}

const char* to_string(SlotState state) {
  switch (state) {
    case SlotState::Hidden: return "hidden";
    case SlotState::Revealed: return "revealed";
    case SlotState::Removed: return "removed";
  }
  return "?";
}

namespace {
std::vector<int> positions_where(const Grid& grid, bool (*keep)(SlotState)) {
  std::vector<int> out;
  for (int pos = 0; pos < kGridSize; ++pos) {
    if (keep(grid.states[static_cast<std::size_t>(pos)])) out.push_back(pos);
  }
  return out;
}
}  // namespace

std::vector<int> Grid::hidden_positions() const {
  return positions_where(*this, [](SlotState s) { return s == SlotState::Hidden; });
}

std::vector<int> Grid::revealed_positions() const {
  return positions_where(*this, [](SlotState s) { return s == SlotState::Revealed; });
}

std::vector<int> Grid::open_positions() const {
  return positions_where(*this, [](SlotState s) { return s != SlotState::Removed; });
}

int Grid::revealed_sum() const {
  int sum = 0;
  for (const auto& value : values) sum += value.value_or(0);
  return sum;
}

std::array<std::optional<int>, kRows> Grid::column(int column) const {
  if (column < 0 || column >= kColumns) throw std::out_of_range("column " + std::to_string(column) + ": expected 0-3");
  auto c = static_cast<std::size_t>(column);
  return {values[c], values[c + kColumns], values[c + 2 * kColumns]};
}

std::string Grid::render() const {
  std::ostringstream out;
  for (int row = 0; row < kRows; ++row) {
    for (int col = 0; col < kColumns; ++col) {
      auto pos = static_cast<std::size_t>(kColumns * row + col);
      std::string cell = states[pos] == SlotState::Hidden    ? "?"
                         : states[pos] == SlotState::Removed ? "."
                                                             : std::to_string(values[pos].value_or(0));
      out << (col ? " " : "") << std::string(cell.size() < 3 ? 3 - cell.size() : 0, ' ') << cell;
    }
    if (row + 1 < kRows) out << "\n";
  }
  return out.str();
}

std::optional<int> View::discard_top() const {
  if (discard_pile.empty()) return std::nullopt;
  return discard_pile.back();
}

bool View::is_legal(const Action& action) const {
  for (const Action& legal : legal_actions) {
    if (legal == action) return true;
  }
  return false;
}

std::map<int, int> View::unseen_cards() const {
  std::map<int, int> unseen = deck_counts();
  for (int card : discard_pile) --unseen[card];
  for (const Grid& grid : grids) {
    for (const auto& value : grid.values) {
      if (value) --unseen[*value];
    }
  }
  if (hand) --unseen[*hand];
  return unseen;
}

double View::expected_hidden_value() const {
  long sum = 0, count = 0;
  for (const auto& [value, n] : unseen_cards()) {
    sum += static_cast<long>(value) * n;
    count += n;
  }
  return count ? static_cast<double>(sum) / static_cast<double>(count) : 0.0;
}

// ------------------------------------------------------------------------------------------ addresses

std::string check_address(const std::string& text) {
  std::string address = text;
  while (!address.empty() && std::isspace(static_cast<unsigned char>(address.back()))) address.pop_back();
  while (!address.empty() && std::isspace(static_cast<unsigned char>(address.front()))) address.erase(0, 1);
  if (address.rfind("grpc://", 0) == 0) address = address.substr(7);
  if (address.rfind("unix:", 0) == 0) {
    if (address.find_first_not_of('/', 5) == std::string::npos) {
      throw std::invalid_argument("referee address '" + text +
                                  "': expected a socket path after unix:, e.g. unix:/tmp/referee.sock");
    }
    return address;
  }
  const std::string expected =
      "referee address '" + text + "': expected HOST:PORT, e.g. 127.0.0.1:50051 or [::1]:50051, or unix:PATH";
  auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) throw std::invalid_argument(expected);
  std::string host = address.substr(0, colon), port = address.substr(colon + 1);
  bool ok = !port.empty() && port.size() <= 5;
  for (char c : port) ok = ok && std::isdigit(static_cast<unsigned char>(c));
  if (host.front() == '[') {
    ok = ok && host.size() > 2 && host.back() == ']';
    for (std::size_t i = 1; ok && i + 1 < host.size(); ++i) {
      ok = std::isxdigit(static_cast<unsigned char>(host[i])) || host[i] == ':' || host[i] == '.';
    }
  } else {
    for (char c : host) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-');
  }
  if (!ok) throw std::invalid_argument(expected);
  if (std::stoi(port) > 65535) throw std::invalid_argument("referee address '" + text + "': the port must be 0-65535");
  return address;
}

}  // namespace skyjo
