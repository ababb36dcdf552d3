//! Plays a [`Bot`] on a referee: the bot on the caller's thread, the network on a thread of its own.
//!
//! The network thread runs a single-threaded tokio runtime with one `BotService.Play` stream at a time: it
//! says Hello, reads the referee's messages, hands them to the bot's thread in order (hooks and decisions)
//! and writes the replies. The bot never blocks the connection: keepalive pings, signals and new messages
//! are handled while it thinks. When the stream breaks it reconnects with backoff and the same token; a
//! decision the referee sends again is answered from the reply already computed (or being computed),
//! never by a second `decide`.

use std::collections::{HashMap, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
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
use crate::types::{GameResult, GameStart, RoundResult, Rules, Strike, View};

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
        let config = Arc::new(self.settings.resolve(self.bot.name(), self.bot.version())?);
        install_panic_hook();
        let (jobs_tx, jobs_rx) = std_mpsc::channel::<Job>();
        let (replies_tx, replies_rx) = mpsc::unbounded_channel::<Computed>();
        let stopping = Arc::new(AtomicBool::new(false));
        let (done_tx, done_rx) = std_mpsc::channel::<()>(); // dropped when play returns: the deadline stands down
        let network = Network::new(Arc::clone(&config), jobs_tx, replies_rx, Arc::clone(&stopping), done_rx);
        let thread = std::thread::Builder::new().name("skyjo-bot-net".into()).spawn(move || network.run_thread())?;
        let mut player = Player { bot: &mut self.bot, decisions: 0, decide_errors: 0 };
        let outcome = loop {
            match jobs_rx.recv() {
                Ok(Job::Finished(outcome)) => break outcome,
                Ok(_) if stopping.load(Ordering::Acquire) => {} // stopping: no more bot code
                Ok(job) => player.work(job, &replies_tx),
                Err(_) => break Err(Error::ConnectionLost("the network thread ended unexpectedly".into())),
            }
        };
        let _ = thread.join();
        drop(done_tx);
        let (decisions, decide_errors) = (player.decisions, player.decide_errors);
        outcome.map(|stats| Stats { decisions, decide_errors, ..stats })
    }
}

// ------------------------------------------------------------------------ between the threads

/// Work for the bot's thread, in the order the referee sent it.
enum Job {
    GameStart(Arc<GameStart>),
    Events(Vec<crate::types::Event>),
    RoundResult(RoundResult),
    GameOver(GameResult),
    Strike(Strike),
    Decide { key: Key, request: Box<proto::DecisionRequest>, start: Option<Arc<GameStart>> },
    Finished(Result<Stats, Error>),
}

/// A reply the bot's thread computed, for the decision `key`.
struct Computed {
    key: Key,
    reply: proto::DecisionReply,
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

// ------------------------------------------------------------------------------- the bot's side

struct Player<'a, B> {
    bot: &'a mut B,
    decisions: u32,
    decide_errors: u32,
}

impl<B: Bot> Player<'_, B> {
    fn work(&mut self, job: Job, replies: &mpsc::UnboundedSender<Computed>) {
        match job {
            Job::GameStart(start) => hook("on_game_start", || self.bot.on_game_start(&start)),
            Job::Events(events) => {
                for event in &events {
                    hook("on_event", || self.bot.on_event(event));
                }
            }
            Job::RoundResult(result) => hook("on_round_result", || self.bot.on_round_result(&result)),
            Job::GameOver(result) => hook("on_game_over", || self.bot.on_game_over(&result)),
            Job::Strike(strike) => hook("on_strike", || self.bot.on_strike(&strike)),
            Job::Decide { key, request, start } => {
                let reply = self.answer(&request, start.as_deref());
                let _ = replies.send(Computed { key, reply }); // fails only when the network has ended
            }
            Job::Finished(_) => {}
        }
    }

    fn answer(&mut self, request: &proto::DecisionRequest, start: Option<&GameStart>) -> proto::DecisionReply {
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
        self.decisions += 1;
        let failure = match catch_unwind(AssertUnwindSafe(|| self.bot.decide(&view))) {
            Ok(Ok(action)) => {
                if !view.is_legal(action) {
                    warn!("decide chose {action}, which is not legal in decision {rid} ({})", describe(&view));
                }
                return convert::reply(rid, action, &view.legal_actions);
            }
            Ok(Err(e)) => error_text(&*e),
            Err(panic) => format!("panic: {}{}", panic_message(&*panic), take_panic_location()),
        };
        self.decide_errors += 1;
        error!("decide failed on decision {rid} ({}): {failure}", describe(&view));
        convert::error_reply(rid, &failure)
    }
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
    format!(
        "round {}, seat {}, {}, hand {hand}, legal: {}",
        view.round,
        view.seat,
        view.decision,
        legal.join(", ")
    )
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

struct Network {
    config: Arc<Config>,
    jobs: std_mpsc::Sender<Job>,
    replies: mpsc::UnboundedReceiver<Computed>,
    stopping: Arc<AtomicBool>,
    done: Option<std_mpsc::Receiver<()>>,
    /// Decisions recently asked, with the reply once computed (`None`: being computed).
    answers: VecDeque<(Key, Option<proto::DecisionReply>)>,
    games: HashMap<String, Arc<GameStart>>,
    stats: Stats,
}

/// Decisions remembered for re-sent requests.
const REMEMBERED: usize = 8;

impl Network {
    fn new(
        config: Arc<Config>,
        jobs: std_mpsc::Sender<Job>,
        replies: mpsc::UnboundedReceiver<Computed>,
        stopping: Arc<AtomicBool>,
        done: std_mpsc::Receiver<()>,
    ) -> Network {
        Network {
            config,
            jobs,
            replies,
            stopping,
            done: Some(done),
            answers: VecDeque::new(),
            games: HashMap::new(),
            stats: Stats::default(),
        }
    }

    fn run_thread(mut self) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        let outcome = match runtime {
            Ok(runtime) => runtime.block_on(self.play()),
            Err(e) => Err(Error::Io(e)),
        };
        let _ = self.jobs.send(Job::Finished(outcome.map(|()| self.stats)));
    }

    async fn play(&mut self) -> Result<(), Error> {
        let (stop_tx, mut stop) = watch::channel(false);
        if self.config.stop_on_signals {
            let signals = net::stop_signals(self.config.parent_pid).map_err(Error::Io)?;
            let stopping = Arc::clone(&self.stopping);
            let done = self.done.take();
            tokio::spawn(async move {
                let why = signals.await;
                info!("{why}: closing the session");
                stopping.store(true, Ordering::Release);
                if let Some(done) = done {
                    net::exit_unless_done_within(done, net::STOP_DEADLINE, why);
                }
                let _ = stop_tx.send(true);
            });
        }
        let mut attempt = 0u32;
        let mut lost_since = Instant::now();
        loop {
            let sessions_before = self.stats.sessions;
            let outcome = tokio::select! {
                outcome = self.session() => outcome,
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
    async fn session(&mut self) -> Outcome {
        let channel = match net::connect(&self.config).await {
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
        let mut waiting: Option<Key> = None; // the decision this stream waits for, while it is computed
        loop {
            tokio::select! {
                message = stream.message() => match message {
                    Ok(Some(msg)) => self.handle(msg, &tx, &mut waiting),
                    Ok(None) => return Outcome::Closed,
                    Err(status) => return classify(&status),
                },
                Some(computed) = self.replies.recv() => self.computed(computed, &tx, &mut waiting),
            }
        }
    }

    fn send_job(&self, job: Job) {
        let _ = self.jobs.send(job); // fails only when play() has returned
    }

    fn handle(&mut self, msg: proto::PlayResponse, tx: &mpsc::UnboundedSender<proto::PlayRequest>, waiting: &mut Option<Key>) {
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
                    let start = Arc::new(start); // a re-sent GameStart after a reconnect is not news
                    self.games.insert(start.game_id.clone(), Arc::clone(&start));
                    self.send_job(Job::GameStart(start));
                }
                Ok(_) => {}
                Err(e) => warn!("game start {:?} is malformed: {e}", start.game_id),
            },
            Some(Message::Decision(request)) => self.decision(request, tx, waiting),
            Some(Message::Events(batch)) => {
                self.send_job(Job::Events(batch.events.iter().map(convert::event_from_proto).collect()));
            }
            Some(Message::RoundResult(result)) => self.send_job(Job::RoundResult(convert::round_result_from_proto(&result))),
            Some(Message::GameOver(over)) => {
                self.stats.games += 1;
                self.games.remove(&over.game_id);
                self.send_job(Job::GameOver(convert::game_over_from_proto(&over)));
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
                if waiting.as_ref().is_some_and(|key| key.starts_with(format!("{}|", strike.request_id).as_bytes())) {
                    *waiting = None; // the referee settled it: a late reply would be a fault
                }
                self.send_job(Job::Strike(strike));
            }
            None => debug!("skipping a message of a kind this SDK does not know"),
        }
    }

    fn decision(&mut self, request: proto::DecisionRequest, tx: &mpsc::UnboundedSender<proto::PlayRequest>, waiting: &mut Option<Key>) {
        if !request.events.is_empty() {
            // events that came with the request go first
            self.send_job(Job::Events(request.events.iter().map(convert::event_from_proto).collect()));
        }
        let key = decision_key(&request);
        match self.answers.iter().find(|(known, _)| *known == key) {
            Some((_, Some(reply))) => {
                debug!("decision {} asked again: answering it as before", request.request_id);
                *waiting = None;
                send_reply(tx, reply.clone());
            }
            Some((_, None)) => *waiting = Some(key), // asked again while the bot still thinks
            None => {
                self.answers.push_back((key.clone(), None));
                if self.answers.len() > REMEMBERED {
                    self.answers.pop_front();
                }
                *waiting = Some(key.clone());
                let start = self.games.get(&request.game_id).cloned();
                self.send_job(Job::Decide { key, request: Box::new(request), start });
            }
        }
    }

    fn computed(&mut self, computed: Computed, tx: &mpsc::UnboundedSender<proto::PlayRequest>, waiting: &mut Option<Key>) {
        if let Some((_, slot)) = self.answers.iter_mut().find(|(known, _)| *known == computed.key) {
            *slot = Some(computed.reply.clone());
        }
        if waiting.as_ref() == Some(&computed.key) {
            *waiting = None;
            send_reply(tx, computed.reply);
        } else {
            warn!("decision {} came too late (the referee moved on); not sent", computed.reply.request_id);
        }
    }
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
        assert!(matches!(refused, Outcome::Fatal(m) if m == "the referee refused the token: UNAUTHENTICATED: unknown bot token"));
        assert!(matches!(classify(&tonic::Status::unavailable("gone")), Outcome::Broken(_)));
        assert!(matches!(classify(&tonic::Status::aborted("replaced")), Outcome::Fatal(_)));
    }

    #[test]
    fn errors_read_with_their_sources() {
        let inner = std::io::Error::other("disk full");
        let outer: BoxError = Box::new(std::io::Error::new(std::io::ErrorKind::Other, inner));
        assert_eq!(error_text(&*outer), "disk full");
        let text: BoxError = "no idea".into();
        assert_eq!(error_text(&*text), "no idea");
    }
}
