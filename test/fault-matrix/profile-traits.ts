/**
 * What the fault matrix needs to know of each profile in profiles/: what a successful run leaves
 * on a fresh simulated device, and the first request that changes it (where a write fault acts).
 * Written out rather than derived, so a changed profile is noticed here; apply.test.ts checks that
 * every profile in profiles/ has an entry.
 */
export interface ProfileTraits {
  file: string;
  /** The interfaces the profile configures. */
  interfaces: readonly string[];
  /** ACL rules it adds (they take effect at once, without a restart). */
  aclRules: number;
  /** Whether applying it restarts networking (every profile with interfaces). */
  restarts: boolean;
  /** The first write step, as the run describes it: where a fault on the first write acts. */
  firstWrite: RegExp;
  /** Secret values the profile holds (inline or in a file on the stick), besides the admin password. */
  secrets: readonly string[];
}

const UPLOAD = /upload \d+ file\(s\): .+/;
const PEAP_PASSWORD = 'example-peap-password';
const PFX_PASSWORD = 'test-pfx-password';

export const PROFILE_TRAITS: readonly ProfileTraits[] = [
  {
    file: 'acl.yaml',
    interfaces: [],
    aclRules: 3,
    restarts: false,
    firstWrite: /add ACL rule permit tcp\/443 from 10\.0\.0\.0\/8 on eth0/,
    secrets: [],
  },
  {
    file: 'dhcp.yaml',
    interfaces: ['eth1'],
    aclRules: 0,
    restarts: true,
    firstWrite: /POST eth1 inet \(create\)/,
    secrets: [],
  },
  {
    file: 'eap-md5.yaml',
    interfaces: ['eth1'],
    aclRules: 0,
    restarts: true,
    firstWrite: /POST eth1 inet \(create\)/,
    secrets: ['example-md5-password'],
  },
  { file: 'eap-tls-pem.yaml', interfaces: ['eth1'], aclRules: 0, restarts: true, firstWrite: UPLOAD, secrets: [] },
  {
    file: 'eap-tls-pfx.yaml',
    interfaces: ['eth1'],
    aclRules: 0,
    restarts: true,
    firstWrite: UPLOAD,
    secrets: [PFX_PASSWORD],
  },
  {
    file: 'peap-mschapv2.yaml',
    interfaces: ['eth1'],
    aclRules: 0,
    restarts: true,
    firstWrite: UPLOAD,
    secrets: [PEAP_PASSWORD],
  },
  { file: 'peap-tls.yaml', interfaces: ['eth1'], aclRules: 0, restarts: true, firstWrite: UPLOAD, secrets: [] },
  {
    file: 'static-dual-stack.yaml',
    interfaces: ['eth1'],
    aclRules: 0,
    restarts: true,
    firstWrite: /POST eth1 inet \(create\)/,
    secrets: [],
  },
  {
    file: 'vlan-dot1x.yaml',
    interfaces: ['eth1', 'eth1.100'],
    aclRules: 0,
    restarts: true,
    firstWrite: UPLOAD,
    secrets: [PEAP_PASSWORD],
  },
  {
    file: 'wireless-wpa2-enterprise.yaml',
    interfaces: ['wlan0'],
    aclRules: 0,
    restarts: true,
    firstWrite: UPLOAD,
    secrets: [PEAP_PASSWORD],
  },
  {
    file: 'wireless-wpa2-personal.yaml',
    interfaces: ['wlan0'],
    aclRules: 0,
    restarts: true,
    firstWrite: /POST wlan0 inet \(create\)/,
    secrets: ['example-wifi-passphrase'],
  },
];
