package skyjo

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// TLSFiles names the PEM files of TLS to the referee: CAFile (the CA that signed the referee's certificate),
// and CertFile and KeyFile (this bot's certificate, when the referee asks for one: serve --tls-client-ca).
// Empty fields default to SKYJO_CA_FILE, SKYJO_CLIENT_CERT and SKYJO_CLIENT_KEY.
type TLSFiles struct {
	CAFile, CertFile, KeyFile string
}

func readPEM(path, what, variable string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pathErr *os.PathError
		if errors.As(err, &pathErr) {
			err = pathErr.Err
		}
		return nil, fmt.Errorf("%s %s (%s): cannot read: %v", what, path, variable, err)
	}
	if !bytes.Contains(data, []byte("-----BEGIN ")) {
		return nil, fmt.Errorf("%s %s (%s): not PEM: expected '-----BEGIN ...' lines", what, path, variable)
	}
	return data, nil
}

// config is the TLS configuration these files make, or nil for plaintext (no CA file).
func (f TLSFiles) config() (*tls.Config, error) {
	orEnv := func(value, variable string) string {
		if value != "" {
			return value
		}
		return os.Getenv(variable)
	}
	ca, cert, key := orEnv(f.CAFile, "SKYJO_CA_FILE"), orEnv(f.CertFile, "SKYJO_CLIENT_CERT"), orEnv(f.KeyFile, "SKYJO_CLIENT_KEY")
	if ca == "" {
		if cert != "" || key != "" {
			return nil, errors.New("a client certificate needs TLS: set SKYJO_CA_FILE (the CA that signed the referee's certificate)")
		}
		return nil, nil
	}
	if (cert == "") != (key == "") {
		return nil, errors.New("a client certificate needs both its certificate and its key: set SKYJO_CLIENT_CERT and SKYJO_CLIENT_KEY")
	}
	caPEM, err := readPEM(ca, "CA file", "SKYJO_CA_FILE")
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("CA file %s (SKYJO_CA_FILE): no certificate in it", ca)
	}
	config := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cert != "" {
		certPEM, err := readPEM(cert, "client certificate", "SKYJO_CLIENT_CERT")
		if err != nil {
			return nil, err
		}
		keyPEM, err := readPEM(key, "client key", "SKYJO_CLIENT_KEY")
		if err != nil {
			return nil, err
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("SKYJO_CLIENT_CERT/SKYJO_CLIENT_KEY: %v", err)
		}
		config.Certificates = []tls.Certificate{pair}
	}
	return config, nil
}
