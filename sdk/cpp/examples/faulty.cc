// A bot that fails on purpose (FAULT=throw|hang|oom), for the SDK's tests: a throwing decide becomes an error
// reply and play goes on; a hanging one is still ended by SIGTERM; out of memory under a limit exits 3.
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
};

int main() {
  Faulty bot;
  return skyjo::run(bot);
}
