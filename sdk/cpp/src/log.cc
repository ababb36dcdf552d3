#include "log.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <string_view>

namespace skyjo::log {

namespace {

Level configured() {
  static const Level level = [] {
    const char* text = std::getenv("SKYJO_LOG");
    std::string_view value = text ? text : "";
    if (value == "error") return Level::Error;
    if (value == "warn" || value == "warning") return Level::Warn;
    if (value == "debug" || value == "trace") return Level::Debug;
    if (value == "off") return Level::Off;
    return Level::Info;
  }();
  return level;
}

const char* label(Level level) {
  switch (level) {
    case Level::Error: return "ERROR";
    case Level::Warn: return "WARNING";
    case Level::Info: return "INFO";
    case Level::Debug: return "DEBUG";
    default: return "";
  }
}

}  // namespace

bool enabled(Level level) { return level != Level::Off && static_cast<int>(level) <= static_cast<int>(configured()); }

void write(Level level, const std::string& text) {
  if (!enabled(level)) return;
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &utc);
  static std::mutex mutex;  // whole lines, never interleaved
  std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(stderr, "%s.%03d skyjo %s %s\n", stamp, static_cast<int>(millis), label(level), text.c_str());
  std::fflush(stderr);
}

}  // namespace skyjo::log
