// Reading the referee's messages into value types, checked as the Python SDK checks them (skyjo_bot.convert).
#include "convert.h"

namespace skyjo::convert {

namespace {

Rules rules(const v1::Rules& msg) {
  Rules out = Rules::preset_named(msg.preset().empty() ? "official" : msg.preset());
  if (msg.has_column_clear()) out.column_clear = msg.column_clear();
  if (msg.has_clear_on_final_reveal()) out.clear_on_final_reveal = msg.clear_on_final_reveal();
  switch (msg.finisher_penalty()) {
    case v1::FINISHER_PENALTY_DOUBLE_IF_POSITIVE: out.finisher_penalty = FinisherPenalty::DoubleIfPositive; break;
    case v1::FINISHER_PENALTY_DOUBLE: out.finisher_penalty = FinisherPenalty::Double; break;
    case v1::FINISHER_PENALTY_PLUS_10: out.finisher_penalty = FinisherPenalty::Plus10; break;
    default: break;  // unset: the preset's
  }
  switch (msg.next_round_starter()) {
    case v1::NEXT_ROUND_STARTER_FINISHER: out.next_round_starter = NextRoundStarter::Finisher; break;
    case v1::NEXT_ROUND_STARTER_ROUND_WINNER: out.next_round_starter = NextRoundStarter::RoundWinner; break;
    case v1::NEXT_ROUND_STARTER_HIGHEST_REVEAL: out.next_round_starter = NextRoundStarter::HighestReveal; break;
    default: break;
  }
  switch (msg.final_tie()) {
    case v1::FINAL_TIE_SHARED: out.final_tie = FinalTie::Shared; break;
    case v1::FINAL_TIE_EXTRA_ROUND: out.final_tie = FinalTie::ExtraRound; break;
    default: break;
  }
  if (msg.end_score() != 0) out.end_score = static_cast<int>(msg.end_score());
  return out;
}

Grid grid(const v1::Grid& msg, int index) {
  const std::string where = "grid " + std::to_string(index);
  if (msg.slots_size() != kGridSize) {
    throw ProtocolError(where + " has " + std::to_string(msg.slots_size()) + " slots, expected 12");
  }
  Grid out;
  for (int pos = 0; pos < kGridSize; ++pos) {
    const v1::Slot& slot = msg.slots(pos);
    auto p = static_cast<std::size_t>(pos);
    switch (slot.state()) {
      case v1::SLOT_STATE_HIDDEN: out.states[p] = SlotState::Hidden; break;
      case v1::SLOT_STATE_REVEALED: out.states[p] = SlotState::Revealed; break;
      case v1::SLOT_STATE_REMOVED: out.states[p] = SlotState::Removed; break;
      default:
        throw ProtocolError(where + " slot " + std::to_string(pos) + " has state " + std::to_string(slot.state()) +
                            ": expected hidden, revealed or removed");
    }
    if ((out.states[p] == SlotState::Revealed) != slot.has_value()) {
      throw ProtocolError(where + " slot " + std::to_string(pos) + " is " + to_string(out.states[p]) + " and " +
                          (slot.has_value() ? "has" : "lacks") + " a value: only revealed slots carry one");
    }
    if (slot.has_value()) out.values[p] = slot.value();
  }
  return out;
}

template <typename Repeated>
std::vector<int> ints(const Repeated& values) {
  return std::vector<int>(values.begin(), values.end());
}

std::optional<TimeControl> time_control(const v1::GameStart& msg) {
  if (!msg.has_time_control()) return std::nullopt;
  const auto& tc = msg.time_control();
  return TimeControl{tc.decision_ms(), tc.bank_ms(), tc.max_strikes(), tc.grace_ms()};
}

}  // namespace

GameStart game_start(const v1::GameStart& msg) {
  if (msg.players_size() == 0) throw ProtocolError("game start lists no players");
  if (msg.seat() >= static_cast<std::uint32_t>(msg.players_size())) {
    throw ProtocolError("game start gives seat " + std::to_string(msg.seat()) + " in a game of " +
                        std::to_string(msg.players_size()) + " players");
  }
  return GameStart{msg.game_id(), static_cast<int>(msg.seat()),
                   std::vector<std::string>(msg.players().begin(), msg.players().end()), rules(msg.rules()),
                   time_control(msg)};
}

Action action(const v1::Action& msg) {
  std::optional<int> pos;
  if (msg.has_pos()) pos = static_cast<int>(std::min<std::uint32_t>(msg.pos(), 1000));
  switch (msg.kind()) {
    case v1::ACTION_KIND_DRAW: return Action::draw();
    case v1::ACTION_KIND_TAKE: return Action::take();
    case v1::ACTION_KIND_REVEAL:
    case v1::ACTION_KIND_SWAP:
      if (!pos) throw InvalidAction("a reveal or swap needs a position: Action.pos is unset");
      return msg.kind() == v1::ACTION_KIND_REVEAL ? Action::reveal(*pos) : Action::swap(*pos);
    default:
      throw InvalidAction("action kind " + std::to_string(msg.kind()) +
                          " is not an action: expected ACTION_KIND_REVEAL, _DRAW, _TAKE or _SWAP");
  }
}

View view(const v1::DecisionRequest& msg, const GameStart& start) {
  const v1::View& in = msg.view();
  View out;
  out.game_id = msg.game_id();
  out.request_id = msg.request_id();
  switch (in.decision()) {
    case v1::DECISION_KIND_OPENING_REVEAL: out.decision = DecisionKind::OpeningReveal; break;
    case v1::DECISION_KIND_DRAW_OR_TAKE: out.decision = DecisionKind::DrawOrTake; break;
    case v1::DECISION_KIND_SWAP_OR_REVEAL: out.decision = DecisionKind::SwapOrReveal; break;
    case v1::DECISION_KIND_SWAP_AFTER_TAKE: out.decision = DecisionKind::SwapAfterTake; break;
    default:
      throw ProtocolError("view.decision is " + std::to_string(in.decision()) +
                          ": expected one of the four DecisionKind values");
  }
  const int n = in.grids_size();
  if (n != static_cast<int>(start.players.size())) {
    throw ProtocolError("view has " + std::to_string(n) + " grids for " + std::to_string(start.players.size()) +
                        " players");
  }
  if (in.seat() >= static_cast<std::uint32_t>(n)) {
    throw ProtocolError("view.seat " + std::to_string(in.seat()) + " is not a seat of this " + std::to_string(n) +
                        "-player game");
  }
  if (in.totals_size() != n) {
    throw ProtocolError("view has " + std::to_string(in.totals_size()) + " totals for " + std::to_string(n) +
                        " players");
  }
  if (msg.legal_actions_size() == 0) {
    throw ProtocolError("decision request " + std::to_string(msg.request_id()) + " lists no legal actions");
  }
  out.seat = static_cast<int>(in.seat());
  out.players = start.players;
  out.rules = start.rules;
  out.time_control = start.time_control;
  out.round = static_cast<int>(in.round());
  out.grids.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) out.grids.push_back(grid(in.grids(i), i));
  out.discard_pile = ints(in.discard_pile());
  out.draw_pile_size = static_cast<int>(in.draw_pile_size());
  if (in.has_hand()) out.hand = in.hand();
  out.totals = ints(in.totals());
  for (const auto& scores : in.round_scores()) out.round_scores.push_back(ints(scores.values()));
  if (in.has_finisher()) out.finisher = static_cast<int>(in.finisher());
  if (in.has_starter()) out.starter = static_cast<int>(in.starter());
  out.legal_actions.reserve(static_cast<std::size_t>(msg.legal_actions_size()));
  for (const auto& legal : msg.legal_actions()) out.legal_actions.push_back(action(legal));
  out.time_left_ms = msg.time_left_ms();
  return out;
}

Event event(const v1::Event& msg) {
  static const std::pair<const char*, EventKind> kinds[] = {
      {"round_start", EventKind::RoundStart},   {"reveal", EventKind::Reveal},
      {"draw", EventKind::Draw},                {"take", EventKind::Take},
      {"discard", EventKind::Discard},          {"swap", EventKind::Swap},
      {"column_cleared", EventKind::ColumnCleared}, {"reshuffle", EventKind::Reshuffle},
      {"turns_start", EventKind::TurnsStart},   {"round_finishing", EventKind::RoundFinishing},
      {"final_reveal", EventKind::FinalReveal},
  };
  Event out;
  out.name = msg.kind();
  for (const auto& [name, kind] : kinds) {
    if (out.name == name) out.kind = kind;
  }
  out.game_id = msg.game_id();
  if (msg.has_seat()) out.seat = static_cast<int>(msg.seat());
  if (msg.has_pos()) out.pos = static_cast<int>(msg.pos());
  if (msg.has_value()) out.value = msg.value();
  if (msg.has_replaced()) out.replaced = msg.replaced();
  if (msg.has_round()) out.round = static_cast<int>(msg.round());
  return out;
}

RoundResult round_result(const v1::RoundResult& msg) {
  return RoundResult{msg.game_id(),     static_cast<int>(msg.round()), static_cast<int>(msg.finisher()),
                     ints(msg.raw()), ints(msg.scores()),            ints(msg.totals())};
}

GameResult game_result(const v1::GameOver& msg) {
  return GameResult{msg.game_id(), ints(msg.totals()), ints(msg.ranks()), ints(msg.winners()), ints(msg.forfeits())};
}

Strike strike(const v1::Strike& msg) {
  Strike out{msg.game_id(), msg.request_id(), msg.reason(), msg.detail(), std::nullopt,
             static_cast<int>(msg.strikes()), static_cast<int>(msg.max_strikes())};
  if (msg.has_played()) {
    try {
      out.played = action(msg.played());
    } catch (const InvalidAction&) {
      // a played action this SDK cannot read is left out: the strike itself still counts
    }
  }
  return out;
}

v1::PlayRequest hello(const std::string& name, const std::string& version) {
  v1::PlayRequest msg;
  auto* hello = msg.mutable_hello();
  hello->set_name(name);
  hello->set_version(version);
  hello->set_protocol_version(kProtocolVersion);
  return msg;
}

v1::PlayRequest reply(std::uint64_t request_id, const Action& action, const View& view) {
  v1::PlayRequest msg;
  auto* reply = msg.mutable_reply();
  reply->set_request_id(request_id);
  for (std::size_t i = 0; i < view.legal_actions.size(); ++i) {
    if (view.legal_actions[i] == action) {
      reply->set_index(static_cast<std::uint32_t>(i));
      return msg;
    }
  }
  auto* spelled = reply->mutable_action();
  switch (action.kind()) {
    case ActionKind::Reveal: spelled->set_kind(v1::ACTION_KIND_REVEAL); break;
    case ActionKind::Draw: spelled->set_kind(v1::ACTION_KIND_DRAW); break;
    case ActionKind::Take: spelled->set_kind(v1::ACTION_KIND_TAKE); break;
    case ActionKind::Swap: spelled->set_kind(v1::ACTION_KIND_SWAP); break;
  }
  if (action.pos()) spelled->set_pos(static_cast<std::uint32_t>(*action.pos()));
  return msg;
}

v1::PlayRequest error_reply(std::uint64_t request_id, const std::string& reason) {
  v1::PlayRequest msg;
  msg.mutable_reply()->set_request_id(request_id);
  msg.mutable_reply()->set_error(reason.substr(0, 500));
  return msg;
}

}  // namespace skyjo::convert
