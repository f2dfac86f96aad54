import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { EapMethodName } from '../../src/preflight/preflight-report.js';
import { readVerdict } from '../../src/preflight/supplicant-verdict.js';
import { useLabPki } from '../support/lab-pki.js';
import { PEAP_PASSWORD, preflightLeftovers, runInLaptop, usePortLab } from './port-lab.js';
import { parseReport, preflightStick } from './preflight-stick.js';

/**
 * A switch that floods EAP-Request/Identity: wpa_supplicant restarts its exchange on each one and
 * gives up after 50 rounds with an EAP failure. That says nothing about the credentials: the
 * verdict is an error naming the switch, never `refused` (which would send the technician to
 * change a password that is right).
 */

const FLOOD = `
import socket, struct, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
end = time.time() + float(sys.argv[2])
n = 0
while time.time() < end:
    eap = struct.pack('!BBHB', 1, n % 256, 5, 1)
    try:
        s.send(bytes.fromhex('0180c2000003020000000001888e') + struct.pack('!BBH', 2, 0, len(eap)) + eap)
    except OSError:
        time.sleep(0.001)  # the veth's queue is full (ENOBUFS): a flood, not a crash
    n += 1
`;

const CAUSE =
  'the authenticator kept restarting the exchange until wpa_supplicant gave up (more than 50 EAP rounds): a faulty switch or a loop on the port, not a verdict on the credentials';

describe('the verdict on wpa_supplicant lines of a flood', () => {
  it('is an error naming the switch, not a refusal', () => {
    const lines = [
      'Successfully initialized wpa_supplicant',
      ...Array.from({ length: 50 }, () => 'eth0: CTRL-EVENT-EAP-STARTED EAP authentication started'),
      'eth0: EAP: more than 50 authentication rounds (short) - abort',
      'eth0: CTRL-EVENT-EAP-FAILURE EAP authentication failed',
    ];
    expect(readVerdict(lines, { method: EapMethodName.PeapMschapv2, identity: 'alice' })).toEqual({
      outcome: 'error',
      method: 'PEAP-MSCHAPv2',
      cause: CAUSE,
    });
  });
});

const pki = useLabPki();
const rig = usePortLab();

describe('a switch flooding EAP-Request/Identity', () => {
  it('ends the 802.1X try with that error, and the port comes back as it was', async () => {
    const stick = preflightStick(
      pki,
      `eth1:\n  ipv4: { method: dhcp }\n  dot1x: { eap: peap, inner: mschapv2, identity: alice, password: "${PEAP_PASSWORD}", ca_cert: ca.pem }`,
      ['ca.pem'],
    );
    let flood: Promise<number | null> | undefined;
    const run = await runInLaptop(
      rig.lab,
      ['preflight', stick, '--port', rig.lab.laptopIf, '--interface', 'eth1', '--json', '--timeout', '8'],
      (stderr) => {
        if (flood !== undefined || !/802\.1X: trying/.test(stderr)) return;
        // From the switch's end, for longer than the supplicant needs to give up.
        const child = spawn('ip', ['netns', 'exec', rig.lab.switchNs, 'python3', '-c', FLOOD, rig.lab.switchIf, '3'], {
          stdio: ['ignore', 'ignore', 'inherit'],
        });
        flood = new Promise((resolve) => child.once('exit', resolve));
      },
    );
    expect(await flood).toBe(0);
    expect(run.code).toBe(1);
    expect(parseReport(run.stdout).dot1x).toEqual({ outcome: 'error', method: 'PEAP-MSCHAPv2', cause: CAUSE });
    expect(`${run.stdout}${run.stderr}`).not.toContain(PEAP_PASSWORD);
    expect(rig.lab.laptopState()).toEqual(rig.before);
    expect(preflightLeftovers(run.pid, rig.lab.laptopIf)).toEqual({ namespaces: [], dirs: [], daemons: [] });
  });
});
