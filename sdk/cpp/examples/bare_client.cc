// A bare grpc++ client with no SDK: Hello, then index 0 for every decision. The benchmark's baseline
// (benchmarks/bench_sdk_cpp.py runs it beside the faulty example without a FAULT, which plays the same moves
// through the SDK).
#include <grpcpp/grpcpp.h>

#include <cstdlib>
#include <iostream>

#include "skyjo/v1/skyjo.grpc.pb.h"

int main() {
  const char* addr = std::getenv("SKYJO_ADDR");
  const char* token = std::getenv("SKYJO_TOKEN");
  if (!addr || !token) {
    std::cerr << "error: set SKYJO_ADDR and SKYJO_TOKEN" << std::endl;
    return 2;
  }
  auto stub = skyjo::v1::BotService::NewStub(grpc::CreateChannel(addr, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.AddMetadata("authorization", std::string("Bearer ") + token);
  auto stream = stub->Play(&context);
  skyjo::v1::PlayRequest hello;
  hello.mutable_hello()->set_name("bare");
  hello.mutable_hello()->set_protocol_version(1);
  stream->Write(hello);
  skyjo::v1::PlayResponse msg;
  skyjo::v1::PlayRequest reply;
  while (stream->Read(&msg)) {
    if (msg.message_case() == skyjo::v1::PlayResponse::kWelcome) std::cerr << "bare: connected" << std::endl;
    if (msg.message_case() != skyjo::v1::PlayResponse::kDecision) continue;
    reply.mutable_reply()->set_request_id(msg.decision().request_id());
    reply.mutable_reply()->set_index(0);
    stream->Write(reply);
  }
  grpc::Status status = stream->Finish();
  return status.ok() || status.error_code() == grpc::StatusCode::CANCELLED ? 0 : 1;
}
