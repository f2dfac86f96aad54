import { AclRule, Interface, MonitoringPoint, NetworkPath, type StickFile, Tls } from './schema.js';

/**
 * When the schema refuses part of a file, the rest is still checked, so one typo does not hide
 * every other problem: this keeps, per Monitoring Point, each block that parses on its own
 * (an interface, an ACL entry, a path, tls, the plain keys) and drops the blocks the schema already
 * reported. The rules then run on what is left.
 */
export function salvageStick(data: unknown): StickFile | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  const points = (data as Record<string, unknown>).monitoring_points;
  if (!Array.isArray(points)) return undefined;
  return { version: 1, monitoring_points: points.map(salvageMonitoringPoint) };
}

function salvageMonitoringPoint(raw: unknown): MonitoringPoint {
  const mp = (raw !== null && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of ['name', 'url', 'username', 'password_file'] as const) {
    if (typeof mp[key] === 'string') out[key] = mp[key];
  }
  // Through its own schema, so the password comes out a Secret as in a valid file.
  const password = MonitoringPoint.shape.password.safeParse(mp.password);
  if (password.success && password.data !== undefined) out.password = password.data;
  for (const key of ['allow_disconnect', 'prune'] as const) if (typeof mp[key] === 'boolean') out[key] = mp[key];
  const tls = Tls.safeParse(mp.tls);
  if (tls.success) out.tls = tls.data;
  if (mp.interfaces !== null && typeof mp.interfaces === 'object' && !Array.isArray(mp.interfaces)) {
    const interfaces: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(mp.interfaces)) {
      // Said by map-keys.ts; assigned here it would become the map's prototype, not an entry.
      if (name === '__proto__') continue;
      const parsed = Interface.safeParse(value);
      if (parsed.success) interfaces[name] = parsed.data;
    }
    out.interfaces = interfaces;
  }
  // ACL entries keep their index (a hole where one did not parse) so problems name the right entry.
  if (Array.isArray(mp.acl))
    out.acl = (mp.acl as unknown[]).map((rule) => (AclRule.safeParse(rule).success ? rule : undefined));
  // Paths likewise: a duplicate target is still found beside a typo in another entry.
  if (Array.isArray(mp.paths))
    out.paths = (mp.paths as unknown[]).map((path) => (NetworkPath.safeParse(path).success ? path : undefined));
  return out as MonitoringPoint;
}
