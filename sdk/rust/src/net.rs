//! The connection's settings and parts: address, token, TLS, channel options, backoff, stop signals.

use std::sync::mpsc as std_mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;
use tonic::metadata::MetadataValue;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity, Uri};

use crate::address::{Address, parse_address};
use crate::client::Error;
use crate::parent;
use crate::tls::{ClientTls, client_tls};

/// After a stop signal, the process exits by itself if the clean close takes longer than this.
pub const STOP_DEADLINE: Duration = Duration::from_millis(750);

/// What the builder collects (strings as given; checked by [`Settings::resolve`]).
#[derive(Clone, Debug)]
pub struct Settings {
    pub addr: String,
    pub token: String,
    pub ca_file: String,
    pub client_cert: String,
    pub client_key: String,
    pub give_up_after: Duration,
    pub stop_on_signals: bool,
}

impl Settings {
    pub fn from_env() -> Settings {
        let var = |name: &str| std::env::var(name).unwrap_or_default();
        let give_up_ms = var("SKYJO_GIVE_UP_MS").parse::<u64>().ok().filter(|&ms| ms > 0).unwrap_or(60_000);
        Settings {
            addr: var("SKYJO_ADDR"),
            token: var("SKYJO_TOKEN"),
            ca_file: var("SKYJO_CA_FILE"),
            client_cert: var("SKYJO_CLIENT_CERT"),
            client_key: var("SKYJO_CLIENT_KEY"),
            give_up_after: Duration::from_millis(give_up_ms),
            stop_on_signals: false,
        }
    }

    /// Check everything before anything runs: each problem is a usage error naming what to fix.
    pub fn resolve(&self, name: String, version: String) -> Result<Config, Error> {
        if self.addr.trim().is_empty() {
            return Err(Error::Usage("no referee address: set SKYJO_ADDR (HOST:PORT or unix:PATH)".into()));
        }
        if self.token.is_empty() {
            return Err(Error::Usage("no bot token: set SKYJO_TOKEN (skyjo-ref serve and match issue tokens)".into()));
        }
        let address = parse_address(&self.addr).map_err(Error::Usage)?;
        let authorization = MetadataValue::try_from(format!("Bearer {}", self.token))
            .map_err(|_| Error::Usage("the bot token holds characters a header cannot carry".into()))?;
        let tls = client_tls(&self.ca_file, &self.client_cert, &self.client_key).map_err(Error::Usage)?;
        let parent_pid = std::env::var("SKYJO_PARENT_PID").ok().and_then(|pid| pid.parse::<i32>().ok());
        Ok(Config {
            tls: if matches!(address, Address::Unix(_)) { None } else { tls },
            address,
            authorization,
            name,
            version,
            give_up_after: self.give_up_after,
            stop_on_signals: self.stop_on_signals,
            parent_pid: parent_pid.filter(|&pid| pid > 0),
        })
    }
}

/// Everything a session needs, checked.
pub struct Config {
    pub address: Address,
    pub authorization: MetadataValue<tonic::metadata::Ascii>,
    pub tls: Option<ClientTls>,
    pub name: String,
    pub version: String,
    pub give_up_after: Duration,
    pub stop_on_signals: bool,
    pub parent_pid: Option<i32>,
}

impl Config {
    /// The pause before reconnect `attempt` (0, 1, ...): 0.1 s doubling to 5 s, times a random 0.5-1.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let base = Duration::from_millis(100).saturating_mul(1u32 << attempt.min(10));
        base.min(Duration::from_secs(5)).mul_f64(0.5 + 0.5 * jitter())
    }
}

/// A number in [0, 1) that differs from call to call and from process to process (no need for a real RNG).
fn jitter() -> f64 {
    use std::hash::{BuildHasher, RandomState};
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos();
    let hash = RandomState::new().hash_one(nanos);
    (hash >> 11) as f64 / (1u64 << 53) as f64
}

/// A channel to the referee, connected (keepalive as docs/writing-a-bot.md asks: a ping every 30 s).
pub async fn connect(config: &Config) -> Result<Channel, String> {
    let tune = |endpoint: Endpoint| {
        endpoint
            .http2_keep_alive_interval(Duration::from_secs(30))
            .keep_alive_timeout(Duration::from_secs(10))
            .keep_alive_while_idle(true)
            .tcp_nodelay(true)
    };
    let described = |e: tonic::transport::Error| {
        let mut text = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(inner) = source {
            text = format!("{text}: {inner}");
            source = inner.source();
        }
        format!("cannot connect to {}: {text}", config.address)
    };
    match &config.address {
        Address::Tcp { host, port } => {
            let scheme = if config.tls.is_some() { "https" } else { "http" };
            let mut endpoint = Endpoint::from_shared(format!("{scheme}://{host}:{port}")).map_err(described)?;
            if let Some(tls) = &config.tls {
                let mut tls_config = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(&tls.ca));
                if let Some((cert, key)) = &tls.identity {
                    tls_config = tls_config.identity(Identity::from_pem(cert, key));
                }
                endpoint = endpoint.tls_config(tls_config).map_err(described)?;
            }
            tune(endpoint).connect().await.map_err(described)
        }
        Address::Unix(path) => {
            let path = path.clone();
            let connector = tower::service_fn(move |_: Uri| {
                let path = path.clone();
                async move { Ok::<_, std::io::Error>(TokioIo::new(UnixStream::connect(path).await?)) }
            });
            tune(Endpoint::from_static("http://localhost")).connect_with_connector(connector).await.map_err(described)
        }
    }
}

/// Watch for SIGTERM, SIGINT and the parent's death (`parent_pid`) on a thread of its own: the first one
/// sets `stop`, and the process exits with status 0 unless `done` closes within [`STOP_DEADLINE`] (a
/// `decide` that never returns). The signals are registered before this returns.
pub fn watch_stop_signals(
    parent_pid: Option<i32>,
    stop: watch::Sender<bool>,
    done: std_mpsc::Receiver<()>,
) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let (mut term, mut int) = {
        let _inside = runtime.enter();
        (signal(SignalKind::terminate())?, signal(SignalKind::interrupt())?)
    };
    let watch = move || {
        let why = runtime.block_on(async {
            let parent = async {
                match parent_pid {
                    Some(pid) => parent::gone(pid).await,
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
                () = parent => "the parent process is gone",
            }
        });
        log::info!("{why}: closing the session");
        let _ = stop.send(true);
        if let Err(std_mpsc::RecvTimeoutError::Timeout) = done.recv_timeout(STOP_DEADLINE) {
            log::warn!("{why}: the session did not close within {:.2} s; exiting now", STOP_DEADLINE.as_secs_f64());
            log::logger().flush();
            std::process::exit(0);
        }
    };
    std::thread::Builder::new().name("skyjo-bot-signals".into()).spawn(watch)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_five_seconds_with_jitter() {
        let settings = Settings { addr: "127.0.0.1:1".into(), token: "t".repeat(20), ..Settings::from_env() };
        let settings =
            Settings { ca_file: String::new(), client_cert: String::new(), client_key: String::new(), ..settings };
        let config = settings.resolve("bot".into(), String::new()).unwrap();
        for (attempt, full_ms) in [(0, 100), (1, 200), (3, 800), (6, 5000), (30, 5000)] {
            let ms = config.backoff(attempt).as_secs_f64() * 1000.0;
            assert!(ms >= full_ms as f64 * 0.5 - 1e-6 && ms <= full_ms as f64 + 1e-6, "attempt {attempt}: {ms} ms");
        }
    }

    #[test]
    fn missing_settings_are_usage_errors() {
        let empty = Settings {
            addr: String::new(),
            token: String::new(),
            ca_file: String::new(),
            client_cert: String::new(),
            client_key: String::new(),
            give_up_after: Duration::from_secs(1),
            stop_on_signals: false,
        };
        let no_addr = empty.resolve("b".into(), String::new()).err().unwrap();
        assert!(no_addr.to_string().contains("set SKYJO_ADDR") && no_addr.exit_code() == 2);
        let no_token = Settings { addr: "unix:/x".into(), ..empty.clone() }.resolve("b".into(), String::new());
        assert!(no_token.err().unwrap().to_string().contains("set SKYJO_TOKEN"));
        let bad = Settings { addr: "nowhere".into(), token: "x".into(), ..empty };
        assert!(bad.resolve("b".into(), String::new()).err().unwrap().to_string().contains("expected HOST:PORT"));
    }
}
