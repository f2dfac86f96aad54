/**
 * What `profiles/static-dual-stack.yaml` asks for on eth1, in the device's field names: the plan's
 * desired state and the device's active view after an apply must both show exactly this.
 */
export const STATIC_DUAL_STACK_ETH1_INET = {
  method: 'static',
  address: '198.51.100.20',
  netmask: '255.255.255.0',
  gateway: '198.51.100.1',
  dns_nameservers: ['198.51.100.53', '198.51.100.54'],
  dns_search: ['corp.example'],
  routes: [{ destination: '10.0.0.0/8', gateway: '198.51.100.254', metric: 100 }],
} as const;

/** The interface-level link settings of the same profile (sent in both families' stanzas). */
export const STATIC_DUAL_STACK_ETH1_LINK = {
  mtu: 1500,
  link_speed: 1000,
  link_duplex: 'full',
  link_autoneg: false,
} as const;
