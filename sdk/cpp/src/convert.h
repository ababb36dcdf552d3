// Between the generated protocol messages (skyjo::v1) and the SDK's value types. Internal to the SDK (and its
// tests): a bot sees only the value types of <skyjo/skyjo.h>.
#pragma once

#include <string>

#include "skyjo/skyjo.h"
#include "skyjo/v1/skyjo.pb.h"

namespace skyjo::convert {

// GameStart as the bot sees it; throws ProtocolError when it names no players or a seat outside them.
GameStart game_start(const v1::GameStart& msg);
// The View a request asks about, in the game `start` began; throws ProtocolError on a malformed request.
View view(const v1::DecisionRequest& msg, const GameStart& start);
Action action(const v1::Action& msg);
Event event(const v1::Event& msg);
RoundResult round_result(const v1::RoundResult& msg);
GameResult game_result(const v1::GameOver& msg);
Strike strike(const v1::Strike& msg);

v1::PlayRequest hello(const std::string& name, const std::string& version);
// A reply by index when `action` is among the legal actions, else spelled out.
v1::PlayRequest reply(std::uint64_t request_id, const Action& action, const View& view);
v1::PlayRequest error_reply(std::uint64_t request_id, const std::string& reason);

}  // namespace skyjo::convert
