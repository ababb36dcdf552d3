// skyjo::run: one BotService.Play stream after another until the session ends (docs/writing-a-bot.md).
//
// Threads: the caller's thread connects, reads and calls the bot (decide inline: no thread hop per decision);
// one thread takes SIGTERM/SIGINT (sigwait) and one watches SKYJO_PARENT_PID (a pidfd). Either stops the
// session by cancelling the live call and waking the backoff pause; if the caller's thread has not finished
// 0.75 s later (a decide that blocks), the process exits with status 0 at once.
#include <cxxabi.h>
#include <grpcpp/grpcpp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>
#include <typeinfo>
#include <unordered_map>

#include "convert.h"
#include "log.h"
#include "skyjo/v1/skyjo.grpc.pb.h"

namespace skyjo {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kStopDeadline = std::chrono::milliseconds(750);

// Statuses after which reconnecting cannot help.
const char* fatal_reason(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED: return "the referee refused the token";
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::FAILED_PRECONDITION: return "the referee refused the session";
    case grpc::StatusCode::UNIMPLEMENTED: return "the server at this address is not a skyjo-ref referee";
    case grpc::StatusCode::ABORTED: return "another connection with the same token replaced this one";
    default: return nullptr;
  }
}

const char* code_name(grpc::StatusCode code) {
  static const char* names[] = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
                                "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
                                "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
                                "UNAUTHENTICATED"};
  auto index = static_cast<std::size_t>(code);
  return index < sizeof(names) / sizeof(names[0]) ? names[index] : "UNKNOWN";
}

// The stop switch shared with the signal and parent threads (which may outlive run: shared_ptr).
struct Stopper {
  std::mutex mutex;
  std::condition_variable changed;
  bool stopping = false;
  bool finished = false;  // run returned: the deadline does nothing
  grpc::ClientContext* live = nullptr;
  std::string why;

  void stop(const std::string& reason, std::shared_ptr<Stopper> self) {
    std::lock_guard<std::mutex> lock(mutex);
    if (stopping || finished) return;
    stopping = true;
    why = reason;
    if (live != nullptr) live->TryCancel();
    changed.notify_all();
    std::thread([self] { self->deadline(); }).detach();
  }

  void deadline() {
    std::unique_lock<std::mutex> lock(mutex);
    if (changed.wait_for(lock, kStopDeadline, [this] { return finished; })) return;
    log::warn(why + ": the session did not close within 0.75 s; exiting now");
    std::fflush(stderr);
    std::_Exit(0);
  }
};

std::string read_pem(const std::string& path, const char* what, const char* variable) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::invalid_argument(std::string(what) + " " + path + " (" + variable + "): cannot read it");
  std::stringstream text;
  text << file.rdbuf();
  if (!file || text.str().find("-----BEGIN ") == std::string::npos) {
    throw std::invalid_argument(std::string(what) + " " + path + " (" + variable +
                                "): not PEM: expected '-----BEGIN ...' lines");
  }
  return text.str();
}

std::string from_env(const std::string& given, const char* variable) {
  if (!given.empty()) return given;
  const char* value = std::getenv(variable);
  return value ? value : "";
}

// Whether pid is our parent, or its parent and so on (a bot started through a shell).
bool is_ancestor(pid_t pid) {
  pid_t current = getppid();
  for (int i = 0; i < 64; ++i) {
    if (current == pid) return true;
    if (current <= 1) return false;
    std::ifstream stat("/proc/" + std::to_string(current) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    auto close = text.rfind(')');
    if (close == std::string::npos) return false;
    std::istringstream rest(text.substr(close + 1));
    std::string state;
    long ppid = 0;
    if (!(rest >> state >> ppid)) return false;
    current = static_cast<pid_t>(ppid);
  }
  return false;
}

void wait_for_parent_exit(pid_t pid) {
  long fd = syscall(SYS_pidfd_open, pid, 0);
  if (fd >= 0) {
    if (is_ancestor(pid)) {  // checked after opening: it cannot have died unseen in between
      pollfd watched{static_cast<int>(fd), POLLIN, 0};
      while (poll(&watched, 1, -1) < 0 && errno == EINTR) {
      }
    }
    ::close(static_cast<int>(fd));
    return;
  }
  while (is_ancestor(pid)) std::this_thread::sleep_for(std::chrono::milliseconds(200));  // no pidfds: poll
}

std::string exception_type() {
  std::type_info* type = abi::__cxa_current_exception_type();
  if (type == nullptr) return "exception";
  int status = 0;
  char* name = abi::__cxa_demangle(type->name(), nullptr, nullptr, &status);
  std::string out = status == 0 && name ? name : type->name();
  std::free(name);
  return out;
}

bool under_memory_limit() {
  rlimit limit{};
  return getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY;
}

std::string describe(const View& view) {
  std::string legal;
  for (const Action& action : view.legal_actions) legal += (legal.empty() ? "" : ", ") + action.to_string();
  return "round " + std::to_string(view.round) + ", seat " + std::to_string(view.seat) + ", " +
         to_string(view.decision) + ", hand " + (view.hand ? std::to_string(*view.hand) : "none") + ", legal: " + legal;
}

// An answer kept for a request the referee may send again after a reconnect.
struct Remembered {
  std::uint64_t request_id;
  std::string game_id;
  int legal_count;
  std::string view;  // the serialized view: a restarted referee counts request ids from 1 again
  v1::PlayRequest reply;
};

class Client {
 public:
  Client(Bot& bot, Options options, std::shared_ptr<Stopper> stopper)
      : bot_(bot), options_(std::move(options)), stopper_(std::move(stopper)) {}

  int run();

 private:
  enum class Outcome { Closed, Stopped, Lost, Fatal };
  Outcome session(std::string& detail);
  std::shared_ptr<grpc::Channel> channel() const;
  void handle(const v1::PlayResponse& msg, grpc::ClientReaderWriter<v1::PlayRequest, v1::PlayResponse>& stream);
  v1::PlayRequest answer(const v1::DecisionRequest& request);
  v1::PlayRequest decide(const v1::DecisionRequest& request);
  template <typename Fn>
  void hook(const char* name, Fn&& fn);
  bool stopping() {
    std::lock_guard<std::mutex> lock(stopper_->mutex);
    return stopper_->stopping;
  }

  Bot& bot_;
  Options options_;
  std::shared_ptr<Stopper> stopper_;
  std::shared_ptr<grpc::ChannelCredentials> credentials_;
  std::unordered_map<std::string, GameStart> games_;
  std::deque<Remembered> answers_;
  int sessions_ = 0, games_played_ = 0, decisions_ = 0, decide_errors_ = 0, strikes_ = 0;

 public:
  // Checks the address, token and TLS files; throws std::invalid_argument naming what is wrong.
  void prepare();
  std::string summary() const {
    return "played " + std::to_string(games_played_) + " games, " + std::to_string(decisions_) + " decisions (" +
           std::to_string(decide_errors_) + " decide errors, " + std::to_string(strikes_) + " strikes)";
  }
};

void Client::prepare() {
  options_.addr = from_env(options_.addr, "SKYJO_ADDR");
  options_.token = from_env(options_.token, "SKYJO_TOKEN");
  if (options_.addr.empty()) throw std::invalid_argument("no referee address: set SKYJO_ADDR (HOST:PORT or unix:PATH)");
  if (options_.token.empty()) {
    throw std::invalid_argument("no bot token: set SKYJO_TOKEN (skyjo-ref serve issues tokens)");
  }
  options_.addr = check_address(options_.addr);
  std::string ca = from_env(options_.ca_file, "SKYJO_CA_FILE");
  std::string cert = from_env(options_.client_cert, "SKYJO_CLIENT_CERT");
  std::string key = from_env(options_.client_key, "SKYJO_CLIENT_KEY");
  if (ca.empty()) {
    if (!cert.empty() || !key.empty()) {
      throw std::invalid_argument(
          "a client certificate needs TLS: set SKYJO_CA_FILE (the CA that signed the referee's certificate)");
    }
    credentials_ = grpc::InsecureChannelCredentials();
    return;
  }
  if (cert.empty() != key.empty()) {
    throw std::invalid_argument(std::string("a client certificate needs both its certificate and its key: set ") +
                                (cert.empty() ? "SKYJO_CLIENT_CERT" : "SKYJO_CLIENT_KEY"));
  }
  grpc::SslCredentialsOptions tls;
  tls.pem_root_certs = read_pem(ca, "CA file", "SKYJO_CA_FILE");
  if (!cert.empty()) {
    tls.pem_cert_chain = read_pem(cert, "client certificate", "SKYJO_CLIENT_CERT");
    tls.pem_private_key = read_pem(key, "client key", "SKYJO_CLIENT_KEY");
  }
  // a unix: address never uses TLS (the files are still checked: a typo is said at once)
  credentials_ = options_.addr.rfind("unix:", 0) == 0 ? grpc::InsecureChannelCredentials() : grpc::SslCredentials(tls);
}

std::shared_ptr<grpc::Channel> Client::channel() const {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 30000);  // the referee allows a ping every 10 s; we ping every 30 s
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  args.SetInt(GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, 1 << 20);
  args.SetInt(GRPC_ARG_MAX_SEND_MESSAGE_LENGTH, 64 << 10);
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  // a fresh channel per session with its own subchannel: gRPC's own reconnect backoff (up to 120 s) is not
  // carried over from a broken connection; the SDK's backoff decides when to try again
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
  return grpc::CreateCustomChannel(options_.addr, credentials_, args);
}

int Client::run() {
  std::mt19937 random(std::random_device{}());
  int attempt = 0;
  auto lost_since = Clock::now();
  while (!stopping()) {
    int welcomed_before = sessions_;
    std::string detail;
    Outcome outcome = session(detail);
    if (outcome == Outcome::Closed) {
      log::info("the referee ended the session");
      return kExitOk;
    }
    if (outcome == Outcome::Stopped || stopping()) return kExitOk;
    if (outcome == Outcome::Fatal) {
      std::cerr << "error: " << detail << std::endl;
      return kExitRefused;
    }
    if (sessions_ > welcomed_before) attempt = 0, lost_since = Clock::now();
    double waited = std::chrono::duration<double>(Clock::now() - lost_since).count();
    if (waited > options_.give_up_after_s) {
      std::cerr << "error: no session with the referee at " << options_.addr << " for "
                << static_cast<int>(waited) << " s (" << detail << "): giving up" << std::endl;
      return kExitRefused;
    }
    double delay = std::min(options_.backoff_max_s, options_.backoff_base_s * double(1u << std::min(attempt, 20))) *
                   std::uniform_real_distribution<double>(0.5, 1.0)(random);
    ++attempt;
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.2f", delay);
    log::warn("stream to " + options_.addr + " lost (" + detail + "); reconnecting in " + seconds + " s");
    std::unique_lock<std::mutex> lock(stopper_->mutex);
    stopper_->changed.wait_for(lock, std::chrono::duration<double>(delay), [this] { return stopper_->stopping; });
  }
  return kExitOk;
}

Client::Outcome Client::session(std::string& detail) {
  auto stub = v1::BotService::NewStub(channel());
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + options_.token);
  {
    std::lock_guard<std::mutex> lock(stopper_->mutex);
    if (stopper_->stopping) return Outcome::Stopped;
    stopper_->live = &context;
  }
  int welcomed_before = sessions_;
  auto stream = stub->Play(&context);
  std::string name = bot_.name(), version = bot_.version();
  if (stream->Write(convert::hello(name, version))) {
    log::debug("-> hello name=" + name + " version=" + version);
    v1::PlayResponse msg;
    while (stream->Read(&msg)) handle(msg, *stream);
  }
  grpc::Status status = stream->Finish();
  {
    std::lock_guard<std::mutex> lock(stopper_->mutex);
    stopper_->live = nullptr;
    if (stopper_->stopping) return Outcome::Stopped;
  }
  if (status.ok()) return Outcome::Closed;
  grpc::StatusCode code = status.error_code();
  if (const char* fatal = fatal_reason(code)) {
    // ABORTED after a Welcome is a replacement; before one, as the others: the referee's final word
    detail = std::string(fatal) + ": " + code_name(code) + ": " + status.error_message();
    return Outcome::Fatal;
  }
  (void)welcomed_before;
  detail = std::string(code_name(code)) + ": " + status.error_message();
  return Outcome::Lost;
}

template <typename Fn>
void Client::hook(const char* name, Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& error) {
    log::error(std::string(name) + " threw " + exception_type() + ": " + error.what());
  } catch (...) {
    log::error(std::string(name) + " threw " + exception_type());
  }
}

void Client::handle(const v1::PlayResponse& msg,
                    grpc::ClientReaderWriter<v1::PlayRequest, v1::PlayResponse>& stream) {
  if (log::enabled(log::Level::Debug)) log::debug("<- " + msg.ShortDebugString().substr(0, 400));
  switch (msg.message_case()) {
    case v1::PlayResponse::kDecision: {
      for (const auto& event : msg.decision().events()) {  // events that came with the request go first
        hook("on_event", [&] { bot_.on_event(convert::event(event)); });
      }
      v1::PlayRequest reply = answer(msg.decision());
      if (!stream.Write(reply)) log::debug("reply not sent: the stream is gone");
      break;
    }
    case v1::PlayResponse::kEvents:
      for (const auto& event : msg.events().events()) hook("on_event", [&] { bot_.on_event(convert::event(event)); });
      break;
    case v1::PlayResponse::kGameStart: {
      GameStart start;
      try {
        start = convert::game_start(msg.game_start());
      } catch (const std::exception& error) {
        log::error(std::string("a malformed game start: ") + error.what());
        break;
      }
      if (games_.count(start.game_id)) break;  // sent again after a reconnect: not news
      games_[start.game_id] = start;
      hook("on_game_start", [&] { bot_.on_game_start(start); });
      break;
    }
    case v1::PlayResponse::kRoundResult:
      hook("on_round_result", [&] { bot_.on_round_result(convert::round_result(msg.round_result())); });
      break;
    case v1::PlayResponse::kGameOver: {
      GameResult result = convert::game_result(msg.game_over());
      games_.erase(result.game_id);
      ++games_played_;
      std::string totals;
      for (int total : result.totals) totals += (totals.empty() ? "" : " ") + std::to_string(total);
      log::info("game " + result.game_id + " over: totals " + totals);
      hook("on_game_over", [&] { bot_.on_game_over(result); });
      break;
    }
    case v1::PlayResponse::kStrike: {
      Strike strike = convert::strike(msg.strike());
      ++strikes_;
      log::warn("strike " + std::to_string(strike.strikes) + "/" + std::to_string(strike.max_strikes) + " in game " +
                strike.game_id + " (request " + std::to_string(strike.request_id) + ", " + strike.reason + "): " +
                strike.detail + "; the referee played " + (strike.played ? strike.played->to_string() : "nothing"));
      hook("on_strike", [&] { bot_.on_strike(strike); });
      break;
    }
    case v1::PlayResponse::kWelcome:
      ++sessions_;
      log::info("connected to " + options_.addr + " as '" + msg.welcome().seat_name() + "' (protocol " +
                std::to_string(msg.welcome().protocol_version()) + ")");
      break;
    default:
      log::debug("skipping an unknown message");
      break;
  }
}

v1::PlayRequest Client::answer(const v1::DecisionRequest& request) {
  std::string view;
  for (const Remembered& kept : answers_) {
    if (kept.request_id != request.request_id() || kept.game_id != request.game_id() ||
        kept.legal_count != request.legal_actions_size()) {
      continue;
    }
    if (view.empty()) request.view().SerializeToString(&view);
    if (kept.view == view) {
      log::info("decision " + std::to_string(request.request_id()) + " sent again: answering it without deciding");
      return kept.reply;
    }
  }
  v1::PlayRequest reply = decide(request);
  if (view.empty()) request.view().SerializeToString(&view);
  answers_.push_back(Remembered{request.request_id(), request.game_id(), request.legal_actions_size(),
                                std::move(view), reply});
  if (answers_.size() > 8) answers_.pop_front();
  return reply;
}

v1::PlayRequest Client::decide(const v1::DecisionRequest& request) {
  std::uint64_t rid = request.request_id();
  auto found = games_.find(request.game_id());
  GameStart guessed;
  if (found == games_.end()) {
    log::warn("decision " + std::to_string(rid) + " for game '" + request.game_id() +
              "' that never started here; guessing players and rules");
    guessed.game_id = request.game_id();
    guessed.seat = static_cast<int>(request.view().seat());
    for (int i = 0; i < request.view().grids_size(); ++i) guessed.players.push_back("seat " + std::to_string(i));
  }
  const GameStart& start = found == games_.end() ? guessed : found->second;
  View view;
  try {
    view = convert::view(request, start);
  } catch (const std::exception& error) {
    log::error("decision " + std::to_string(rid) + " is malformed: " + error.what());
    return convert::error_reply(rid, std::string("the bot could not read the request: ") + error.what());
  }
  ++decisions_;
  std::string failure;
  try {
    Action action = bot_.decide(view);
    if (!view.is_legal(action)) {
      log::warn("decide chose " + action.to_string() + ", which is not legal in decision " + std::to_string(rid) +
                " (" + describe(view) + ")");
    }
    return convert::reply(rid, action, view);
  } catch (const std::bad_alloc&) {
    if (under_memory_limit()) {
      static const char text[] = "skyjo: out of memory (std::bad_alloc in decide) under a memory limit: exiting\n";
      (void)!write(2, text, sizeof text - 1);
      std::_Exit(kExitOutOfMemory);
    }
    failure = "std::bad_alloc: out of memory";
  } catch (const std::exception& error) {
    failure = exception_type() + ": " + error.what();
  } catch (...) {
    failure = exception_type() + " (not a std::exception)";
  }
  ++decide_errors_;
  log::error("decide threw on decision " + std::to_string(rid) + " (" + describe(view) + "): " + failure);
  return convert::error_reply(rid, failure);
}

}  // namespace

int run(Bot& bot, Options options) {
  auto stopper = std::make_shared<Stopper>();
  // SIGTERM and SIGINT go to one thread (sigwait): blocked here, before gRPC starts threads that inherit the mask
  sigset_t signals, previous;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, &previous);
  Client client(bot, std::move(options), stopper);
  try {
    client.prepare();
  } catch (const std::invalid_argument& error) {
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    std::cerr << "error: " << error.what() << std::endl;
    return kExitUsage;
  }
  std::thread([signals, stopper] {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0) return;
    std::string name = sig == SIGTERM ? "SIGTERM" : "SIGINT";
    log::info(name + ": closing the session");
    stopper->stop(name, stopper);
  }).detach();
  const char* parent = std::getenv("SKYJO_PARENT_PID");
  if (parent != nullptr && *parent && std::string(parent).find_first_not_of("0123456789") == std::string::npos) {
    auto pid = static_cast<pid_t>(std::stol(parent));
    std::thread([pid, stopper] {
      wait_for_parent_exit(pid);
      log::info("the parent process is gone: closing the session");
      stopper->stop("the parent process is gone", stopper);
    }).detach();
  }
  int code = client.run();
  log::info(client.summary());
  {
    std::lock_guard<std::mutex> lock(stopper->mutex);
    stopper->finished = true;
    stopper->changed.notify_all();
  }
  return code;
}

}  // namespace skyjo
