import type { DeviceInterface, Stanza } from '../admin-api/index.js';
import type { DesiredDevice, DeviceSnapshot, PlanRefusal } from './plan-types.js';

/**
 * Rules that need the device's own facts (its interfaces and capabilities, its pending view), so
 * the file alone could not check them. Each would otherwise come back as a 400 halfway through.
 */
export function checkAgainstDevice(desired: DesiredDevice, snapshot: DeviceSnapshot): PlanRefusal[] {
  const refusals: PlanRefusal[] = [];
  const refuse = (message: string): void => {
    refusals.push({ reason: 'device-rule', message });
  };
  const capability = snapshot.capability?.interfaces;
  const desiredNames = new Set(desired.interfaces.map((i) => i.name));

  for (const iface of desired.interfaces) {
    const physical = iface.vlanParent ?? iface.name;
    const caps = capability?.[physical];
    if (iface.vlanParent === 'bridge1') {
      refuse(`${iface.name}: a VLAN cannot sit on bridge1`);
      continue;
    }
    if (capability !== undefined && caps === undefined && physical !== 'bridge1') {
      refuse(`the device has no interface ${physical} (it has ${Object.keys(capability).join(', ')})`);
      continue;
    }
    const fields = iface.stanzas[0]?.fields ?? {};
    if (caps !== undefined) {
      if (iface.wireless && caps.wireless !== true) refuse(`${iface.name} is not a wireless interface on this device`);
      if (!iface.wireless && caps.wireless === true && fields.wpa_key_mgmt === 'IEEE8021X') {
        refuse(`${iface.name} is wireless: 802.1X there needs a wireless block with security: wpa2-enterprise`);
      }
      if (caps.wireless === true && iface.vlanParent === undefined && !iface.wireless) {
        refuse(`${iface.name} is wireless on this device: it needs a wireless block (ssid and security)`);
      }
      if (caps.wireless === true && (['link_speed', 'link_duplex', 'link_autoneg'] as const).some((f) => fields[f] !== undefined)) {
        refuse(`${iface.name} is wireless: it has no transmission parameters (speed, duplex, autoneg)`);
      }
      if (fields.link_autoneg === true && caps.autoneg === false) {
        refuse(`${iface.name} does not auto-negotiate on this device: remove autoneg: true and give its fixed speed`);
      }
      if (typeof fields.link_speed === 'number' && caps.speeds !== undefined && !caps.speeds.includes(fields.link_speed)) {
        refuse(`${iface.name} cannot run at ${fields.link_speed} Mb/s (it supports ${caps.speeds.join(', ')})`);
      }
      if (typeof fields.link_duplex === 'string' && caps.duplex !== undefined && !caps.duplex.includes(fields.link_duplex)) {
        refuse(`${iface.name} does not support ${fields.link_duplex} duplex`);
      }
    }
    // Vendor rule, judged on what the next restart makes active: the parent's pending view.
    if (iface.vlanParent !== undefined && fields.wpa_key_mgmt !== undefined && !desiredNames.has(iface.vlanParent)) {
      const parent = stanzasOf(snapshot.pending, iface.vlanParent) ?? stanzasOf(snapshot.active, iface.vlanParent) ?? [];
      const ok = parent.some((s) => (s.method === 'dhcp' || s.method === 'static') && typeof s.wpa_key_mgmt === 'string');
      if (!ok) {
        refuse(`802.1X on VLAN ${iface.name} needs its parent ${iface.vlanParent} on dhcp or static with 802.1X on the device; add ${iface.vlanParent} with its dot1x block to the file`);
      }
    }
  }
  if (capability !== undefined && desired.acl !== undefined) {
    for (const rule of desired.acl) {
      for (const name of rule.interfaces) {
        const physical = name.split('.')[0] ?? name;
        if (capability[physical] === undefined && physical !== 'bridge1' && !desiredNames.has(name)) {
          refuse(`ACL rule names ${name}, which is not an interface of this device (it has ${Object.keys(capability).join(', ')})`);
        }
      }
    }
  }
  return refusals;
}

function stanzasOf(view: readonly DeviceInterface[], name: string): Stanza[] | undefined {
  const iface = view.find((i) => i.name === name);
  if (iface === undefined) return undefined;
  return Object.values(iface.families).filter((s): s is Stanza => s != null);
}
