import type { FieldChange } from './compare-stanzas.js';
import type { DesiredAclRule, DesiredFile, DesiredStanza, DeviceInterfaceView, Family, SecretField, StanzaFields } from './stanza.js';
import type { Secret } from '../config/index.js';

/** What the device reported before planning: the plan's only view of the world. */
export interface DeviceSnapshot {
  active: DeviceInterfaceView[];
  pending: DeviceInterfaceView[];
  /** Non-default ACL rules; undefined when not read (the file does not manage ACLs). */
  acl: DesiredAclRule[] | undefined;
  capability: DeviceCapability | undefined;
}

export interface DeviceCapability {
  interfaces: Record<string, { autoneg?: boolean; speeds?: number[]; duplex?: string[]; wireless?: boolean }>;
}

export interface PlanOptions {
  allowDisconnect: boolean;
  discardPending: boolean;
  /** Whether `value` is what the agent last applied to this stanza's secret field. */
  secretKnown: (stanzaKey: string, field: SecretField, value: Secret) => boolean;
}

export const StanzaAction = { Create: 'create', Update: 'update', Delete: 'delete', Unchanged: 'unchanged' } as const;
export type StanzaAction = (typeof StanzaAction)[keyof typeof StanzaAction];

export interface StanzaChange {
  name: string;
  family: Family;
  action: StanzaAction;
  changes: FieldChange[];
  /** Secret fields that will be sent but equal what was last applied. */
  unchangedSecrets: SecretField[];
}

/** A stanza as verification expects to find it; `null` means it must be gone. */
export interface ExpectedStanza {
  name: string;
  family: Family;
  stanza: DesiredStanza | null;
}

export type Step =
  | { kind: 'restore-stanza'; name: string; family: Family; fields: StanzaFields; reason: string }
  | { kind: 'upload-files'; files: DesiredFile[] }
  | { kind: 'delete-stanza'; name: string; family: Family; reason: string }
  | { kind: 'post-stanza'; stanza: DesiredStanza; action: 'create' | 'update' }
  | { kind: 'verify-pending'; expected: ExpectedStanza[] }
  | { kind: 'restart-networking'; reason: string; expected: ExpectedStanza[] }
  | { kind: 'verify-active'; expected: ExpectedStanza[] }
  | { kind: 'add-acl-rule'; rule: DesiredAclRule }
  | { kind: 'remove-acl-rule'; rule: DesiredAclRule };

export interface PlanRefusal {
  /** Stable reason: branch on this, never on the sentence. */
  reason: 'foreign-pending' | 'lockout' | 'device-rule' | 'cannot-restore';
  message: string;
}

export interface Plan {
  device: { name: string; url: string };
  managementInterface: string | undefined;
  stanzas: StanzaChange[];
  steps: Step[];
  refusals: PlanRefusal[];
  /** True when applying would change anything on the device. */
  hasChanges: boolean;
}
