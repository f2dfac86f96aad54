import { request, type DeviceConnection } from './device-request.js';
import { Capability } from '../admin-api/capability.js';
import { parseWire } from '../admin-api/wire-shape.js';

/** Services and appliance endpoints. A 429 on a restart is waited out inside request(). */

export async function restartNetworking(connection: DeviceConnection): Promise<void> {
  await request(connection, { method: 'PUT', path: '/service/networking/?action=restart', body: { json: {} } });
}

export async function reboot(connection: DeviceConnection): Promise<void> {
  await request(connection, { method: 'PUT', path: '/appliance/?action=reboot', body: { json: {} } });
}

export async function getCapability(connection: DeviceConnection): Promise<Capability> {
  const answer = await request(connection, { method: 'GET', path: '/appliance/capability' });
  return answer.read((json) => parseWire(Capability, json));
}
