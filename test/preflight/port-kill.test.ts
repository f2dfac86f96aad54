import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { useLabPki } from '../support/lab-pki.js';
import { GATEWAY, PEAP_PASSWORD, preflightLeftovers, runInLaptop, usePortLab } from './port-lab.js';
import { ADMIN_PASSWORD, parseReport, preflightStick } from './preflight-stick.js';

/**
 * A preflight killed in each phase leaves the laptop as it found it: SIGTERM is caught and the
 * port given back at once; after SIGKILL the next run finds the dead run's namespace and folder,
 * gives the port back and says so. Either way: no namespace, address, route, process or secret
 * file is left.
 */

const pki = useLabPki();
const rig = usePortLab();

const PEAP = `dot1x: { eap: peap, inner: mschapv2, identity: alice, anonymous_identity: anonymous, password: "${PEAP_PASSWORD}", ca_cert: ca.pem }`;

interface Phase {
  name: string;
  /** The stderr line the run prints on entering the phase. */
  marker: RegExp;
  /** Killed there, the run has surely made its namespace: the next run must say it cleaned up. */
  tookThePort: boolean;
  prepare: () => Promise<string>;
}

const PHASES: Phase[] = [
  {
    name: 'taking the port',
    marker: /taking \S+ into a network namespace/,
    tookThePort: false,
    prepare: () => Promise.resolve(preflightStick(pki, `eth1:\n  ipv4: { method: dhcp }\n  ${PEAP}`, ['ca.pem'])),
  },
  {
    // No authenticator: the supplicant waits for one until the timeout.
    name: '802.1X',
    marker: /802\.1X: trying/,
    tookThePort: true,
    prepare: () => Promise.resolve(preflightStick(pki, `eth1:\n  ipv4: { method: dhcp }\n  ${PEAP}`, ['ca.pem'])),
  },
  {
    // An authenticator but no DHCP server: udhcpc asks until the timeout.
    name: 'DHCP',
    marker: /DHCP: asking/,
    tookThePort: true,
    prepare: async () => {
      await rig.lab.startAuthenticator(pki.dir);
      return preflightStick(pki, `eth1:\n  ipv4: { method: dhcp }\n  ${PEAP}`, ['ca.pem']);
    },
  },
  {
    // A static address whose gateway is not there: arping asks for its 3 s.
    name: 'the gateway probe',
    marker: /gateway: asking/,
    tookThePort: true,
    prepare: () =>
      Promise.resolve(
        preflightStick(pki, 'eth1:\n  ipv4: { method: static, address: 10.29.0.20/24, gateway: 10.29.0.9 }'),
      ),
  },
  {
    // Killed as it gives the port back: whatever part of the restore ran, the end state is the same.
    name: 'giving the port back',
    marker: /giving \S+ back as it was/,
    tookThePort: false,
    prepare: () =>
      Promise.resolve(
        preflightStick(pki, `eth1:\n  ipv4: { method: static, address: 10.29.0.20/24, gateway: ${GATEWAY} }`),
      ),
  },
];

const SECRETS = [PEAP_PASSWORD, ADMIN_PASSWORD];

async function killDuring(phase: Phase, signal: NodeJS.Signals) {
  const stick = await phase.prepare();
  let sent = false;
  const run = await runInLaptop(
    rig.lab,
    ['preflight', stick, '--port', rig.lab.laptopIf, '--interface', 'eth1', '--json', '--timeout', '20'],
    (stderr: string, child: ChildProcess) => {
      if (sent || !phase.marker.test(stderr)) return;
      sent = true;
      // nsenter execs node: the child's pid is the preflight's own.
      child.kill(signal);
    },
  );
  expect(sent).toBe(true);
  return { ...run, stick };
}

describe.each(PHASES)('killed while $name', (phase) => {
  it('by SIGTERM: the port is given back at once, nothing is left', async () => {
    const run = await killDuring(phase, 'SIGTERM');
    expect(run.code).toBe(143);
    expect(run.stderr).toContain('stopped by SIGTERM');
    expect(rig.lab.laptopState()).toEqual(rig.before);
    expect(preflightLeftovers(run.pid, rig.lab.laptopIf)).toEqual({ namespaces: [], dirs: [], daemons: [] });
    for (const secret of SECRETS) expect(`${run.stdout}${run.stderr}`).not.toContain(secret);
  });

  it('by SIGKILL: the next run gives the port back, says so, and nothing is left', async () => {
    const killed = await killDuring(phase, 'SIGKILL');
    expect(killed.signal).toBe('SIGKILL');
    await rig.lab.stopDaemons();
    // The next run: a static interface that needs no daemon on the switch.
    const next = await runInLaptop(rig.lab, [
      'preflight',
      preflightStick(pki, `eth1:\n  ipv4: { method: static, address: 10.29.0.20/24, gateway: ${GATEWAY} }`),
      '--port',
      rig.lab.laptopIf,
      '--interface',
      'eth1',
      '--json',
      '--timeout',
      '5',
    ]);
    const report = parseReport(next.stdout);
    const cleaned = report.problems.filter((p) => p.startsWith('an interrupted preflight'));
    if (phase.tookThePort) {
      expect(cleaned.length).toBeGreaterThan(0);
      expect(cleaned.join('\n')).toContain(`(process ${killed.pid})`);
    }
    for (const sentence of cleaned) expect(next.stderr).toContain(sentence);
    // Cleaning up after another run does not fail this one: the port itself is fine.
    expect(report.gateway_answers).toBe(true);
    expect(next.code).toBe(0);
    expect(rig.lab.laptopState()).toEqual(rig.before);
    for (const pid of [killed.pid, next.pid])
      expect(preflightLeftovers(pid, rig.lab.laptopIf)).toEqual({ namespaces: [], dirs: [], daemons: [] });
  });
});
