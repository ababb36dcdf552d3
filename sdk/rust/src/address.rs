//! Referee addresses: `HOST:PORT`, `[IPv6]:PORT` or `unix:PATH`, as the Python SDK's `address.py` accepts.

use std::fmt;
use std::path::PathBuf;

/// Where the referee listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Address {
    /// A TCP address; `host` keeps an IPv6 address's brackets.
    Tcp { host: String, port: u16 },
    /// A Unix domain socket (what a bot without network reaches the referee by).
    Unix(PathBuf),
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Address::Tcp { host, port } => write!(f, "{host}:{port}"),
            Address::Unix(path) => write!(f, "unix:{}", path.display()),
        }
    }
}

/// Read an address (a `grpc://` prefix is dropped); the error names what is wrong and what is expected.
pub fn parse_address(text: &str) -> Result<Address, String> {
    let address = text.trim();
    let address = address.strip_prefix("grpc://").unwrap_or(address);
    if let Some(rest) = address.strip_prefix("unix:") {
        // gRPC's forms: unix:relative/or/absolute and unix:///absolute
        let path = rest.strip_prefix("//").unwrap_or(rest);
        if path.trim_matches('/').is_empty() {
            return Err(format!(
                "referee address {text:?}: expected a socket path after unix:, e.g. unix:/tmp/referee.sock"
            ));
        }
        return Ok(Address::Unix(PathBuf::from(path)));
    }
    let expected =
        || format!("referee address {text:?}: expected HOST:PORT, e.g. 127.0.0.1:50051 or [::1]:50051, or unix:PATH");
    let (host, port) = address.rsplit_once(':').ok_or_else(expected)?;
    let host_ok = if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        !inner.is_empty() && inner.chars().all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
    } else {
        !host.is_empty() && host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    };
    if !host_ok || port.is_empty() || port.len() > 5 || !port.chars().all(|c| c.is_ascii_digit()) {
        return Err(expected());
    }
    let port: u32 = port.parse().map_err(|_| expected())?;
    let port = u16::try_from(port).map_err(|_| format!("referee address {text:?}: the port must be 0-65535"))?;
    Ok(Address::Tcp { host: host.to_string(), port })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_what_the_python_sdk_accepts() {
        let tcp = |host: &str, port| Ok(Address::Tcp { host: host.into(), port });
        assert_eq!(parse_address("127.0.0.1:50051"), tcp("127.0.0.1", 50051));
        assert_eq!(parse_address("grpc://ref.example.org:1"), tcp("ref.example.org", 1));
        assert_eq!(parse_address("[::1]:7"), tcp("[::1]", 7));
        assert_eq!(parse_address("unix:/tmp/r.sock"), Ok(Address::Unix("/tmp/r.sock".into())));
        assert_eq!(parse_address("unix:///tmp/r.sock"), Ok(Address::Unix("/tmp/r.sock".into())));
        assert_eq!(parse_address("unix:rel.sock"), Ok(Address::Unix("rel.sock".into())));
    }

    #[test]
    fn refuses_with_what_is_expected() {
        assert!(parse_address("localhost").unwrap_err().contains("expected HOST:PORT"));
        assert!(parse_address("a b:1").unwrap_err().contains("expected HOST:PORT"));
        assert!(parse_address("host:70000").unwrap_err().contains("the port must be 0-65535"));
        assert!(parse_address("unix:").unwrap_err().contains("expected a socket path"));
    }
}
