// A minimal Skyjo bot in C++ for the skyjo-ref referee.
//
// It uses stubs generated from proto/skyjo/v1/skyjo.proto (build-debian.sh
// runs protoc with grpc_cpp_plugin), connects to SKYJO_ADDR with the bearer
// token SKYJO_TOKEN, says Hello, and answers every DecisionRequest until the
// referee ends the session or it gets SIGTERM. When the stream drops it
// reconnects with exponential backoff and jitter, and gives up after 60 s
// without a session.
//
//   SKYJO_ADDR=127.0.0.1:50051 SKYJO_TOKEN=... ./skyjo-cpp-bot
//
// TLS: set SKYJO_CA_FILE to the PEM of the CA that signed the referee's
// certificate (serve --tls-cert); add SKYJO_CLIENT_CERT and SKYJO_CLIENT_KEY
// when the referee asks for client certificates (serve --tls-client-ca).
//
// Strategy (choose, the part to change): reveal when it may, else draw, else
// the first legal action. See docs/writing-a-bot.md for the protocol.
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include "skyjo/v1/skyjo.grpc.pb.h"

namespace v1 = skyjo::v1;

namespace {

std::mutex context_mutex;
grpc::ClientContext* live_context = nullptr;  // the open stream's context, for SIGTERM
std::atomic<bool> stopping{false};

// The index in legal_actions of the action to play.
int choose(const v1::DecisionRequest& request) {
  const auto& legal = request.legal_actions();
  for (v1::ActionKind wanted : {v1::ACTION_KIND_REVEAL, v1::ACTION_KIND_DRAW}) {
    for (int i = 0; i < legal.size(); ++i) {
      if (legal[i].kind() == wanted) return i;
    }
  }
  return 0;
}

void log(const std::string& text) { std::cerr << "cpp-bot " << text << std::endl; }

// Statuses after which reconnecting cannot help (docs/writing-a-bot.md, section 9).
const char* fatal_reason(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED:
      return "the referee refused the token";
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "the referee refused the session";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "the server at this address is not a skyjo-ref referee";
    case grpc::StatusCode::ABORTED:
      return "another connection with the same token replaced this one";
    default:
      return nullptr;
  }
}

// The whole of a PEM file named by environment variable `var`; exits 2 with a message if unreadable.
std::string read_pem(const char* var) {
  const char* path = std::getenv(var);
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  if (!file || text.str().find("-----BEGIN ") == std::string::npos) {
    std::cerr << "error: " << var << " " << path << ": cannot read a PEM file" << std::endl;
    std::exit(2);
  }
  return text.str();
}

// TLS when SKYJO_CA_FILE names the referee's CA (with this bot's certificate when SKYJO_CLIENT_CERT
// and SKYJO_CLIENT_KEY are set), plaintext otherwise and on unix: addresses.
std::shared_ptr<grpc::ChannelCredentials> transport(const std::string& addr) {
  const char* ca = std::getenv("SKYJO_CA_FILE");
  if (ca == nullptr || !*ca || addr.rfind("unix:", 0) == 0) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = read_pem("SKYJO_CA_FILE");
  const char* cert = std::getenv("SKYJO_CLIENT_CERT");
  const char* key = std::getenv("SKYJO_CLIENT_KEY");
  bool has_cert = cert != nullptr && *cert, has_key = key != nullptr && *key;
  if (has_cert != has_key) {
    std::cerr << "error: a client certificate needs both SKYJO_CLIENT_CERT and SKYJO_CLIENT_KEY" << std::endl;
    std::exit(2);
  }
  if (has_cert) {
    options.pem_cert_chain = read_pem("SKYJO_CLIENT_CERT");
    options.pem_private_key = read_pem("SKYJO_CLIENT_KEY");
  }
  return grpc::SslCredentials(options);
}

}  // namespace

int main() {
  const char* addr = std::getenv("SKYJO_ADDR");
  const char* token = std::getenv("SKYJO_TOKEN");
  if (addr == nullptr || token == nullptr || !*addr || !*token) {
    std::cerr << "error: set SKYJO_ADDR (HOST:PORT of the referee) and SKYJO_TOKEN (the bot token)" << std::endl;
    return 2;
  }
  // SIGTERM and SIGINT are taken by a thread (sigwait), which cancels the open stream.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread([signals] {
    int sig = 0;
    sigwait(&signals, &sig);
    log(std::string(sig == SIGTERM ? "SIGTERM" : "SIGINT") + ": closing the session");
    stopping = true;
    std::lock_guard<std::mutex> lock(context_mutex);
    if (live_context != nullptr) live_context->TryCancel();
  }).detach();

  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 30000);  // the guide: a ping every 30 s
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  auto channel = grpc::CreateCustomChannel(addr, transport(addr), args);
  auto stub = v1::BotService::NewStub(channel);

  std::mt19937 random(std::random_device{}());
  int attempt = 0, games = 0, decisions = 0;
  auto lost_since = std::chrono::steady_clock::now();
  while (!stopping) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", std::string("Bearer ") + token);
    {
      std::lock_guard<std::mutex> lock(context_mutex);
      live_context = &context;
      if (stopping) context.TryCancel();
    }
    auto stream = stub->Play(&context);
    v1::PlayRequest hello;
    hello.mutable_hello()->set_name("cpp-reveal-first");
    hello.mutable_hello()->set_version("1.0.0");
    hello.mutable_hello()->set_protocol_version(1);
    stream->Write(hello);
    v1::PlayResponse message;
    while (stream->Read(&message)) {
      switch (message.message_case()) {
        case v1::PlayResponse::kWelcome:
          attempt = 0;
          log("connected as '" + message.welcome().seat_name() + "'");
          break;
        case v1::PlayResponse::kDecision: {
          v1::PlayRequest reply;
          reply.mutable_reply()->set_request_id(message.decision().request_id());
          reply.mutable_reply()->set_index(choose(message.decision()));
          ++decisions;
          stream->Write(reply);
          break;
        }
        case v1::PlayResponse::kStrike:
          log("strike (" + message.strike().reason() + "): " + message.strike().detail());
          break;
        case v1::PlayResponse::kGameOver:
          ++games;
          break;
        default:
          break;  // game starts, events, round results: this bot reads only the decisions
      }
    }
    stream->WritesDone();
    grpc::Status status = stream->Finish();
    {
      std::lock_guard<std::mutex> lock(context_mutex);
      live_context = nullptr;
    }
    if (stopping || status.ok()) break;  // SIGTERM, or the referee ended the session
    if (const char* fatal = fatal_reason(status.error_code())) {
      std::cerr << "error: " << fatal << ": " << status.error_message() << std::endl;
      return 1;
    }
    if (attempt == 0) lost_since = std::chrono::steady_clock::now();
    if (std::chrono::steady_clock::now() - lost_since > std::chrono::seconds(60)) {
      std::cerr << "error: no session with the referee at " << addr << " for 60 s: giving up" << std::endl;
      return 1;
    }
    int delay_ms = attempt < 6 ? 100 << attempt : 5000;  // 100 ms doubling to 5 s, times 0.5-1
    delay_ms = static_cast<int>(delay_ms * std::uniform_real_distribution<double>(0.5, 1.0)(random));
    ++attempt;
    log("stream lost (" + status.error_message() + "); reconnecting in " + std::to_string(delay_ms) + " ms");
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  }
  log("played " + std::to_string(games) + " games, " + std::to_string(decisions) + " decisions");
  return 0;
}
