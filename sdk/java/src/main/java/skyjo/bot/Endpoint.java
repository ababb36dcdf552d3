package skyjo.bot;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A referee address: {@code HOST:PORT} (IPv6 in brackets) or {@code unix:PATH}, a Unix domain socket, which is how a
 * league bot without network reaches the referee. The forms the Python SDK's {@code address.py} accepts.
 *
 * @param text the address as given, without a {@code grpc://} prefix
 * @param host the host name or IP (for TCP), else null
 * @param port the port (for TCP), else -1
 * @param socketPath the socket's path (for {@code unix:}), else null
 */
record Endpoint(String text, String host, int port, String socketPath) {
    private static final Pattern HOST_PORT = Pattern.compile("^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9_.-]+):(\\d{1,5})$");

    /** The address in {@code given}, or an {@link IllegalArgumentException} saying what is wrong and what is expected. */
    static Endpoint parse(String given) {
        String address = given.strip();
        if (address.startsWith("grpc://")) {
            address = address.substring("grpc://".length());
        }
        if (address.startsWith("unix:")) {
            String path = address.substring("unix:".length());
            if (path.startsWith("//")) { // unix:///abs/path: an empty URI authority
                path = path.substring(2);
            }
            if (path.replace("/", "").isEmpty()) {
                throw new IllegalArgumentException("referee address '" + given
                        + "': expected a socket path after unix:, e.g. unix:/tmp/referee.sock");
            }
            return new Endpoint(address, null, -1, path);
        }
        Matcher match = HOST_PORT.matcher(address);
        if (!match.matches()) {
            throw new IllegalArgumentException("referee address '" + given
                    + "': expected HOST:PORT, e.g. 127.0.0.1:50051 or [::1]:50051, or unix:PATH");
        }
        int port = Integer.parseInt(match.group(2));
        if (port > 65535) {
            throw new IllegalArgumentException("referee address '" + given + "': the port must be 0-65535");
        }
        String host = match.group(1);
        if (host.startsWith("[")) {
            host = host.substring(1, host.length() - 1);
        }
        return new Endpoint(address, host, port, null);
    }

    boolean isUnix() {
        return socketPath != null;
    }

    @Override
    public String toString() {
        return text;
    }
}
