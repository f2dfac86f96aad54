import { describe, expect, it } from 'vitest';
import { useLabPki } from '../support/lab-pki.js';
import { PEAP_PASSWORD, preflightLeftovers, runInLaptop, usePortLab } from './port-lab.js';
import { parseReport, preflightStick } from './preflight-stick.js';

/**
 * A switch that misbehaves mid-exchange: a cable pulled while EAP runs, an authenticator that
 * starts EAP and then never decides. The preflight's verdict is bounded by `--timeout` (the test
 * would run into vitest's own timeout otherwise), and the laptop's port comes back as it was.
 */

const pki = useLabPki();
const rig = usePortLab((lab) => lab.setSwitchPort('up'));

const PEAP = `eth1:\n  ipv4: { method: dhcp }\n  dot1x: { eap: peap, inner: mschapv2, identity: alice, password: "${PEAP_PASSWORD}", ca_cert: ca.pem }`;

/** The PEAP stick's preflight on the lab's laptop port, `--json`, bounded by `timeoutS`. */
const peapPreflight = (timeoutS: number): string[] => [
  'preflight',
  preflightStick(pki, PEAP, ['ca.pem']),
  '--port',
  rig.lab.laptopIf,
  '--interface',
  'eth1',
  '--json',
  '--timeout',
  String(timeoutS),
];

/** Whatever the verdict: the laptop's port as it was, and nothing of the run left behind. */
function expectPortGivenBack(run: { pid: number }): void {
  expect(rig.lab.laptopState()).toEqual(rig.before);
  expect(preflightLeftovers(run.pid, rig.lab.laptopIf)).toEqual({ namespaces: [], dirs: [], daemons: [] });
}

describe('a misbehaving switch', () => {
  it('the cable pulled as 802.1X starts: a verdict within the timeout, never success, the port given back', async () => {
    await rig.lab.startAuthenticator(pki.dir);
    let pulled = false;
    const run = await runInLaptop(rig.lab, peapPreflight(6), (stderr) => {
      if (pulled || !/802\.1X: trying/.test(stderr)) return;
      pulled = true;
      rig.lab.setSwitchPort('down');
    });
    expect(pulled).toBe(true);
    const report = parseReport(run.stdout);
    expect(run.code).toBe(1);
    // Pulled before or during the exchange: never a verdict of success, always one within the bound.
    expect(['no-authenticator', 'error']).toContain(report.dot1x.outcome);
    expect(`${run.stdout}${run.stderr}`).not.toContain(PEAP_PASSWORD);
    expectPortGivenBack(run);
  });

  it('a cable not plugged in (no carrier): said as such, not as a port without 802.1X', async () => {
    await rig.lab.startAuthenticator(pki.dir);
    rig.lab.setSwitchPort('down');
    const run = await runInLaptop(rig.lab, peapPreflight(4));
    const report = parseReport(run.stdout);
    expect(run.code).toBe(1);
    expect(report.dot1x).toEqual({
      outcome: 'error',
      method: 'PEAP-MSCHAPv2',
      cause:
        'the port had no link within 4 s (no carrier): the cable is not plugged into the switch, or the switch port is down',
    });
    expectPortGivenBack(run);
  });

  it('an authenticator that answers EAPOL-Start but whose RADIUS never does: "did not finish" within the timeout', async () => {
    await rig.lab.startAuthenticator(pki.dir, { port: 18_129 });
    const run = await runInLaptop(rig.lab, peapPreflight(5));
    const report = parseReport(run.stdout);
    expect(run.code).toBe(1);
    expect(report.dot1x).toEqual({
      outcome: 'error',
      method: 'PEAP-MSCHAPv2',
      cause: 'the authentication started but did not finish within 5 s',
    });
    expectPortGivenBack(run);
  });
});
