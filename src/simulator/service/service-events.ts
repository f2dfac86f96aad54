import type { ObserverKind } from './observer-registry.js';
import type { PathRecord } from './path-registry.js';
import type { ApplianceJson, SimConnectionStatus } from './service-wire.js';

/**
 * The events the simulated service pushes (docs/service-model.md, "Observers and events"): every
 * documented common field (type, description, eventTime, sequencerName, sequencerHost, orgId,
 * orgName) and the fields of SEQUENCER_EVENT and SQA_EVENT. Plain objects, written as sent.
 */

/** The documented fields every event carries. */
interface CommonEventFields {
  description: string;
  /** Unix seconds. */
  eventTime: number;
  sequencerName: string;
  sequencerHost: string;
  orgId: number;
  orgName: string;
}

export interface SequencerEvent extends CommonEventFields {
  type: 'SEQUENCER_EVENT';
  sequencerStatus: SimConnectionStatus;
}

/** Its sequencerName is the path's source MP (documented). */
export interface SqaEvent extends CommonEventFields {
  type: 'SQA_EVENT';
  target: string;
  pathId: number;
  pathName: string;
  pathServiceQuality: 'SQA_NOT_VIOLATED' | 'SQA_VIOLATED';
  measuredParam: 'CONNECTIVITY';
  measuredValue: number;
  deepLink: string;
  importance: number;
  tags: { id: number; orgid: number; category: string; value: string }[];
}

export type ServiceEvent = SequencerEvent | SqaEvent;

/** The observer flag that selects each kind (documented). */
export const EVENT_FLAG = { SEQUENCER_EVENT: 'seqEvents', SQA_EVENT: 'sqaEvents' } as const satisfies Record<
  ServiceEvent['type'],
  ObserverKind
>;

/** A connectivity alert's importance: the model's middle of the documented 1 to 10. */
const CONNECTIVITY_IMPORTANCE = 5;

export function sequencerEvent(
  appliance: ApplianceJson,
  status: SimConnectionStatus,
  orgName: string,
  atMs: number,
): SequencerEvent {
  return {
    type: 'SEQUENCER_EVENT',
    description: `Monitoring Point ${appliance.name} is ${status}`,
    eventTime: Math.floor(atMs / 1000),
    sequencerName: appliance.name,
    sequencerHost: appliance.hostname,
    orgId: appliance.orgId,
    orgName,
    sequencerStatus: status,
  };
}

/** CONNECTIVITY 0.0 (lost) or 1.0 (regained) on a dual-ended path whose target MP went away or came back. */
export function connectivityEvent(
  path: PathRecord,
  source: ApplianceJson,
  orgName: string,
  value: 0 | 1,
  atMs: number,
  deepLinkBase: string,
): SqaEvent {
  return {
    type: 'SQA_EVENT',
    description: `Connectivity to ${path.target} ${value === 0 ? 'lost' : 'regained'} on path ${path.pathName}`,
    eventTime: Math.floor(atMs / 1000),
    sequencerName: source.name,
    sequencerHost: source.hostname,
    orgId: path.orgId,
    orgName,
    target: path.target,
    pathId: path.id,
    pathName: path.pathName,
    pathServiceQuality: value === 0 ? 'SQA_VIOLATED' : 'SQA_NOT_VIOLATED',
    measuredParam: 'CONNECTIVITY',
    measuredValue: value,
    deepLink: `${deepLinkBase}/pvc/pathdetail.html?pathId=${path.id}`,
    importance: CONNECTIVITY_IMPORTANCE,
    tags: [],
  };
}
