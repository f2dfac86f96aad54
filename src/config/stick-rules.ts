import { atMostOneSecret } from './dot1x-rules.js';
import { checkInterfaces } from './interface-rules.js';
import { pathTargetKey } from './path-target.js';
import { type KeyPath, Severity, type UnplacedProblem } from '../core/problem.js';
import { wasRefused } from './salvage-by-schema.js';
import type { AclRule, MonitoringPoint, NetworkPath, StickFile, Tls } from './schema.js';

/** Rules across keys of the whole file, run after the schema has accepted its shape. */
export function checkStickRules(stick: StickFile): UnplacedProblem[] {
  const problems: UnplacedProblem[] = [];
  const seenUrls = new Map<string, number>();
  const seenNames = new Map<string, number>();

  stick.monitoring_points.forEach((mp, index) => {
    const at: KeyPath = ['monitoring_points', index];
    problems.push(...checkMonitoringPoint(mp, at));
    // A salvaged entry (schema problems elsewhere) may lack its name or url: those were reported.
    const url = typeof mp.url === 'string' ? normaliseDeviceUrl(mp.url) : undefined;
    const firstUrl = url === undefined ? undefined : seenUrls.get(url);
    if (firstUrl !== undefined) {
      problems.push(duplicate([...at, 'url'], `device ${url} is listed twice (also monitoring_points[${firstUrl}])`));
    } else if (url !== undefined) seenUrls.set(url, index);
    if (typeof mp.name !== 'string') return;
    const firstName = seenNames.get(mp.name);
    if (firstName !== undefined) {
      problems.push(
        duplicate([...at, 'name'], `name '${mp.name}' is used twice (also monitoring_points[${firstName}])`),
      );
    } else seenNames.set(mp.name, index);
  });
  return problems;
}

function duplicate(path: KeyPath, message: string): UnplacedProblem {
  return { severity: Severity.Error, path, message, hint: 'give each Monitoring Point one entry with its own name' };
}

function checkMonitoringPoint(mp: MonitoringPoint, at: KeyPath): UnplacedProblem[] {
  const problems: UnplacedProblem[] = [];
  const urlProblem = typeof mp.url === 'string' ? deviceUrlProblem(mp.url) : undefined;
  if (urlProblem !== undefined) problems.push({ severity: Severity.Error, path: [...at, 'url'], ...urlProblem });
  problems.push(...atMostOneSecret(mp, 'password', at));
  if (mp.tls !== undefined) problems.push(...checkTls(mp.tls, [...at, 'tls']));
  if (mp.interfaces !== undefined) problems.push(...checkInterfaces(mp.interfaces, [...at, 'interfaces']));
  mp.acl?.forEach((rule, index) => {
    if (rule !== undefined) problems.push(...checkAclRule(rule, [...at, 'acl', index]));
  });
  if (mp.paths !== undefined) problems.push(...checkPaths(mp.paths, [...at, 'paths']));
  return problems;
}

/** One path per (MP, target): the service refuses a second, so a stick asking twice is a mistake. */
function checkPaths(paths: readonly (NetworkPath | undefined)[], at: KeyPath): UnplacedProblem[] {
  const problems: UnplacedProblem[] = [];
  const seen = new Map<string, number>();
  paths.forEach((path, index) => {
    // A salvaged entry may lack its target: that was reported by the schema.
    if (typeof path?.target !== 'string') return;
    const key = pathTargetKey(path.target);
    const first = seen.get(key);
    if (first === undefined) {
      seen.set(key, index);
      return;
    }
    problems.push({
      severity: Severity.Error,
      path: [...at, index, 'target'],
      message: `target '${path.target}' is listed twice for this Monitoring Point (also paths[${first}])`,
      hint: 'one path per target: remove one entry, or merge their location',
    });
  });
  return problems;
}

/** The device base URL: https, a host, an optional port, nothing else. */
export function normaliseDeviceUrl(text: string): string | undefined {
  if (deviceUrlProblem(text) !== undefined) return undefined;
  const url = new URL(text);
  return `${url.protocol}//${url.host}`;
}

function deviceUrlProblem(text: string): { message: string; hint: string } | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Quote it without any user:password@ part: a URL that does not parse may still hold one.
    return { message: `'${withoutCredentials(text)}' is not a URL`, hint: 'write it like https://192.0.2.10' };
  }
  if (url.protocol !== 'https:') {
    return {
      message: `the Admin API is HTTPS only, not ${url.protocol.replace(':', '')}`,
      hint: `write https://${url.host}`,
    };
  }
  if (url.username !== '' || url.password !== '') {
    // Never echo the URL here: it holds credentials.
    return {
      message: 'the URL must not hold credentials',
      hint: 'put the user in username: and the password in password_file:',
    };
  }
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') {
    return {
      message: `'${text}' has a path; give only https://host[:port]`,
      hint: `write https://${url.host} (mpprov adds /api/v1)`,
    };
  }
  return undefined;
}

function withoutCredentials(text: string): string {
  return text.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^@]*@/i, '$1(credentials removed)@');
}

const FINGERPRINT = /^(?:[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){31}|[0-9a-fA-F]{64})$/;

function checkTls(tls: Tls, at: KeyPath): UnplacedProblem[] {
  const problems: UnplacedProblem[] = [];
  const chosen = [
    tls.fingerprint_sha256 !== undefined ? 'fingerprint_sha256' : undefined,
    tls.ca !== undefined ? 'ca' : undefined,
    tls.insecure === true ? 'insecure' : undefined,
  ].filter((k): k is string => k !== undefined);
  // A way the schema refused was still written: "names no way" would send the person looking for nothing.
  const refused = ['fingerprint_sha256', 'ca', 'insecure'].some((key) => wasRefused(tls, key));
  if (chosen.length === 0 && !refused) {
    problems.push({
      severity: Severity.Error,
      path: at,
      message: 'tls names no way to trust the device',
      hint: 'give fingerprint_sha256, ca, or insecure: true (or leave tls out to use agent.yaml)',
    });
  }
  if (chosen.length > 1) {
    problems.push({
      severity: Severity.Error,
      path: at,
      message: `tls takes exactly one of fingerprint_sha256, ca, insecure: true; this one has ${chosen.join(' and ')}`,
      hint: 'keep only the one you mean',
    });
  }
  if (tls.fingerprint_sha256 !== undefined && !FINGERPRINT.test(tls.fingerprint_sha256)) {
    problems.push({
      severity: Severity.Error,
      path: [...at, 'fingerprint_sha256'],
      message: 'a SHA-256 fingerprint is 32 bytes in hex (64 hex digits, colons optional)',
      hint: 'copy it from `mpprov simulate` or `openssl x509 -noout -fingerprint -sha256`',
    });
  }
  if (tls.insecure === true) {
    problems.push({
      severity: Severity.Warning,
      path: [...at, 'insecure'],
      message: 'TLS verification of this device is switched off: anyone on the path can read the admin password',
      hint: 'pin the device with fingerprint_sha256 instead',
    });
  }
  return problems;
}

function checkAclRule(rule: AclRule, at: KeyPath): UnplacedProblem[] {
  // Refused ports were said by the schema.
  if (rule.ports === undefined || parsePortRange(rule.ports) !== undefined) return [];
  return [
    {
      severity: Severity.Error,
      path: [...at, 'ports'],
      message: `ports ${JSON.stringify(rule.ports)} is not a port (1-65535) or a range N-M with N <= M`,
      hint: 'write it like "8443" or "8000-8100"',
    },
  ];
}

export function parsePortRange(ports: string | number): { from: number; to: number } | undefined {
  const match = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(String(ports).trim());
  if (match === null) return undefined;
  const from = Number(match[1]);
  const to = match[2] === undefined ? from : Number(match[2]);
  if (from < 1 || to > 65535 || from > to) return undefined;
  return { from, to };
}
