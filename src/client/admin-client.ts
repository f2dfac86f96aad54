import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { Client } from '../core/undici.js';
import { ErrorCode, MpprovError } from '../core/errors.js';
import { connectorsFor, peerUrl, refusedConnect } from '../http/index.js';
import { addAcl, deleteAcl, listAcl } from './acl-endpoints.js';
import type { AclRule } from '../admin-api/acl-rule.js';
import type { Capability } from '../admin-api/capability.js';
import type { DeviceClock } from '../admin-api/device-clock.js';
import type { ConfigState, DeviceInterface } from '../admin-api/device-interface.js';
import type { DeviceConnection } from './device-request.js';
import type { ClientOptions, DeviceTarget } from './device-target.js';
import { deleteStanza, getInterface, listInterfaces, postStanza, updateStanza } from './interface-endpoints.js';
import { getCapability, reboot, restartNetworking } from './service-endpoints.js';
import type { PostedStanza, StanzaUpdate } from '../admin-api/stanza.js';
import type { FileSlot, Family } from '../admin-api/vocabulary.js';
import { uploadFiles, type UploadedFile } from './upload-files.js';
import { waitUntilAnswering, type WaitOptions } from './wait-until-answering.js';

/** The Admin API v1 of one Monitoring Point. Passed in to whoever needs it, never a singleton. */
export interface AdminApi {
  /** `https://host:port` */
  readonly url: string;
  listInterfaces(state: ConfigState): Promise<DeviceInterface[]>;
  /** Undefined when the device has no stanza of that interface in that state (404). */
  getInterface(name: string, state: ConfigState): Promise<DeviceInterface | undefined>;
  /** POST /interface/: creates or replaces one family stanza; it becomes pending. */
  postStanza(stanza: PostedStanza): Promise<void>;
  /** PUT /interface/{name}/: changes fields of an existing (wireless) stanza. */
  updateStanza(name: string, fields: StanzaUpdate): Promise<void>;
  /** DELETE /interface/{name}/?family=: marks the stanza for removal at the next restart. */
  deleteStanza(name: string, family: Family): Promise<void>;
  /** POST /interface/file/: one multipart request (more when two files share a slot); the stored name per slot. */
  uploadFiles(files: readonly UploadedFile[]): Promise<Partial<Record<FileSlot, string>>>;
  /** PUT /service/networking/?action=restart (202); a 429 is waited out (Retry-After), a bounded number of times. */
  restartNetworking(): Promise<void>;
  /** PUT /appliance/?action=reboot (202). */
  reboot(): Promise<void>;
  getCapability(): Promise<Capability>;
  listAcl(): Promise<AclRule[]>;
  addAcl(rule: AclRule): Promise<void>;
  deleteAcl(rule: AclRule): Promise<void>;
  /**
   * After a restart: probes the active view (one attempt each, every 50 ms, knocks every 5 ms while
   * the port refuses, 1 s after half the wait) until an answer satisfies `until` (default: any answer) or `timeoutMs` passes
   * (DeviceNotAnsweringError). Refused, reset and timed-out probes are expected meanwhile and
   * reported through `onAttempt` (a 429 too, its Retry-After waited out); TLS, pin and credential failures end it. Returns the active
   * view of the answer that ended the wait.
   */
  waitUntilAnswering(options: WaitOptions): Promise<DeviceInterface[]>;
  /** The device's clock from its last answer's Date header; undefined before any answer (or from a fake). */
  deviceClock?(): DeviceClock | undefined;
  /**
   * Closes the device's connection. Called once the caller's requests have settled: what undici
   * may still hold is a request given up by its deadline or stop while waiting for its connect.
   */
  close(): Promise<void>;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/**
 * One client per device: one keep-alive HTTPS connection (an undici Client, requests one at a
 * time), HTTP Basic on every request, the certificate checked as `target.trust` says. Throws a
 * ConfigInvalid MpprovError for an unusable target (URL, pin, CA, user name).
 */
export function createAdminClient(target: DeviceTarget, options: ClientOptions = {}): AdminApi {
  const url = deviceOrigin(target.url);
  checkTarget(target);
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  // The main connection and every probe's share one TLS context (connectorsFor).
  const connector = connectorsFor(target.trust);
  const dispatcher = new Client(url, {
    connect: connector(connectTimeoutMs),
    pipelining: 1,
    headersTimeout: requestTimeoutMs,
    bodyTimeout: requestTimeoutMs,
  });
  if (target.trust.kind === 'insecure') {
    options.onWarning?.(
      `WARNING: TLS certificate verification is OFF for ${url}: anything on the network path can pose as this device ` +
        `and capture the password of ${target.username}; pin the device's SHA-256 certificate fingerprint or configure its CA instead`,
    );
  }
  let clock: DeviceClock | undefined;
  const connection: DeviceConnection = {
    url,
    onClock: (date, receivedAt) => {
      const deviceTime = new Date(date);
      // A Date header that does not parse says nothing about the clock: the last good one stands.
      if (!Number.isNaN(deviceTime.getTime())) clock = { deviceTime, localTime: receivedAt };
    },
    dispatcher,
    username: target.username,
    password: target.password,
    connectTimeoutMs,
    requestTimeoutMs,
    onRetry: options.onRetry,
    signal: options.signal,
    // A probe's socket is its own: a connect that hangs (a device half up) is destroyed with it
    // and cannot hold the next probe, or later requests, behind it.
    openProbe: (probeTimeoutMs) =>
      new Client(url, {
        connect: connector(Math.min(probeTimeoutMs, connectTimeoutMs)),
        pipelining: 1,
        headersTimeout: probeTimeoutMs,
        bodyTimeout: probeTimeoutMs,
      }),
    knock: knockFor(url),
  };
  let closing: Promise<void> | undefined;
  // A cut run must not wait for a connection that never completes its handshake or its answer:
  // the signal destroys the connection at once (close() would wait for the request under way).
  const destroy = (): void => void dispatcher.destroy().catch(() => undefined);
  options.signal?.addEventListener('abort', destroy, { once: true });
  return {
    url,
    listInterfaces: (state) => listInterfaces(connection, state),
    getInterface: (name, state) => getInterface(connection, name, state),
    postStanza: (stanza) => postStanza(connection, stanza),
    updateStanza: (name, fields) => updateStanza(connection, name, fields),
    deleteStanza: (name, family) => deleteStanza(connection, name, family),
    uploadFiles: (files) => uploadFiles(connection, files),
    restartNetworking: () => restartNetworking(connection),
    reboot: () => reboot(connection),
    getCapability: () => getCapability(connection),
    listAcl: () => listAcl(connection),
    addAcl: (rule) => addAcl(connection, rule),
    deleteAcl: (rule) => deleteAcl(connection, rule),
    waitUntilAnswering: (waitOptions) => waitUntilAnswering(connection, waitOptions),
    deviceClock: () => clock,
    close: () => {
      options.signal?.removeEventListener('abort', destroy);
      // destroy, not close: undici's close waits for every request it holds, and a request given
      // up (send-request.ts) while a device held its handshake would hold the close, and the
      // device's lock and concurrency slot with it, until the connect timed out.
      return (closing ??= dispatcher.destroy());
    },
  };
}

/**
 * A knock gives up after this long without an answer and leaves the probe to the full request: a
 * device on the path answers a TCP connect (accepted or refused) within a few milliseconds; one
 * that answers nothing is the full probe's to time out and name.
 */
const KNOCK_DEADLINE_MS = 100;

/** The knock for a device addressed by IP (the origin's host and port); none for a name. */
function knockFor(origin: string): DeviceConnection['knock'] {
  const parsed = new URL(origin);
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) === 0) return undefined;
  const port = parsed.port === '' ? 443 : Number(parsed.port);
  return (deadlineMs, signal) => refusedConnect(host, port, Math.min(deadlineMs, KNOCK_DEADLINE_MS), signal);
}

const invalid = (message: string) => new MpprovError(ErrorCode.ConfigInvalid, message);

/** `https://host[:port]` with nothing else; the canonical origin (no trailing slash). */
function deviceOrigin(text: string): string {
  const parsed = peerUrl(text, 'device', 'https://host[:port]');
  if (parsed.pathname !== '/' || parsed.search !== '' || parsed.hash !== '') {
    throw invalid(`the device URL "${text}" must be https://host[:port] without a path; the client adds /api/v1`);
  }
  return parsed.origin;
}

function checkTarget(target: DeviceTarget): void {
  // RFC 7617: the user-id of Basic credentials cannot contain a colon.
  if (target.username === '' || target.username.includes(':')) {
    throw invalid(`the device user name "${target.username}" must be non-empty and without ":"`);
  }
  if (target.trust.kind === 'ca') {
    try {
      new X509Certificate(target.trust.caPem);
    } catch {
      throw invalid(`the CA configured for ${target.url} is not a PEM certificate`);
    }
  }
  // A fingerprint is checked by connectorsFor (normaliseFingerprint throws ConfigInvalid).
}
