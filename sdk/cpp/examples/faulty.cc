// A bot that fails on purpose (FAULT=throw|swap99|hang|oom), for the SDK's tests: a throwing decide becomes an
// error reply and play goes on; a hanging one is still ended by SIGTERM; out of memory under a limit exits 3.
// Without FAULT it plays the first legal action. At each game's end it writes what its hooks saw.
#include <skyjo/skyjo.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

class Faulty : public skyjo::Bot {
 public:
  std::string name() const override { return "faulty"; }
  skyjo::Action decide(const skyjo::View& view) override {
    const char* fault = std::getenv("FAULT");
    std::string kind = fault ? fault : "";
    if (kind == "throw") throw std::runtime_error("no idea what to do: the bot gave up");
    if (kind == "swap99") return skyjo::Action::swap(99);
    if (kind == "hang") {
      std::cerr << "deciding forever" << std::endl;
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
    }
    if (kind == "oom") {
      std::vector<std::vector<char>> hog;
      for (;;) hog.emplace_back(std::size_t(1) << 30, 'x');
    }
    return view.legal_actions.front();
  }

  void on_game_start(const skyjo::GameStart& start) override {
    ++starts_;
    seat_ = start.seat;
  }
  void on_event(const skyjo::Event& event) override { events_ += event.kind != skyjo::EventKind::Unknown; }
  void on_round_result(const skyjo::RoundResult&) override { ++rounds_; }
  void on_strike(const skyjo::Strike& strike) override { strikes_ += strike.played.has_value(); }
  void on_game_over(const skyjo::GameResult& result) override {
    std::cerr << "hooks: game_start " << starts_ << ", events " << events_ << ", round_results " << rounds_
              << ", strikes " << strikes_ << ", rank " << result.ranks.at(static_cast<std::size_t>(seat_)) << std::endl;
  }

 private:
  int starts_ = 0, events_ = 0, rounds_ = 0, strikes_ = 0, seat_ = 0;
};

int main() {
  Faulty bot;
  return skyjo::run(bot);
}
