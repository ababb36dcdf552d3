package skyjo.bot;

import io.grpc.ChannelCredentials;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * TLS for a bot reaching a referee over the network: the CA that signed the referee's certificate, and a client
 * certificate when the referee asks for one. The same environment variables as every SDK: {@code SKYJO_CA_FILE},
 * {@code SKYJO_CLIENT_CERT}, {@code SKYJO_CLIENT_KEY}. A {@code unix:} address never uses TLS.
 *
 * @param ca the CA file (PEM)
 * @param cert this bot's certificate (PEM), or null
 * @param key the key of {@code cert} (PEM, PKCS#8), or null
 */
record TlsFiles(Path ca, Path cert, Path key) {
    /** The TLS the files ask for (null: plaintext), or an {@link IllegalArgumentException} naming a file that fails. */
    static TlsFiles of(String caFile, String certFile, String keyFile) {
        if (caFile.isEmpty()) {
            if (!certFile.isEmpty() || !keyFile.isEmpty()) {
                throw new IllegalArgumentException("a client certificate needs TLS: pass --ca-file PEM or set "
                        + "SKYJO_CA_FILE (the CA that signed the referee's certificate)");
            }
            return null;
        }
        if (certFile.isEmpty() != keyFile.isEmpty()) {
            String missing = certFile.isEmpty() ? "--client-cert (SKYJO_CLIENT_CERT)" : "--client-key (SKYJO_CLIENT_KEY)";
            throw new IllegalArgumentException(
                    "a client certificate needs both its certificate and its key: add " + missing);
        }
        Path ca = pem(caFile, "CA file", "--ca-file / SKYJO_CA_FILE");
        Path cert = certFile.isEmpty() ? null : pem(certFile, "client certificate", "--client-cert / SKYJO_CLIENT_CERT");
        Path key = keyFile.isEmpty() ? null : pem(keyFile, "client key", "--client-key / SKYJO_CLIENT_KEY");
        return new TlsFiles(ca, cert, key);
    }

    private static Path pem(String file, String what, String option) {
        Path path = Path.of(file);
        if (Files.isDirectory(path)) {
            throw new IllegalArgumentException(what + " " + file + " (" + option + "): is a folder: expected a PEM file");
        }
        String text;
        try {
            text = Files.readString(path, StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            throw new IllegalArgumentException(what + " " + file + " (" + option + "): cannot read: " + e);
        }
        if (!text.contains("-----BEGIN ")) {
            throw new IllegalArgumentException(what + " " + file + " (" + option + "): not PEM: expected '-----BEGIN ...' lines");
        }
        return path;
    }

    ChannelCredentials credentials() throws IOException {
        TlsChannelCredentials.Builder builder = TlsChannelCredentials.newBuilder().trustManager(ca.toFile());
        if (cert != null) {
            builder.keyManager(cert.toFile(), key.toFile());
        }
        return builder.build();
    }
}
