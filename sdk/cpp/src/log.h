// The SDK's log lines on stderr: "2026-12-05 17:20:01.123 skyjo INFO connected to ...". The level comes from
// SKYJO_LOG (error, warn, info (the default), debug, off).
#pragma once

#include <string>

namespace skyjo::log {

enum class Level { Off, Error, Warn, Info, Debug };

bool enabled(Level level);
void write(Level level, const std::string& text);
inline void error(const std::string& text) { write(Level::Error, text); }
inline void warn(const std::string& text) { write(Level::Warn, text); }
inline void info(const std::string& text) { write(Level::Info, text); }
inline void debug(const std::string& text) { write(Level::Debug, text); }

}  // namespace skyjo::log
