//! A small logger on stderr, installed by [`run`](crate::run) when the program has none: the SDK logs
//! through the `log` crate, so a bot may install its own logger instead (env_logger, ...).
//!
//! The level comes from `SKYJO_LOG` (`error`, `warn`, `info`, `debug`, `trace`; default `info`): `info`
//! says when the bot connects and stops, `warn` strikes and reconnects, `debug` every message.

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use log::{LevelFilter, Log, Metadata, Record};

struct StderrLogger;

impl Log for StderrLogger {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &Record<'_>) {
        if self.enabled(record.metadata()) {
            let line = format!("{} {} {} {}\n", timestamp(), record.target(), record.level(), record.args());
            let _ = std::io::stderr().lock().write_all(line.as_bytes());
        }
    }

    fn flush(&self) {
        let _ = std::io::stderr().flush();
    }
}

/// Install the stderr logger unless the program installed one; the level from `SKYJO_LOG`.
pub fn install() {
    let level = match std::env::var("SKYJO_LOG").unwrap_or_default().to_ascii_lowercase().as_str() {
        "error" => LevelFilter::Error,
        "warn" | "warning" => LevelFilter::Warn,
        "debug" => LevelFilter::Debug,
        "trace" => LevelFilter::Trace,
        "off" => LevelFilter::Off,
        _ => LevelFilter::Info,
    };
    if log::set_boxed_logger(Box::new(StderrLogger)).is_ok() {
        log::set_max_level(level);
    }
}

/// `2026-12-05 17:20:01.123` (UTC).
fn timestamp() -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = now.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // civil date from days since 1970-01-01 (Howard Hinnant's algorithm)
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}.{:03}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        now.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn timestamps_are_dates() {
        let stamp = super::timestamp();
        assert_eq!(stamp.len(), 23, "{stamp}");
        assert!(stamp.starts_with("20"), "{stamp}");
    }
}
