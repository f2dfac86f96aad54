import type { DesiredDevice, DeviceSnapshot, PlanRefusal } from './plan-types.js';

/**
 * Rules that need the device's own facts (its interfaces and capabilities, its pending view), so
 * the file alone could not check them. Each would otherwise come back as a 400 halfway through.
 * The VLAN 802.1X rule, which needs the device's whole next view, is vlan-dot1x-rule.ts.
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
      if (
        caps.wireless === true &&
        (['link_speed', 'link_duplex', 'link_autoneg'] as const).some((f) => fields[f] !== undefined)
      ) {
        refuse(`${iface.name} is wireless: it has no transmission parameters (speed, duplex, autoneg)`);
      }
      if (fields.link_autoneg === true && caps.autoneg === false) {
        refuse(`${iface.name} does not auto-negotiate on this device: remove autoneg: true and give its fixed speed`);
      }
      if (
        typeof fields.link_speed === 'number' &&
        caps.speeds !== undefined &&
        !caps.speeds.includes(fields.link_speed)
      ) {
        refuse(`${iface.name} cannot run at ${fields.link_speed} Mb/s (it supports ${caps.speeds.join(', ')})`);
      }
      if (
        typeof fields.link_duplex === 'string' &&
        caps.duplex !== undefined &&
        !caps.duplex.includes(fields.link_duplex)
      ) {
        refuse(`${iface.name} does not support ${fields.link_duplex} duplex`);
      }
    }
  }
  if (capability !== undefined && desired.acl !== undefined) {
    for (const rule of desired.acl) {
      for (const name of rule.interfaces) {
        const physical = name.split('.')[0] ?? name;
        if (capability[physical] === undefined && physical !== 'bridge1' && !desiredNames.has(name)) {
          refuse(
            `ACL rule names ${name}, which is not an interface of this device (it has ${Object.keys(capability).join(', ')})`,
          );
        }
      }
    }
  }
  return refusals;
}
