/**
 * How the agent trusts a device's TLS certificate. Config resolves it from the stick and agent.yaml,
 * the client connects with it: one type here, below both, so neither imports the other for it.
 * Verification is on unless `insecure`.
 */
export type DeviceTrust =
  /** The SHA-256 fingerprint of the device's own certificate: 64 hex digits, colons optional, any case. */
  | { kind: 'fingerprint'; sha256: string }
  /** Verify the device's certificate chain and name against this CA (PEM). */
  | { kind: 'ca'; caPem: string }
  /** No verification at all; only when the operator asks, and said out loud (onWarning). */
  | { kind: 'insecure' };
