//! Plays a [`Bot`] on a referee, on the caller's thread: a single-threaded tokio runtime holds one
//! `BotService.Play` stream at a time, says Hello, reads the referee's messages, calls the bot's hooks and
//! `decide` in order, inline (no thread hop: the lowest latency and CPU a decision), and writes the replies.
//!
//! Signals and the parent's death are watched on a thread of their own, so a stop is honoured even while
//! `decide` blocks: the session closes when it returns, or the process exits after 0.75 s. When the
//! stream breaks the client reconnects with backoff and the same token; a decision the referee sends again
//! is answered from the reply already computed, never by a second `decide`.

use std::collections::{HashMap, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use log::{debug, error, info, warn};
use prost::Message as _;
use tokio::sync::{mpsc, watch};
use tonic::Code;

use crate::address::Address;
use crate::bot::Bot;
use crate::convert;
use crate::net::{self, Config};
use crate::proto;
use crate::types::{GameStart, Rules, View};

/// What a client did, for logs and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Games that ended (GameOver received).
    pub games: u32,
    /// `decide` calls.
    pub decisions: u32,
    /// `decide` calls that returned an error or panicked.
    pub decide_errors: u32,
    /// Strikes the referee gave.
    pub strikes: u32,
    /// Streams that got a Welcome (1 + reconnects).
    pub sessions: u32,
}

/// Why a client stopped without the referee ending the session.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A setting that cannot work (no address, no token, an unreadable CA file): fix the command.
    #[error("{0}")]
    Usage(String),
    /// The referee refused the session for good (bad token, replaced by another connection, ...).
    #[error("{0}")]
    Refused(String),
    /// No session could be had within the give-up time.
    #[error("{0}")]
    ConnectionLost(String),
    /// The network thread could not start.
    #[error("cannot start the network thread: {0}")]
    Io(#[from] std::io::Error),
}

impl Error {
    /// The documented exit code: 2 for bad usage, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) => 2,
            _ => 1,
        }
    }
}

/// A client for one bot. [`run`](crate::run) is the usual way; this builder is for tests and programs that
/// start bots themselves:
///
/// ```no_run
/// # use skyjo_bot::{Bot, BoxError, Action, View, Client};
/// # struct MyBot;
/// # impl Bot for MyBot { fn decide(&mut self, v: &View) -> Result<Action, BoxError> { Ok(v.legal_actions[0]) } }
/// let stats = Client::new(MyBot).addr("127.0.0.1:50051").token("hV2kQ9xR4mT7bN1cW8zL5pY3").play()?;
/// # Ok::<(), skyjo_bot::Error>(())
/// ```
pub struct Client<B> {
    bot: B,
    settings: net::Settings,
}

impl<B: Bot> Client<B> {
    /// A client for `bot`, with the address, token and TLS files from the environment (`SKYJO_ADDR`,
    /// `SKYJO_TOKEN`, `SKYJO_CA_FILE`, `SKYJO_CLIENT_CERT`, `SKYJO_CLIENT_KEY`, `SKYJO_GIVE_UP_MS`).
    pub fn new(bot: B) -> Client<B> {
        Client { bot, settings: net::Settings::from_env() }
    }

    /// The referee's address: `HOST:PORT`, `[::1]:PORT` or `unix:PATH`.
    pub fn addr(mut self, addr: &str) -> Self {
        self.settings.addr = addr.into();
        self
    }

    /// The bot's token.
    pub fn token(mut self, token: &str) -> Self {
        self.settings.token = token.into();
        self
    }

    /// Speak TLS, trusting the CA in this PEM file.
    pub fn ca_file(mut self, path: &str) -> Self {
        self.settings.ca_file = path.into();
        self
    }

    /// This bot's certificate and key (PEM), for a referee that asks for client certificates.
    pub fn client_cert(mut self, cert: &str, key: &str) -> Self {
        self.settings.client_cert = cert.into();
        self.settings.client_key = key.into();
        self
    }

    /// Stop reconnecting after this long without a session (default 60 s).
    pub fn give_up_after(mut self, limit: Duration) -> Self {
        self.settings.give_up_after = limit;
        self
    }

    /// End the session cleanly on SIGTERM and SIGINT, and when the process `SKYJO_PARENT_PID` names is
    /// gone; if the clean close takes longer than 0.75 s (a `decide` that never returns), exit the process
    /// with status 0. [`run`](crate::run) does this.
    pub fn stop_on_signals(mut self) -> Self {
        self.settings.stop_on_signals = true;
        self
    }

    /// Play until the referee ends the session (`Ok`), a signal stops it (with
    /// [`stop_on_signals`](Client::stop_on_signals)), or it fails.
    pub fn play(mut self) -> Result<Stats, Error> {
        let config = self.settings.resolve(self.bot.name(), self.bot.version())?;
        install_panic_hook();
        let (stop_tx, stop_rx) = watch::channel(false);
        // dropped when play returns: the stop deadline stands down
        let (_done, done_rx) = std_mpsc::channel::<()>();
        if config.stop_on_signals {
            net::watch_stop_signals(config.parent_pid, stop_tx, done_rx).map_err(Error::Io)?;
        }
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let mut session = Session::new(&mut self.bot, &config);
        runtime.block_on(session.play(stop_rx))?;
        Ok(session.stats)
    }
}

/// What identifies a decision across a re-send: its id, game, view and legal actions' count (not the time left
/// or the events that came with it; and not the id alone: a restarted referee counts from 1 again).
type Key = Vec<u8>;

fn decision_key(request: &proto::DecisionRequest) -> Key {
    let mut key = format!("{}|{}|{}|", request.request_id, request.legal_actions.len(), request.game_id).into_bytes();
    if let Some(view) = &request.view {
        view.encode(&mut key).expect("a Vec grows as needed");
    }
    key
}

/// Call a bot hook; a panic in it is logged, never fatal.
fn hook(name: &str, call: impl FnOnce()) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(call)) {
        error!("{name} panicked: {}{}", panic_message(&*panic), take_panic_location());
    }
}

/// An error and its sources: `outer: inner: innermost`.
fn error_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic with no message".into()
    }
}

thread_local! {
    static PANIC_LOCATION: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Remember where each panic happened (for the error reply), then do what the program's hook did (print it).
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if let Some(at) = info.location() {
                let text = format!(" (at {}:{}:{})", at.file(), at.line(), at.column());
                PANIC_LOCATION.with(|cell| *cell.borrow_mut() = Some(text));
            }
            previous(info);
        }));
    });
}

fn take_panic_location() -> String {
    PANIC_LOCATION.with(|cell| cell.borrow_mut().take()).unwrap_or_default()
}

fn describe(view: &View) -> String {
    let legal: Vec<String> = view.legal_actions.iter().map(|a| a.to_string()).collect();
    let hand = view.hand.map_or("none".into(), |card| card.to_string());
    format!("round {}, seat {}, {}, hand {hand}, legal: {}", view.round, view.seat, view.decision, legal.join(", "))
}

// ------------------------------------------------------------------------------ the network side

/// How one stream ended.
enum Outcome {
    /// The referee ended the session (status OK).
    Closed,
    /// Refused for good: the message to exit with.
    Fatal(String),
    /// Broken: why (reconnect).
    Broken(String),
}

/// The gRPC name of a status code, as the Python SDK prints it.
fn code_name(code: Code) -> String {
    let debug = format!("{code:?}");
    let mut name = String::new();
    for (i, c) in debug.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            name.push('_');
        }
        name.push(c.to_ascii_uppercase());
    }
    name
}

fn classify(status: &tonic::Status) -> Outcome {
    let code = status.code();
    let fatal = match code {
        Code::Unauthenticated | Code::PermissionDenied => Some("the referee refused the token"),
        Code::InvalidArgument | Code::FailedPrecondition => Some("the referee refused the session"),
        Code::Unimplemented => Some("the server at this address is not a skyjo-ref referee"),
        Code::Aborted => Some("another connection with the same token replaced this one"),
        _ => None,
    };
    let mut detail = status.message().to_string();
    if let Some(source) = std::error::Error::source(status) {
        detail = format!("{detail}: {}", error_text(source));
    }
    match fatal {
        Some(why) => Outcome::Fatal(format!("{why}: {}: {detail}", code_name(code))),
        None => Outcome::Broken(format!("{}: {detail}", code_name(code))),
    }
}

/// One bot's play: the sessions one after another, the games it knows, the replies it gave.
struct Session<'a, B> {
    bot: &'a mut B,
    config: &'a Config,
    /// Replies to recent decisions, for a decision the referee sends again after a reconnect.
    answers: VecDeque<(Key, proto::DecisionReply)>,
    games: HashMap<String, GameStart>,
    stats: Stats,
}

/// Decisions remembered for re-sent requests.
const REMEMBERED: usize = 8;

impl<'a, B: Bot> Session<'a, B> {
    fn new(bot: &'a mut B, config: &'a Config) -> Self {
        Session { bot, config, answers: VecDeque::new(), games: HashMap::new(), stats: Stats::default() }
    }

    async fn play(&mut self, mut stop: watch::Receiver<bool>) -> Result<(), Error> {
        let mut attempt = 0u32;
        let mut lost_since = Instant::now();
        loop {
            let sessions_before = self.stats.sessions;
            let outcome = tokio::select! {
                outcome = self.stream() => outcome,
                _ = stop.wait_for(|stopped| *stopped) => return Ok(()),
            };
            let why = match outcome {
                Outcome::Closed => {
                    info!("the referee ended the session");
                    return Ok(());
                }
                Outcome::Fatal(message) => return Err(Error::Refused(message)),
                Outcome::Broken(why) => why,
            };
            if self.stats.sessions > sessions_before {
                (attempt, lost_since) = (0, Instant::now());
            }
            let waited = lost_since.elapsed();
            if waited > self.config.give_up_after {
                return Err(Error::ConnectionLost(format!(
                    "no session with the referee at {} for {:.0} s ({why}): giving up{}",
                    self.config.address,
                    waited.as_secs_f64(),
                    self.config.closed_hint(&why)
                )));
            }
            let delay = self.config.backoff(attempt);
            attempt += 1;
            warn!("stream to {} lost ({why}); reconnecting in {:.2} s", self.config.address, delay.as_secs_f64());
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = stop.wait_for(|stopped| *stopped) => return Ok(()),
            }
        }
    }

    /// One Play stream, until it ends.
    async fn stream(&mut self) -> Outcome {
        let channel = match net::connect(self.config).await {
            Ok(channel) => channel,
            Err(why) => return Outcome::Broken(why),
        };
        let (tx, rx) = mpsc::unbounded_channel::<proto::PlayRequest>();
        let _ = tx.send(convert::hello(&self.config.name, &self.config.version));
        debug!("-> hello name={} version={}", self.config.name, self.config.version);
        let mut client = proto::bot_service_client::BotServiceClient::new(channel)
            .max_decoding_message_size(1 << 20)
            .max_encoding_message_size(64 << 10);
        let mut request = tonic::Request::new(tokio_stream::wrappers::UnboundedReceiverStream::new(rx));
        request.metadata_mut().insert("authorization", self.config.authorization.clone());
        let mut stream = match client.play(request).await {
            Ok(response) => response.into_inner(),
            Err(status) => return classify(&status),
        };
        loop {
            match stream.message().await {
                Ok(Some(msg)) => self.handle(msg, &tx),
                Ok(None) => return Outcome::Closed,
                Err(status) => return classify(&status),
            }
        }
    }

    fn handle(&mut self, msg: proto::PlayResponse, tx: &mpsc::UnboundedSender<proto::PlayRequest>) {
        use proto::play_response::Message;
        if log::log_enabled!(log::Level::Debug) {
            debug!("<- {:?}", msg.message);
        }
        match msg.message {
            Some(Message::Welcome(welcome)) => {
                self.stats.sessions += 1;
                info!(
                    "connected to {} as '{}' (protocol {})",
                    self.config.address, welcome.seat_name, welcome.protocol_version
                );
            }
            Some(Message::GameStart(start)) => match convert::game_start_from_proto(&start) {
                Ok(start) if !self.games.contains_key(&start.game_id) => {
                    // a re-sent GameStart after a reconnect is not news
                    hook("on_game_start", || self.bot.on_game_start(&start));
                    self.games.insert(start.game_id.clone(), start);
                }
                Ok(_) => {}
                Err(e) => warn!("game start {:?} is malformed: {e}", start.game_id),
            },
            Some(Message::Decision(request)) => {
                self.events(&request.events); // events that came with the request go first
                let reply = self.reply(&request);
                send_reply(tx, reply);
            }
            Some(Message::Events(batch)) => self.events(&batch.events),
            Some(Message::RoundResult(result)) => {
                let result = convert::round_result_from_proto(&result);
                hook("on_round_result", || self.bot.on_round_result(&result));
            }
            Some(Message::GameOver(over)) => {
                self.stats.games += 1;
                self.games.remove(&over.game_id);
                let result = convert::game_over_from_proto(&over);
                hook("on_game_over", || self.bot.on_game_over(&result));
            }
            Some(Message::Strike(strike)) => {
                let strike = convert::strike_from_proto(&strike);
                self.stats.strikes += 1;
                warn!(
                    "strike {}/{} in game {} (request {}, {}): {}; the referee played {}",
                    strike.strikes,
                    strike.max_strikes,
                    strike.game_id,
                    strike.request_id,
                    strike.reason,
                    strike.detail,
                    strike.played.map_or("nothing".into(), |a| a.to_string())
                );
                hook("on_strike", || self.bot.on_strike(&strike));
            }
            None => debug!("skipping a message of a kind this SDK does not know"),
        }
    }

    fn events(&mut self, events: &[proto::Event]) {
        for event in events {
            let event = convert::event_from_proto(event);
            hook("on_event", || self.bot.on_event(&event));
        }
    }

    /// The reply to a decision: the one given before if the referee sends it again, else the bot's.
    fn reply(&mut self, request: &proto::DecisionRequest) -> proto::DecisionReply {
        let key = decision_key(request);
        if let Some((_, reply)) = self.answers.iter().find(|(known, _)| *known == key) {
            debug!("decision {} asked again: answering it as before", request.request_id);
            return reply.clone();
        }
        let reply = answer(&mut *self.bot, &mut self.stats, request, self.games.get(&request.game_id));
        self.answers.push_back((key, reply.clone()));
        if self.answers.len() > REMEMBERED {
            self.answers.pop_front();
        }
        reply
    }
}

/// The bot's reply to a decision of the game `start` began: its action, or an error reply with its error's text
/// (an unreadable request, an error returned, a panic).
fn answer<B: Bot>(
    bot: &mut B,
    stats: &mut Stats,
    request: &proto::DecisionRequest,
    start: Option<&GameStart>,
) -> proto::DecisionReply {
    let rid = request.request_id;
    let guessed;
    let start = match start {
        Some(start) => start,
        None => {
            warn!("decision {rid} for game {:?} that never started here; guessing players and rules", request.game_id);
            let view = request.view.as_ref();
            let seats = view.map_or(0, |v| v.grids.len());
            guessed = GameStart {
                game_id: request.game_id.clone(),
                seat: view.map_or(0, |v| v.seat as usize),
                players: (0..seats).map(|i| format!("seat {i}")).collect(),
                rules: Rules::default(),
                time_control: None,
            };
            &guessed
        }
    };
    let view = match convert::view_from_proto(request, start) {
        Ok(view) => view,
        Err(e) => {
            error!("decision {rid} is malformed: {e}");
            return convert::error_reply(rid, &format!("the bot could not read the request: {e}"));
        }
    };
    stats.decisions += 1;
    let failure = match catch_unwind(AssertUnwindSafe(|| bot.decide(&view))) {
        Ok(Ok(action)) => {
            if !view.is_legal(action) {
                warn!("decide chose {action}, which is not legal in decision {rid} ({})", describe(&view));
            }
            return convert::reply(rid, action, &view.legal_actions);
        }
        Ok(Err(e)) => error_text(&*e),
        Err(panic) => format!("panic: {}{}", panic_message(&*panic), take_panic_location()),
    };
    stats.decide_errors += 1;
    error!("decide failed on decision {rid} ({}): {failure}", describe(&view));
    convert::error_reply(rid, &failure)
}

fn send_reply(tx: &mpsc::UnboundedSender<proto::PlayRequest>, reply: proto::DecisionReply) {
    debug!("-> reply {reply:?}");
    let _ = tx.send(proto::PlayRequest { message: Some(proto::play_request::Message::Reply(reply)) });
}

impl Config {
    fn closed_hint(&self, why: &str) -> &'static str {
        let closed = ["connection reset", "Connection reset", "broken pipe", "Broken pipe", "handshake", "tls", "TLS"];
        if !closed.iter().any(|word| why.contains(word)) || matches!(self.address, Address::Unix(_)) {
            return "";
        }
        match &self.tls {
            None => "; the referee closed the connection at once: if it serves TLS, set SKYJO_CA_FILE to its CA",
            Some(tls) if tls.identity.is_none() => {
                "; the referee closed the connection at once: if it asks for client certificates, set \
                 SKYJO_CLIENT_CERT and SKYJO_CLIENT_KEY"
            }
            Some(_) => "",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bot::BoxError;

    #[test]
    fn status_codes_have_their_grpc_names() {
        assert_eq!(code_name(Code::Unauthenticated), "UNAUTHENTICATED");
        assert_eq!(code_name(Code::DeadlineExceeded), "DEADLINE_EXCEEDED");
        assert_eq!(code_name(Code::Ok), "OK");
    }

    #[test]
    fn refusals_are_fatal_and_breaks_are_not() {
        let refused = classify(&tonic::Status::unauthenticated("unknown bot token"));
        assert!(
            matches!(refused, Outcome::Fatal(m) if m == "the referee refused the token: UNAUTHENTICATED: unknown bot token")
        );
        assert!(matches!(classify(&tonic::Status::unavailable("gone")), Outcome::Broken(_)));
        assert!(matches!(classify(&tonic::Status::aborted("replaced")), Outcome::Fatal(_)));
    }

    #[test]
    fn errors_read_with_their_sources() {
        #[derive(Debug)]
        struct Planning(std::io::Error);
        impl std::fmt::Display for Planning {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("cannot plan")
            }
        }
        impl std::error::Error for Planning {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let outer: BoxError = Box::new(Planning(std::io::Error::other("disk full")));
        assert_eq!(error_text(&*outer), "cannot plan: disk full");
        let text: BoxError = "no idea".into();
        assert_eq!(error_text(&*text), "no idea");
    }
}
