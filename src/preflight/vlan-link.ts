/**
 * A stick's VLAN interface tried on the laptop: an 802.1Q link on the port, inside the preflight's
 * namespace. Pure: the `ip` arguments and the reading of a refusal.
 */

/** The VLAN link's name in the namespace: short (15 bytes at most), the port is alone there. */
export function vlanLinkName(id: number): string {
  return `vlan${id}`;
}

/** `ip -n <namespace> ...` arguments that make VLAN `id` on `port`. */
export function vlanAddArgs(port: string, id: number): string[] {
  return ['link', 'add', 'link', port, 'name', vlanLinkName(id), 'type', 'vlan', 'id', String(id)];
}

/** The problem sentence when `ip` could not make the VLAN link. */
export function vlanRefusal(stderr: string, port: string, id: number): string {
  const said = stderr.trim().split('\n')[0] ?? '';
  if (/unknown device type/i.test(said))
    return `this laptop's kernel cannot make 802.1Q VLAN interfaces ("ip link add ... type vlan": ${said}), so VLAN ${id} on ${port} was not tried: load the 8021q module or use a laptop whose kernel has it`;
  return `the VLAN ${id} on ${port} could not be made ("ip link add ... type vlan": ${said || 'no reason given'}), so it was not tried`;
}
