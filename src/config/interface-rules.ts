import { checkDot1x, exactlyOneSecret } from './dot1x-rules.js';
import { canonicalIp, hasHostBits, ipFamily, notAHostAddress, parseCidr, sameSubnet } from './ip-address.js';
import { type KeyPath, Severity, type UnplacedProblem } from '../core/problem.js';
import { given, wasRefused } from './salvage-by-schema.js';
import type { Interface, Ipv4, Wireless } from './schema.js';

/**
 * Rules that relate keys of one interface: names, VLANs, addressing, link, wireless, 802.1X. They
 * also run on a salvaged file (salvage-by-schema.ts), where a key the schema refused is absent,
 * a required one too: a rule that reads such a key skips itself, and "missing" is said only of a
 * key the person did not write (`given`).
 */

const PHYSICAL_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,14}$/;
const VLAN_NAME = /^([A-Za-z][A-Za-z0-9_-]{0,14})\.(\d{1,4})$/;
const ADDRESSED_METHODS = new Set(['dhcp', 'static']);
const IPV6_MIN_MTU = 1280;

type Report = (path: KeyPath, message: string, hint?: string, options?: { atKey?: boolean; warning?: boolean }) => void;

function reporter(problems: UnplacedProblem[]): Report {
  return (path, message, hint, options) => {
    problems.push({
      severity: options?.warning === true ? Severity.Warning : Severity.Error,
      path,
      message,
      ...(hint === undefined ? {} : { hint }),
      ...(options?.atKey === true ? { atKey: true } : {}),
    });
  };
}

/** The file's interface of that name: only its own, never what every object has (`constructor`, `toString`). */
function entry(all: Record<string, Interface>, name: string): Interface | undefined {
  return Object.hasOwn(all, name) ? all[name] : undefined;
}

export function checkInterfaces(interfaces: Record<string, Interface>, path: KeyPath): UnplacedProblem[] {
  const problems: UnplacedProblem[] = [];
  const report = reporter(problems);
  for (const [name, iface] of Object.entries(interfaces)) {
    const at = [...path, name];
    checkName(name, iface, at, interfaces, report);
    if (!given(iface, 'ipv4') && !given(iface, 'ipv6')) {
      report(
        at,
        `interface ${name} has neither ipv4 nor ipv6`,
        'add ipv4: { method: dhcp } (or method: manual for a link without an address)',
      );
    }
    if (iface.ipv4 !== undefined) checkFamily(iface.ipv4, 4, [...at, 'ipv4'], report);
    if (iface.ipv6 !== undefined) checkFamily(iface.ipv6, 6, [...at, 'ipv6'], report);
    checkLink(iface, at, report);
    checkMtu(iface, at, report);
    if (iface.wireless !== undefined) checkWireless(iface, iface.wireless, at, report);
    if (iface.dot1x !== undefined) {
      problems.push(...checkDot1x(iface.dot1x, [...at, 'dot1x'], { wireless: given(iface, 'wireless') }));
      checkVlanDot1x(name, iface, at, interfaces, report);
    }
  }
  return problems;
}

function checkName(name: string, iface: Interface, at: KeyPath, all: Record<string, Interface>, report: Report): void {
  const vlanMatch = VLAN_NAME.exec(name);
  if (iface.vlan !== undefined) {
    if (iface.vlan.link === undefined || iface.vlan.id === undefined) return;
    const expected = `${iface.vlan.link}.${iface.vlan.id}`;
    if (name !== expected) {
      report(
        at,
        `a VLAN interface must be named <link>.<id>: '${name}' should be '${expected}'`,
        `rename the interface to ${expected}`,
        { atKey: true },
      );
    }
    if (iface.vlan.link === 'bridge1') {
      report(
        [...at, 'vlan', 'link'],
        'a VLAN cannot sit on bridge1',
        'put the VLAN on a physical interface such as eth0',
      );
    } else if (VLAN_NAME.test(iface.vlan.link) || entry(all, iface.vlan.link)?.vlan !== undefined) {
      report(
        [...at, 'vlan', 'link'],
        `VLAN link '${iface.vlan.link}' is itself a VLAN`,
        'a VLAN sits on a physical interface',
      );
    }
    if (iface.wireless !== undefined)
      report([...at, 'wireless'], 'a VLAN interface cannot be wireless', undefined, { atKey: true });
    return;
  }
  if (name === 'bridge1' && iface.wireless !== undefined) {
    report([...at, 'wireless'], 'bridge1 cannot be wireless', undefined, { atKey: true });
  }
  if (vlanMatch !== null) {
    report(
      at,
      `'${name}' looks like a VLAN but has no vlan block`,
      `add vlan: { link: ${vlanMatch[1]}, id: ${Number(vlanMatch[2])} }`,
      { atKey: true },
    );
  } else if (!PHYSICAL_NAME.test(name)) {
    report(at, `'${name}' is not a valid interface name`, "use the device's name, e.g. eth0, eth1, wlan0", {
      atKey: true,
    });
  }
}

/** `Ipv6` has the very shape of `Ipv4` (one builder makes both), so one type serves either family. */
function checkFamily(family: Ipv4, version: 4 | 6, at: KeyPath, report: Report): void {
  const label = version === 4 ? 'IPv4' : 'IPv6';
  const example = version === 4 ? '192.0.2.10/24' : '2001:db8::10/64';
  let subnet: { address: string; prefix: number } | undefined;

  if (family.method === 'static') {
    if (!given(family, 'address')) {
      report(at, `static ${label} needs an address`, `add address: ${example}`);
    } else if (family.address !== undefined) {
      const cidr = parseCidr(family.address);
      if (cidr === undefined) {
        const bare = ipFamily(family.address) !== undefined;
        report(
          [...at, 'address'],
          bare ? `'${family.address}' has no prefix length` : `'${family.address}' is not a valid address/prefix`,
          `write it like ${example}`,
        );
      } else if (cidr.family !== version) {
        report([...at, 'address'], `'${family.address}' is not an ${label} address`, `write it like ${example}`);
      } else {
        subnet = cidr;
        const notHost = notAHostAddress(cidr);
        if (notHost !== undefined) report([...at, 'address'], notHost.message, notHost.hint);
      }
    }
  } else if (family.method !== undefined) {
    for (const key of ['address', 'gateway'] as const) {
      if (given(family, key)) {
        report([...at, key], `'${key}' does not fit method ${family.method}`, `remove ${key}, or use method: static`, {
          atKey: true,
        });
      }
    }
  }

  if (family.gateway !== undefined && family.method === 'static') {
    if (ipFamily(family.gateway) !== version) {
      report([...at, 'gateway'], `gateway '${family.gateway}' is not an ${label} address`);
    } else if (subnet !== undefined && canonicalIp(family.gateway) === canonicalIp(subnet.address)) {
      report(
        [...at, 'gateway'],
        `gateway ${family.gateway} is this interface's own address`,
        "use the router's address in the subnet; leave gateway out when there is no router",
      );
    } else if (subnet !== undefined && !sameSubnet(family.gateway, subnet.address, subnet.prefix)) {
      report(
        [...at, 'gateway'],
        `gateway ${family.gateway} is outside the subnet of ${family.address}`,
        "use a gateway inside the interface's subnet, or correct the prefix length",
      );
    }
  }

  family.routes?.forEach((route, index) => {
    if (route === undefined) return;
    const routeAt = [...at, 'routes', index];
    const dest = route.to === undefined ? undefined : parseCidr(route.to);
    if (route.to === undefined) {
      // Refused by the schema, said there.
    } else if (dest === undefined) {
      report(
        [...routeAt, 'to'],
        `'${route.to}' is not a valid destination network`,
        `write it like ${version === 4 ? '10.0.0.0/8' : '2001:db8:1::/48'}`,
      );
    } else if (dest.family !== version) {
      report(
        [...routeAt, 'to'],
        `route destination '${route.to}' is not ${label}`,
        `move the route to the ${version === 4 ? 'ipv6' : 'ipv4'} block`,
      );
    } else if (hasHostBits(dest)) {
      report(
        [...routeAt, 'to'],
        `route destination '${route.to}' has host bits set`,
        'use the network address of the destination',
      );
    }
    if (route.via === undefined) return;
    if (ipFamily(route.via) !== version) {
      report([...routeAt, 'via'], `next hop '${route.via}' is not an ${label} address`);
    } else if (subnet !== undefined && !sameSubnet(route.via, subnet.address, subnet.prefix)) {
      report(
        [...routeAt, 'via'],
        `next hop ${route.via} is outside the subnet of ${family.address}`,
        "use a next hop inside the interface's subnet",
      );
    }
  });
}

function checkLink(iface: Interface, at: KeyPath, report: Report): void {
  const link = iface.link;
  if (link === undefined) return;
  const linkAt = [...at, 'link'];
  if (iface.vlan !== undefined) {
    for (const key of ['speed', 'duplex', 'autoneg'] as const) {
      if (given(link, key))
        report([...linkAt, key], `'${key}' does not fit a VLAN interface`, `set ${key} on ${iface.vlan.link} instead`, {
          atKey: true,
        });
    }
    return;
  }
  // Transmission parameters belong to wired physical ports only.
  if (given(iface, 'wireless') || name(at) === 'bridge1') {
    for (const key of ['speed', 'duplex', 'autoneg'] as const) {
      if (given(link, key))
        report(
          [...linkAt, key],
          `'${key}' does not fit ${given(iface, 'wireless') ? 'a wireless interface' : 'bridge1'}`,
          'only wired physical interfaces have transmission parameters',
          { atKey: true },
        );
    }
    return;
  }
  if (
    (link.speed !== undefined || link.duplex !== undefined) &&
    link.autoneg !== false &&
    !wasRefused(link, 'autoneg')
  ) {
    const key = link.speed !== undefined ? 'speed' : 'duplex';
    report([...linkAt, key], `a fixed ${key} needs autoneg: false`, 'add autoneg: false, or remove the fixed setting');
  }
}

/** The MTU may be given at link, ipv4 or ipv6 (the inventory template's place): it is one value. */
function checkMtu(iface: Interface, at: KeyPath, report: Report): void {
  const places = (['link', 'ipv4', 'ipv6'] as const).flatMap((block) => {
    const mtu = iface[block]?.mtu;
    return mtu === undefined ? [] : [{ block, mtu }];
  });
  const first = places[0];
  // IPv6 needs 1280 on every link (RFC 8200); Linux turns IPv6 off on a link set lower.
  const ipv6Method = iface.ipv6?.method;
  if (first !== undefined && first.mtu < IPV6_MIN_MTU && ipv6Method !== undefined && ipv6Method !== 'manual')
    report(
      [...at, first.block, 'mtu'],
      `mtu ${first.mtu} is below 1280, the least IPv6 works with: the Monitoring Point turns IPv6 off on this interface`,
      'use an MTU of 1280 or more, or leave ipv6 out',
      { warning: true },
    );
  for (const other of places.slice(1)) {
    if (first === undefined || other.mtu === first.mtu) continue;
    report(
      [...at, other.block, 'mtu'],
      `mtu ${other.mtu} differs from ${first.block}.mtu ${first.mtu}: an interface has one MTU for both families`,
      'give the interface one mtu, in one place',
    );
  }
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

function name(at: KeyPath): string {
  return String(at[at.length - 1]);
}

function checkWireless(iface: Interface, wireless: Wireless, at: KeyPath, report: Report): void {
  const wAt = [...at, 'wireless'];
  const ssidBytes = wireless.ssid === undefined ? 0 : Buffer.byteLength(wireless.ssid, 'utf8');
  if (ssidBytes > 32) report([...wAt, 'ssid'], `SSID is ${ssidBytes} bytes long; the limit is 32`);
  // Every rule below depends on the security: none is judged without one the schema accepted.
  if (wireless.security === undefined) return;

  if (wireless.security === 'wpa2-personal') {
    const problems = exactlyOneSecret(wireless, 'passphrase', wAt, 'wpa2-personal needs a passphrase');
    for (const p of problems) report(p.path, p.message, p.hint, { atKey: p.atKey === true });
    const passphrase = wireless.passphrase;
    if (passphrase !== undefined && !passphrase.satisfies(isValidPassphrase)) {
      report(
        [...wAt, 'passphrase'],
        'passphrase must be 8 to 63 printable ASCII characters, or 64 hex digits',
        'check the passphrase length and characters',
      );
    }
  } else {
    for (const key of ['passphrase', 'passphrase_file'] as const) {
      // Given, not kept: a passphrase_file of the wrong type is still one that does not belong here.
      if (given(wireless, key)) {
        report(
          [...wAt, key],
          `'${key}' belongs to wpa2-personal only`,
          wireless.security === 'wpa2-enterprise'
            ? 'wpa2-enterprise takes a dot1x block instead'
            : 'remove it for an open network',
          { atKey: true },
        );
      }
    }
  }
  if (wireless.security === 'wpa2-enterprise' && !given(iface, 'dot1x')) {
    report(
      at,
      'wpa2-enterprise needs a dot1x block beside wireless',
      'add dot1x: { eap: peap, inner: mschapv2, identity: ..., password: ... }',
    );
  }
  if (wireless.security !== 'wpa2-enterprise' && given(iface, 'dot1x')) {
    report(
      [...at, 'dot1x'],
      `802.1X on a wireless interface needs security: wpa2-enterprise, not ${wireless.security}`,
      'set security: wpa2-enterprise, or remove the dot1x block',
      { atKey: true },
    );
  }
}

/** Checked on content, so passphrase files get the same rule. Never quotes the value. */
export function isValidPassphrase(passphrase: string): boolean {
  if (/^[0-9a-fA-F]{64}$/.test(passphrase)) return true;
  return passphrase.length >= 8 && passphrase.length <= 63 && PRINTABLE_ASCII.test(passphrase);
}

/**
 * Vendor rule, which the device enforces both ways (a VLAN stanza with 802.1X is refused on a
 * parent without it, and so is a parent stanza that would leave one): a VLAN with 802.1X needs
 * its parent on dhcp/static and with 802.1X itself. Judged here on the file when both are in it;
 * the plan judges it against the device's view for the side the file does not name.
 */
function checkVlanDot1x(
  name: string,
  iface: Interface,
  at: KeyPath,
  all: Record<string, Interface>,
  report: Report,
): void {
  if (iface.vlan?.link === undefined) return;
  const parentName = iface.vlan.link;
  const parent = entry(all, parentName);
  // A parent that this file does not mention is judged against the device's pending view by the plan.
  if (parent === undefined) return;
  // A parent whose addressing or 802.1X the schema refused cannot be judged here.
  const families = [parent.ipv4, parent.ipv6].filter((f) => f !== undefined);
  if (['ipv4', 'ipv6', 'dot1x'].some((k) => wasRefused(parent, k)) || families.some((f) => f.method === undefined))
    return;
  const addressed = [parent.ipv4?.method, parent.ipv6?.method].some((m) => m !== undefined && ADDRESSED_METHODS.has(m));
  if (!addressed || parent.dot1x === undefined) {
    report(
      [...at, 'dot1x'],
      `802.1X on VLAN ${name} needs its parent ${parentName} on dhcp or static and with 802.1X itself`,
      `in this file, turn off the 802.1X of ${name} (remove its dot1x block) or remove ${name}; or give ${parentName} method: dhcp or static and a dot1x block`,
      { atKey: true },
    );
  }
}
