//! TLS for a bot reaching a referee over the network: the CA that signed the referee's certificate, and a
//! client certificate when the referee asks for one. From the builder, or `SKYJO_CA_FILE`,
//! `SKYJO_CLIENT_CERT`, `SKYJO_CLIENT_KEY` (the names every SDK and example reads).

use std::path::Path;

/// PEM contents: `ca` (the referee's CA), `cert` and `key` (this bot's, for mutual TLS).
#[derive(Clone, Debug)]
pub struct ClientTls {
    pub ca: Vec<u8>,
    pub identity: Option<(Vec<u8>, Vec<u8>)>,
}

fn pem(path: &str, what: &str, source: &str) -> Result<Vec<u8>, String> {
    if Path::new(path).is_dir() {
        return Err(format!("{what} {path} ({source}): is a folder: expected a PEM file"));
    }
    let data = std::fs::read(path).map_err(|e| format!("{what} {path} ({source}): cannot read: {e}"))?;
    if !data.windows(11).any(|w| w == b"-----BEGIN ") {
        return Err(format!("{what} {path} ({source}): not PEM: expected '-----BEGIN ...' lines"));
    }
    Ok(data)
}

/// The TLS to use, from the given files (empty: none): `None` without a CA file (plaintext).
/// The error names a file that cannot be used, or what is missing.
pub fn client_tls(ca_file: &str, cert_file: &str, key_file: &str) -> Result<Option<ClientTls>, String> {
    if ca_file.is_empty() {
        if !cert_file.is_empty() || !key_file.is_empty() {
            return Err("a client certificate needs TLS: set SKYJO_CA_FILE (the CA that signed the referee's \
                        certificate)"
                .into());
        }
        return Ok(None);
    }
    if cert_file.is_empty() != key_file.is_empty() {
        let missing = if cert_file.is_empty() { "SKYJO_CLIENT_CERT" } else { "SKYJO_CLIENT_KEY" };
        return Err(format!("a client certificate needs both its certificate and its key: set {missing}"));
    }
    let ca = pem(ca_file, "CA file", "SKYJO_CA_FILE")?;
    let identity = if cert_file.is_empty() {
        None
    } else {
        let cert = pem(cert_file, "client certificate", "SKYJO_CLIENT_CERT")?;
        Some((cert, pem(key_file, "client key", "SKYJO_CLIENT_KEY")?))
    };
    Ok(Some(ClientTls { ca, identity }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_ca_file_is_plaintext_and_half_a_client_certificate_is_refused() {
        assert!(client_tls("", "", "").unwrap().is_none());
        assert!(client_tls("", "c.pem", "k.pem").unwrap_err().contains("needs TLS"));
        assert!(client_tls("ca.pem", "c.pem", "").unwrap_err().contains("set SKYJO_CLIENT_KEY"));
        let missing = client_tls("/nonexistent/ca.pem", "", "").unwrap_err();
        assert!(missing.starts_with("CA file /nonexistent/ca.pem (SKYJO_CA_FILE): cannot read"), "{missing}");
        assert!(client_tls("/", "", "").unwrap_err().contains("is a folder"));
        let not_pem = client_tls("Cargo.toml", "", "").unwrap_err();
        assert!(not_pem.contains("not PEM"), "{not_pem}");
    }
}
