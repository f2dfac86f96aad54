import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { useLabPki } from '../support/lab-pki.js';
import { ADMIN_PASSWORD, parseReport, preflightStick } from './preflight-stick.js';

/**
 * The command line before any port is touched: usage errors (64) name the choices, an invalid
 * stick is one JSON document with its located problems (1), and neither says a secret. The port
 * named here does not exist: nothing reaches a network.
 */

const pki = useLabPki();
const PEAP = 'dot1x: { eap: peap, inner: mschapv2, identity: alice, password: "Peap-Command-Secret-1" }';

describe('mpprov preflight usage', () => {
  it('two 802.1X interfaces and no --interface: 64, naming both, as one JSON document', async () => {
    const stick = preflightStick(
      pki,
      `eth1:\n  ipv4: { method: dhcp }\n  ${PEAP}\neth2:\n  ipv4: { method: dhcp }\n  ${PEAP}`,
    );
    const run = await runCli(['preflight', stick, '--port', 'pfl-none0', '--json']);
    expect(run.code).toBe(64);
    expect(run.stderr).toContain('mp-lab has 2 802.1X interfaces: choose one with --interface ("eth1", "eth2")');
    expect(parseReport(run.stdout)).toMatchObject({
      port: 'pfl-none0',
      dot1x: { outcome: 'error' },
      problems: ['mp-lab has 2 802.1X interfaces: choose one with --interface ("eth1", "eth2")'],
    });
  });

  it('a Monitoring Point the stick does not have: 64, naming the ones it has', async () => {
    const stick = preflightStick(pki, `eth1:\n  ipv4: { method: dhcp }\n  ${PEAP}`);
    const run = await runCli(['preflight', stick, '--port', 'pfl-none0', '--monitoring-point', 'mp-9']);
    expect(run.code).toBe(64);
    expect(run.stderr).toContain('the stick has no Monitoring Point "mp-9": it has "mp-lab"');
  });

  it('no --port, or a timeout that is not a number: 64', async () => {
    const stick = preflightStick(pki, `eth1:\n  ipv4: { method: dhcp }\n  ${PEAP}`);
    expect((await runCli(['preflight', stick])).code).toBe(64);
    expect((await runCli(['preflight', stick, '--port', 'x', '--timeout', 'soon'])).code).toBe(64);
  });

  it('an invalid stick: dot1x "error" with its located problems, exit 1, no secret', async () => {
    const stick = preflightStick(pki, `eth1:\n  ipv4: { method: dhcp }\n  ${PEAP}\n  colour: blue`);
    const run = await runCli(['preflight', stick, '--port', 'pfl-none0', '--json']);
    expect(run.code).toBe(1);
    const report = parseReport(run.stdout);
    expect(report.dot1x.outcome).toBe('error');
    expect(report.problems.length).toBeGreaterThan(0);
    expect(report.problems[0]).toMatch(/mpprov\.yaml:\d+:\d+/);
    for (const secret of ['Peap-Command-Secret-1', ADMIN_PASSWORD])
      expect(run.stdout + run.stderr).not.toContain(secret);
  });
});
