// __BOT_NAME__: a Skyjo bot on the skyjo-ref C++ SDK (skyjo-sdk/). Build with ./build, then:
//
//   skyjo-ref match cmd:out/bot greedy --games 20
//
// The SDK connects to the referee (SKYJO_ADDR, SKYJO_TOKEN), says Hello, plays game after game, reconnects,
// and ends on SIGTERM; you write decide (strategy.h) and, if you like, the hooks below.
#include <skyjo/skyjo.h>

#include "strategy.h"

class Bot : public skyjo::Bot {
 public:
  std::string name() const override { return "__BOT_NAME__"; }
  std::string version() const override { return "0.1.0"; }

  skyjo::Action decide(const skyjo::View& view) override { return reference_decide(view); }

  // Optional hooks: on_game_start, on_event, on_round_result, on_game_over, on_strike.
  void on_game_start(const skyjo::GameStart& start) override { (void)start; }
};

int main() {
  Bot bot;
  return skyjo::run(bot);
}
