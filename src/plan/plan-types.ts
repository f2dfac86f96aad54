import type {
  AclRule,
  Capability,
  DeviceClock,
  DeviceInterface,
  Family,
  FileSlot,
  Stanza,
  StanzaSettings,
  WriteOnlyField,
} from '../admin-api/index.js';
import type { Secret } from '../core/secret.js';

/**
 * The plan's own types: what the stick wants (Desired*), what the device reported (DeviceSnapshot)
 * and the steps between them. The device's things themselves (stanza, interface view, ACL rule,
 * capability) are admin-api's zod types, the same ones the client returns.
 */

export interface DesiredStanza {
  name: string;
  family: Family;
  /** Every setting the device can show back, as it will be posted. */
  fields: StanzaSettings;
  /** Write-only fields, posted with the stanza, never shown. */
  secrets: Partial<Record<WriteOnlyField, Secret>>;
  /** With 802.1X: what the stick says about it, to explain a port that does not authorize it. */
  dot1x?: Dot1xFacts;
}

/**
 * The stick's 802.1X settings of one interface in the stick's own words (files by the path the
 * technician wrote, never a secret), and what this run's validation warned about them: the
 * material for a failure explanation the technician can act on.
 */
export interface Dot1xFacts {
  eap: 'peap' | 'tls' | 'md5';
  /** PEAP only. */
  inner?: 'mschapv2' | 'tls';
  wireless: boolean;
  identity: string;
  anonymousIdentity?: string;
  /** The CA that verifies the RADIUS server (the inner set's for PEAP with inner TLS is `innerCaCert`). */
  caCert?: string;
  innerCaCert?: string;
  /** The client certificate the port judges (TLS: the set's own; PEAP with inner TLS: the inner one). */
  clientCert?: { source: string; notBefore?: string; notAfter?: string };
  /**
   * Every other certificate the interface's 802.1X installs: the `ca_cert` chain (and the inner
   * set's), a PFX's or a client_cert file's extra certificates. `key` is relative to the block
   * (`ca_cert`, `inner_tls.private_key`); `label` names the file and, among several, which one.
   */
  otherCertificates?: { key: string; label: string; notBefore: string; notAfter: string }[];
  /** Validator warnings of this run inside the dot1x block; `key` is the key they point at, relative to the block (`client_cert`, `inner_tls.ca_cert`, `` for the block). */
  warnings: { key: string; message: string }[];
}

export interface DesiredFile {
  slot: FileSlot;
  /** Content-derived name, so an unchanged file is never uploaded again. */
  filename: string;
  bytes: Buffer;
  /** Where the stick named it, for messages. */
  source: string;
}

export interface DesiredInterface {
  name: string;
  /** The parent of a VLAN. */
  vlanParent?: string;
  wireless: boolean;
  stanzas: DesiredStanza[];
}

export interface DesiredDevice {
  name: string;
  url: string;
  interfaces: DesiredInterface[];
  files: DesiredFile[];
  /** Undefined when the file has no `acl` key: the device's rules are then left alone. */
  acl: AclRule[] | undefined;
  prune: boolean;
  allowDisconnect: boolean;
}

/** What the device reported before planning: the plan's only view of the world. */
export interface DeviceSnapshot {
  active: DeviceInterface[];
  pending: DeviceInterface[];
  /** Non-default ACL rules; undefined when not read (the file does not manage ACLs). */
  acl: AclRule[] | undefined;
  capability: Capability | undefined;
  /** The device's clock from its answers' Date header; undefined when it sent none. */
  clock?: DeviceClock | undefined;
}

export interface PlanOptions {
  allowDisconnect: boolean;
  discardPending: boolean;
  /** Whether `value` is what the agent last applied to this stanza's write-only field. */
  secretKnown: (stanzaKey: string, field: WriteOnlyField, value: Secret) => boolean;
  /** The addresses the device URL's host resolved to (apply resolves them; plan stays pure). */
  hostAddresses?: readonly string[];
}

export interface FieldChange {
  field: string;
  /** Normalised old and new values; for write-only fields only whether they were or will be set. */
  from: unknown;
  to: unknown;
  secret: boolean;
}

/** Tells whether a secret equals what the agent last applied to this stanza (secrets cannot be read back). */
export type SecretKnown = (field: WriteOnlyField, value: Secret) => boolean;

type StanzaAction = 'create' | 'update' | 'delete' | 'unchanged';

export interface StanzaChange {
  name: string;
  family: Family;
  action: StanzaAction;
  changes: FieldChange[];
  /** Write-only fields that will be sent but equal what was last applied. */
  unchangedSecrets: WriteOnlyField[];
}

/** A stanza as verification expects to find it; `null` means it must be gone. */
export interface ExpectedStanza {
  name: string;
  family: Family;
  stanza: DesiredStanza | null;
}

export type Step =
  /** `fields`: the device's own active stanza, settings only, unknown fields kept (configFields). */
  | { kind: 'restore-stanza'; name: string; family: Family; fields: Stanza; reason: string }
  | { kind: 'upload-files'; files: DesiredFile[] }
  | { kind: 'delete-stanza'; name: string; family: Family; reason: string }
  | { kind: 'post-stanza'; stanza: DesiredStanza; action: 'create' | 'update' }
  | { kind: 'verify-pending'; expected: ExpectedStanza[] }
  | { kind: 'restart-networking'; reason: string; expected: ExpectedStanza[] }
  | { kind: 'verify-active'; expected: ExpectedStanza[] }
  | { kind: 'add-acl-rule'; rule: AclRule }
  | { kind: 'remove-acl-rule'; rule: AclRule };

export interface PlanRefusal {
  /** Stable reason: branch on this, never on the sentence. */
  reason: 'foreign-pending' | 'lockout' | 'device-rule' | 'cannot-restore' | 'device-clock';
  message: string;
}

export interface Plan {
  device: { name: string; url: string };
  managementInterface: string | undefined;
  stanzas: StanzaChange[];
  steps: Step[];
  refusals: PlanRefusal[];
  /** What the run should say but that does not stop it (a device clock that is off). */
  warnings: string[];
  /** True when applying would change anything on the device. */
  hasChanges: boolean;
}
