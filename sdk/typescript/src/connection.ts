/**
 * Where and how to reach the referee: the address (`HOST:PORT` or `unix:PATH`, as the Python SDK's
 * address.py accepts) and TLS from SKYJO_CA_FILE / SKYJO_CLIENT_CERT / SKYJO_CLIENT_KEY.
 *
 * A `unix:` address is an HTTP/2 session over a Unix domain socket (`createConnection` of node:http2):
 * what a league bot without network reaches the referee by. It never uses TLS.
 */

import { readFileSync } from 'node:fs';
import type * as http2 from 'node:http2';
import * as net from 'node:net';

/** A setting the bot cannot run with (exit code 2): the message names it and what is expected. */
export class UsageError extends Error {
  override name = 'UsageError';
}

const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$/;

/** `text` without a `grpc://` prefix if it is HOST:PORT (port 0-65535) or unix:PATH; else UsageError. */
export function checkAddress(text: string, what = 'referee address'): string {
  const address = text.trim().replace(/^grpc:\/\//, '');
  if (address.startsWith('unix:')) {
    if (address.slice('unix:'.length).replace(/\//g, '') === '') {
      throw new UsageError(`${what} '${text}': expected a socket path after unix:, e.g. unix:/tmp/referee.sock`);
    }
    return address;
  }
  const match = HOST_PORT.exec(address);
  if (match === null) {
    throw new UsageError(`${what} '${text}': expected HOST:PORT, e.g. 127.0.0.1:50051 or [::1]:50051, or unix:PATH`);
  }
  if (Number(match[2]) > 65535) throw new UsageError(`${what} '${text}': the port must be 0-65535`);
  return address;
}

/** The socket path of a `unix:` address (`unix:/abs`, `unix:rel` or `unix:///abs`), else null. */
export function unixPath(address: string): string | null {
  if (!address.startsWith('unix:')) return null;
  const rest = address.slice('unix:'.length);
  return rest.startsWith('//') ? rest.slice(2) : rest;
}

/** PEM contents: the referee's CA, and this bot's certificate and key for mutual TLS. */
export interface ClientTls {
  readonly ca: Buffer;
  readonly cert: Buffer | null;
  readonly key: Buffer | null;
}

export interface TlsFiles {
  caFile?: string | undefined;
  clientCert?: string | undefined;
  clientKey?: string | undefined;
}

function pem(path: string, what: string, option: string): Buffer {
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EISDIR') throw new UsageError(`${what} ${path} (${option}): is a folder: expected a PEM file`);
    throw new UsageError(`${what} ${path} (${option}): cannot read: ${(err as Error).message}`);
  }
  if (!data.includes('-----BEGIN ')) {
    throw new UsageError(`${what} ${path} (${option}): not PEM: expected '-----BEGIN ...' lines`);
  }
  return data;
}

/** The TLS a bot uses: the arguments, else the environment; null without a CA file (plaintext). */
export function clientTls(files: TlsFiles = {}, env: NodeJS.ProcessEnv = process.env): ClientTls | null {
  const caFile = files.caFile || env.SKYJO_CA_FILE || '';
  const certFile = files.clientCert || env.SKYJO_CLIENT_CERT || '';
  const keyFile = files.clientKey || env.SKYJO_CLIENT_KEY || '';
  if (!caFile) {
    if (certFile || keyFile) {
      throw new UsageError(
        'a client certificate needs TLS: pass --ca-file PEM or set SKYJO_CA_FILE (the CA that signed the referee\'s certificate)',
      );
    }
    return null;
  }
  if (Boolean(certFile) !== Boolean(keyFile)) {
    const missing = certFile ? '--client-key (SKYJO_CLIENT_KEY)' : '--client-cert (SKYJO_CLIENT_CERT)';
    throw new UsageError(`a client certificate needs both its certificate and its key: add ${missing}`);
  }
  return {
    ca: pem(caFile, 'CA file', '--ca-file / SKYJO_CA_FILE'),
    cert: certFile ? pem(certFile, 'client certificate', '--client-cert / SKYJO_CLIENT_CERT') : null,
    key: keyFile ? pem(keyFile, 'client key', '--client-key / SKYJO_CLIENT_KEY') : null,
  };
}

/** The base URL and node:http2 session options that reach `address` (with `tls`, unless it is unix:). */
export function endpoint(
  address: string,
  tls: ClientTls | null,
): { baseUrl: string; options: http2.ClientSessionOptions | http2.SecureClientSessionOptions } {
  const path = unixPath(address);
  if (path !== null) {
    // the authority is informational on a socket; the connection is the socket itself
    return { baseUrl: 'http://localhost', options: { createConnection: () => net.connect(path) } };
  }
  if (tls === null) return { baseUrl: `http://${address}`, options: {} };
  const options: http2.SecureClientSessionOptions = { ca: tls.ca };
  if (tls.cert !== null && tls.key !== null) {
    options.cert = tls.cert;
    options.key = tls.key;
  }
  return { baseUrl: `https://${address}`, options };
}
