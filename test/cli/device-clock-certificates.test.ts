import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stateDir, stickFromProfile } from '../support/stick-workspace.js';

/**
 * `mpprov plan` and `mpprov apply` as child processes against a simulator whose Date header is 30
 * days behind (the clock-offset fault): every certificate the stick installs is judged at the
 * device's time, not only the client certificate. The profiles' certificates are valid from
 * 2026-11-22 (radius-ca.pem and the client CA inside mp01.p12 at 12:41:04, the client certificate
 * at 12:41:05 UTC) to 2046-11-17: each one is refused, named by its file, with the fix.
 */

const { start } = useSimulators(PROFILE_DEVICE);

const DEVICE_TIME = String.raw`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC`;
const refusal = (what: string, from: string, consequence: string) =>
  new RegExp(
    `^${escape(what)} is valid from ${from} UTC to 2046-11-17 ${from.slice(11)} UTC, but the device's clock says ${DEVICE_TIME} \\(30 days behind this machine's\\): ${escape(consequence)}; set the MP's time, then run again$`,
  );
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const CA = '2026-11-22 12:41:04';
const CLIENT = '2026-11-22 12:41:05';
const UNTRUSTED_SERVER = "the MP could not trust the RADIUS server's certificate with it at 802.1X";

/** The refusals of the one 'plan' event, and the exit status, of `mpprov COMMAND FILE --json`. */
async function refusalsOf(
  command: 'plan' | 'apply',
  file: string,
): Promise<{ code: number | null; refusals: string[] }> {
  const run = await runCli([
    command,
    file,
    '--agent-config',
    '/nonexistent/agent.yaml',
    '--state-dir',
    stateDir(),
    '--json',
  ]);
  const events = run.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string; refusals?: string[]; outcome?: string });
  const plans = events.filter((e) => e.type === 'plan');
  expect(plans).toHaveLength(1);
  expect(events.at(-1)).toMatchObject({ type: 'result', outcome: 'failed' });
  return { code: run.code, refusals: plans[0]?.refusals ?? [] };
}

describe("the device's clock against every certificate the plan installs", () => {
  it("EAP-TLS with a PFX: its client certificate, the PFX's CA certificate and ca_cert are each refused; nothing is sent", async () => {
    const device = await start({ faults: ['clock-offset=-30d'] });
    for (const command of ['plan', 'apply'] as const) {
      const { code, refusals } = await refusalsOf(command, stickFromProfile('eap-tls-pfx.yaml', device.url));
      expect(code).toBe(1);
      expect(refusals).toHaveLength(3);
      expect(refusals[0]).toMatch(
        refusal('eth1: the client certificate certs/mp01.p12', CLIENT, 'the MP would refuse it at 802.1X'),
      );
      expect(refusals[1]).toMatch(
        refusal('eth1: the CA certificate certs/radius-ca.pem (ca_cert)', CA, UNTRUSTED_SERVER),
      );
      expect(refusals[2]).toMatch(
        refusal(
          'eth1: certificate 2 ("mpprov TEST client CA") in certs/mp01.p12 (private_key)',
          CA,
          'the MP would send the RADIUS server a chain it cannot verify at 802.1X',
        ),
      );
    }
    expect(device.requests().filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('PEAP-MSCHAPv2 with no client certificate: its ca_cert alone is refused, for plan and apply', async () => {
    const device = await start({ faults: ['clock-offset=-30d'] });
    for (const command of ['plan', 'apply'] as const) {
      const { code, refusals } = await refusalsOf(command, stickFromProfile('peap-mschapv2.yaml', device.url));
      expect(code).toBe(1);
      expect(refusals).toHaveLength(1);
      expect(refusals[0]).toMatch(
        refusal('eth1: the CA certificate certs/radius-ca.pem (ca_cert)', CA, UNTRUSTED_SERVER),
      );
    }
    expect(device.requests().filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it("PEAP with inner TLS: the inner set's client certificate and ca_cert too, each named by its key", async () => {
    const device = await start({ faults: ['clock-offset=-30d'] });
    const { code, refusals } = await refusalsOf('plan', stickFromProfile('peap-tls.yaml', device.url));
    expect(code).toBe(1);
    expect(refusals).toHaveLength(3);
    expect(refusals[0]).toMatch(/^eth1: the client certificate certs\/mp01-inner-cert\.pem is valid from /);
    expect(refusals[1]).toMatch(
      refusal('eth1: the CA certificate certs/radius-ca.pem (ca_cert)', CA, UNTRUSTED_SERVER),
    );
    expect(refusals[2]).toMatch(
      refusal('eth1: the CA certificate certs/radius-ca.pem (inner_tls.ca_cert)', CA, UNTRUSTED_SERVER),
    );
    expect(device.requests().filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it("WPA2-Enterprise on wlan0: the wireless interface's ca_cert is judged the same way", async () => {
    const device = await start({ faults: ['clock-offset=-30d'] });
    const { code, refusals } = await refusalsOf('apply', stickFromProfile('wireless-wpa2-enterprise.yaml', device.url));
    expect(code).toBe(1);
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatch(
      refusal('wlan0: the CA certificate certs/radius-ca.pem (ca_cert)', CA, UNTRUSTED_SERVER),
    );
    expect(device.requests().filter((r) => r.method !== 'GET')).toEqual([]);
  });
});
