//! A bare tonic client, for benchmarks/bench_sdk_rust.py: the SDK's figure is compared with it.
//!
//! The generated stubs and nothing else: one Play stream, Hello, then every DecisionRequest answered at
//! once with index 0, on one thread; it exits when the stream ends. No reconnects, no views, no hooks.

use skyjo_bot::proto::bot_service_client::BotServiceClient;
use skyjo_bot::proto::{self, decision_reply, play_request, play_response};
use tonic::transport::Endpoint;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::var("SKYJO_ADDR")?;
    let token = std::env::var("SKYJO_TOKEN")?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async move {
        let channel = Endpoint::from_shared(format!("http://{addr}"))?.tcp_nodelay(true).connect().await?;
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let hello = proto::Hello { name: "bare".into(), version: String::new(), protocol_version: 1 };
        tx.send(proto::PlayRequest { message: Some(play_request::Message::Hello(hello)) })?;
        let mut request = tonic::Request::new(tokio_stream::wrappers::UnboundedReceiverStream::new(rx));
        request.metadata_mut().insert("authorization", format!("Bearer {token}").parse()?);
        let mut stream = BotServiceClient::new(channel).play(request).await?.into_inner();
        while let Some(message) = stream.message().await? {
            if let Some(play_response::Message::Decision(decision)) = message.message {
                let reply = proto::DecisionReply {
                    request_id: decision.request_id,
                    choice: Some(decision_reply::Choice::Index(0)),
                };
                tx.send(proto::PlayRequest { message: Some(play_request::Message::Reply(reply)) })?;
            }
        }
        Ok(())
    })
}
