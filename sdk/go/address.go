package skyjo

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var hostPort = regexp.MustCompile(`^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$`)

// CheckAddress returns addr without a grpc:// prefix if it is HOST:PORT (port 0-65535) or unix:PATH (a Unix
// domain socket: what a bot without network reaches the referee by), else an error saying what is expected.
func CheckAddress(addr string) (string, error) {
	address := strings.TrimPrefix(strings.TrimSpace(addr), "grpc://")
	if strings.HasPrefix(address, "unix:") {
		if strings.Trim(address[len("unix:"):], "/") == "" {
			return "", fmt.Errorf("referee address %q: expected a socket path after unix:, e.g. unix:/tmp/referee.sock", addr)
		}
		return address, nil
	}
	match := hostPort.FindStringSubmatch(address)
	if match == nil {
		return "", fmt.Errorf("referee address %q: expected HOST:PORT, e.g. 127.0.0.1:50051 or [::1]:50051, or unix:PATH", addr)
	}
	if port, _ := strconv.Atoi(match[2]); port > 65535 {
		return "", fmt.Errorf("referee address %q: the port must be 0-65535", addr)
	}
	return address, nil
}
