import { z } from 'zod';
import { request, type DeviceConnection, type DeviceRequest } from './device-request.js';
import {
  normaliseInterfaces,
  normaliseOneInterface,
  type ConfigState,
  type DeviceInterface,
} from '../admin-api/device-interface.js';
import type { PostedStanza, StanzaUpdate } from '../admin-api/stanza.js';
import type { Family } from '../admin-api/vocabulary.js';
import { parseWire } from '../admin-api/wire-shape.js';

/** The interface endpoints of Admin API v1, one function each. */

const InterfaceList = z.looseObject({ interfaces: z.array(z.unknown()) });
const OneInterface = z.looseObject({ interface: z.unknown() });

const interfacePath = (name: string) => `/interface/${encodeURIComponent(name)}/`;

/** `attempt`: one try with its own deadline, for waitUntilAnswering's probes. */
/** The request listInterfaces makes: the view of one configuration state. */
export function listRequest(state: ConfigState): { method: 'GET'; path: string } {
  return { method: 'GET', path: `/interface/?config_state=${state}` };
}

export async function listInterfaces(
  connection: DeviceConnection,
  state: ConfigState,
  attempt: Pick<DeviceRequest, 'once' | 'timeoutMs' | 'signal'> = {},
): Promise<DeviceInterface[]> {
  const answer = await request(connection, { ...listRequest(state), ...attempt });
  return answer.read((json) => normaliseInterfaces(parseWire(InterfaceList, json).interfaces, state));
}

/** Undefined when the device answers 404: the interface has no stanza in that state. */
export async function getInterface(
  connection: DeviceConnection,
  name: string,
  state: ConfigState,
): Promise<DeviceInterface | undefined> {
  const answer = await request(connection, {
    method: 'GET',
    path: `${interfacePath(name)}?config_state=${state}`,
    answers: [404],
  });
  if (answer.status === 404) return undefined;
  return answer.read((json) => {
    // Older firmware puts the interface (flat or with families) at the top level of the answer.
    const value = 'interface' in json ? parseWire(OneInterface, json).interface : json;
    return normaliseOneInterface(value, name, state);
  });
}

export async function postStanza(connection: DeviceConnection, stanza: PostedStanza): Promise<void> {
  await request(connection, {
    method: 'POST',
    path: '/interface/',
    subject: `${stanza.name} ${stanza.family}`,
    body: { json: stanza },
  });
}

export async function updateStanza(connection: DeviceConnection, name: string, fields: StanzaUpdate): Promise<void> {
  await request(connection, {
    method: 'PUT',
    path: interfacePath(name),
    subject: `${name} ${fields.family}`,
    body: { json: fields },
  });
}

export async function deleteStanza(connection: DeviceConnection, name: string, family: Family): Promise<void> {
  await request(connection, { method: 'DELETE', path: `${interfacePath(name)}?family=${family}` });
}
