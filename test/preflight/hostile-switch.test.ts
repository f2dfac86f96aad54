import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertRealBackendCanRun } from '../dot1x/real-lab.js';
import { useLabPki } from '../support/lab-pki.js';
import { PEAP_PASSWORD, PortLab, preflightLeftovers, runInLaptop, type LaptopState } from './port-lab.js';
import { parseReport, preflightStick } from './preflight-stick.js';

/**
 * A switch that misbehaves mid-exchange: a cable pulled while EAP runs, an authenticator that
 * starts EAP and then never decides. The preflight's verdict is bounded by `--timeout` (the test
 * would run into vitest's own timeout otherwise), and the laptop's port comes back as it was.
 */

const pki = useLabPki();
let lab: PortLab;
let before: LaptopState;

beforeAll(() => {
  assertRealBackendCanRun();
  lab = new PortLab();
  before = lab.laptopState();
});
afterEach(async () => {
  await lab.stopDaemons();
  lab.setSwitchPort('up');
});
afterAll(() => lab?.close());

const PEAP = `eth1:\n  ipv4: { method: dhcp }\n  dot1x: { eap: peap, inner: mschapv2, identity: alice, password: "${PEAP_PASSWORD}", ca_cert: ca.pem }`;

describe('a misbehaving switch', () => {
  it('the cable pulled as 802.1X starts: a verdict within the timeout, never success, the port given back', async () => {
    await lab.startAuthenticator(pki.dir);
    let pulled = false;
    const run = await runInLaptop(
      lab,
      [
        'preflight',
        preflightStick(pki, PEAP, ['ca.pem']),
        '--port',
        lab.laptopIf,
        '--interface',
        'eth1',
        '--json',
        '--timeout',
        '6',
      ],
      (stderr) => {
        if (pulled || !/802\.1X: trying/.test(stderr)) return;
        pulled = true;
        lab.setSwitchPort('down');
      },
    );
    expect(pulled).toBe(true);
    const report = parseReport(run.stdout);
    expect(run.code).toBe(1);
    // Pulled before or during the exchange: never a verdict of success, always one within the bound.
    expect(['no-authenticator', 'error']).toContain(report.dot1x.outcome);
    expect(`${run.stdout}${run.stderr}`).not.toContain(PEAP_PASSWORD);
    expect(lab.laptopState()).toEqual(before);
    expect(preflightLeftovers(run.pid, lab.laptopIf)).toEqual({ namespaces: [], dirs: [], daemons: [] });
  });

  it('a cable not plugged in (no carrier): said as such, not as a port without 802.1X', async () => {
    await lab.startAuthenticator(pki.dir);
    lab.setSwitchPort('down');
    const run = await runInLaptop(lab, [
      'preflight',
      preflightStick(pki, PEAP, ['ca.pem']),
      '--port',
      lab.laptopIf,
      '--interface',
      'eth1',
      '--json',
      '--timeout',
      '4',
    ]);
    const report = parseReport(run.stdout);
    expect(run.code).toBe(1);
    expect(report.dot1x).toEqual({
      outcome: 'error',
      method: 'PEAP-MSCHAPv2',
      cause:
        'the port had no link within 4 s (no carrier): the cable is not plugged into the switch, or the switch port is down',
    });
    expect(lab.laptopState()).toEqual(before);
    expect(preflightLeftovers(run.pid, lab.laptopIf)).toEqual({ namespaces: [], dirs: [], daemons: [] });
  });

  it('an authenticator that answers EAPOL-Start but whose RADIUS never does: "did not finish" within the timeout', async () => {
    await lab.startAuthenticator(pki.dir, { port: 18_129 });
    const run = await runInLaptop(lab, [
      'preflight',
      preflightStick(pki, PEAP, ['ca.pem']),
      '--port',
      lab.laptopIf,
      '--interface',
      'eth1',
      '--json',
      '--timeout',
      '5',
    ]);
    const report = parseReport(run.stdout);
    expect(run.code).toBe(1);
    expect(report.dot1x).toEqual({
      outcome: 'error',
      method: 'PEAP-MSCHAPv2',
      cause: 'the authentication started but did not finish within 5 s',
    });
    expect(lab.laptopState()).toEqual(before);
    expect(preflightLeftovers(run.pid, lab.laptopIf)).toEqual({ namespaces: [], dirs: [], daemons: [] });
  });
});
