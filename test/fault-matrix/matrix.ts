import type { SimulatorOptions } from '../../src/simulator/index.js';
import type { ServiceSimulator } from '../../src/simulator/service/index.js';
import { PROFILE_TRAITS, type ProfileTraits } from './profile-traits.js';

/**
 * The fault matrix: every fault the simulated device or service can be given,
 * each with what a run through it must end in, per profile. apply.test.ts runs every profile
 * through every fault with `mpprov apply`; daemon.test.ts runs one profile through every fault
 * with `mpprov run` and a stick. Both assert the same expectation, read from here.
 *
 * The timeouts the expectations assume (the runs set them; see cell-world.ts): requests 3 s,
 * restart 3 s, 802.1X grace 1 s, the service wait 2 s; the device restarts in 150 ms.
 */

export type ResultWord = 'CHANGED' | 'FAILED' | 'NO CHANGE';

export interface Expected {
  /** `mpprov apply`'s exit status: 0 success, 1 failure, 3 configured but not confirmed by the service. */
  exit: 0 | 1 | 3;
  word: ResultWord;
  /** The device's sentence (its family: the parts a technician reads, with the varying parts open). */
  message: RegExp;
  /** The post-check's sentence after "NOT CONFIRMED by the monitoring service: ", for exit 3. */
  service?: RegExp;
  /** The device answered wrongly after the restart: rolled back, the roll-back itself verified. */
  rolledBack: boolean;
  /** What the simulator's control port shows afterwards. */
  device: DeviceEnd;
}

export interface DeviceEnd {
  restarts: number;
  phase: 'up' | 'gone';
  /** `initial`: only the starting configuration is active; `configured`: the profile's interfaces (and ACL rules) are. */
  active: 'initial' | 'configured';
  /**
   * `none`: the pending view is the active one; `named`: stanzas stay pending, and the device's
   * sentence names every one of them (the only way mpprov may leave anything pending).
   */
  pending: 'none' | 'named';
  /** False when the profile never gets to where the fault acts (it is still armed afterwards, no request met it). */
  faultMet: boolean;
}

export interface Fault {
  id: string;
  /** The fault in words, as the issue lists it. */
  title: string;
  /** The simulator's fault strings (docs/simulator.md, Faults), set when the device starts. */
  device?: readonly string[];
  /** Other simulator options: a wrong admin password is a device with another one. */
  simulator?: SimulatorOptions;
  /** A fault of the simulated monitoring service (the post-check), set before the run. */
  service?: (service: ServiceSimulator) => void;
  /** Restart faults keep the device away past the run: wait for it to answer again before reading its end state. */
  settles?: boolean;
  expect(profile: ProfileTraits): Expected;
}

/** The sentence of a run that did what the profile asks (static 802.1X: applied, its authorization not visible). */
const AS_ASKED =
  /(?:applied and verified: .+|applied: .+, but the 802\.1X authorization of .+ is not visible through the Admin API \(static address\))/;
const SITE_CHECKS =
  "on site, check the link and switch-port lights, whether the switch port demands 802\\.1X and accepted the credentials \\(switch or RADIUS log\\), and the MP's console";

/** The run succeeds as without a fault: what a survived fault (or one the profile never meets) ends in. */
function changed(profile: ProfileTraits, faultMet = true): Expected {
  return {
    exit: 0,
    word: 'CHANGED',
    message: pattern(AS_ASKED),
    rolledBack: false,
    device: { restarts: profile.restarts ? 1 : 0, phase: 'up', active: 'configured', pending: 'none', faultMet },
  };
}

/** Failed before anything took effect: nothing active changed, nothing left pending. */
function failedUnchanged(message: RegExp, restarts = 0): Expected {
  return {
    exit: 1,
    word: 'FAILED',
    message,
    rolledBack: false,
    device: { restarts, phase: 'up', active: 'initial', pending: 'none', faultMet: true },
  };
}

/** A regular expression from literal text and pattern parts, in order. */
function pattern(...parts: (string | RegExp)[]): RegExp {
  return new RegExp(
    `^${parts.map((p) => (typeof p === 'string' ? p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : p.source)).join('')}$`,
  );
}

/** Configured, but the service never confirms it: exit 3, and the post-check's sentence beside the device's. */
function notConfirmed(profile: ProfileTraits, service: RegExp): Expected {
  return { ...changed(profile), exit: 3, service: pattern(service) };
}

export const FAULTS: readonly Fault[] = [
  {
    id: 'none',
    title: 'no fault (the control row)',
    expect: (p) => changed(p),
  },
  {
    id: '500-write',
    title: '500 on the first write',
    device: ['error=1@POST /api/v1/interface/*', 'error=1@PUT /api/v1/access_control/*'],
    expect: (p) =>
      failedUnchanged(
        pattern(
          p.firstWrite,
          ' failed: the device failed internally on ',
          /(POST|PUT) \S+ .*/,
          '(HTTP 500): Internal server error (injected fault).',
        ),
      ),
  },
  {
    id: '500-restart',
    title: '500 on the networking restart',
    device: ['error=1@PUT /api/v1/service/*'],
    expect: (p) =>
      !p.restarts
        ? changed(p, false)
        : failedUnchanged(
            pattern(
              /restart networking \(\d+ stanza change\(s\)\) failed: /,
              'the device failed internally on PUT /service/networking/?action=restart (HTTP 500): Internal server error (injected fault); ',
              'the changes already posted were taken back; nothing became active',
            ),
          ),
  },
  {
    id: 'latency',
    title: 'latency within the request deadline on every request',
    device: ['latency=300ms'],
    expect: (p) => changed(p),
  },
  {
    id: 'latency-past-deadline',
    title: 'latency past the request deadline on the first write',
    device: ['latency=6s,times=1@POST /api/v1/interface/*', 'latency=6s,times=1@PUT /api/v1/access_control/*'],
    expect: (p) => failedUnchanged(pattern(p.firstWrite, ' failed: ', /(POST|PUT) \S+ .*/, ' timed out after 3 s')),
  },
  {
    id: 'drop-read',
    title: 'a dropped connection on the first read (retried)',
    device: ['drop=1,times=1@GET /api/v1/interface/'],
    expect: (p) => changed(p),
  },
  {
    id: 'drop-write',
    title: 'a dropped connection on the first write',
    device: ['drop=1,times=1@POST /api/v1/interface/*', 'drop=1,times=1@PUT /api/v1/access_control/*'],
    expect: (p) =>
      failedUnchanged(
        pattern(
          p.firstWrite,
          ' failed: lost the connection to ',
          /https:\/\/\S+/,
          ' during ',
          /(POST|PUT) \S+ .*/,
          ': the device closed the connection; the device may or may not have applied it',
        ),
      ),
  },
  {
    id: 'long-restart',
    title: 'a restart longer than the restart timeout',
    device: ['restart-delay=5s'],
    settles: true,
    expect: (p) =>
      !p.restarts
        ? changed(p, false)
        : {
            exit: 1,
            word: 'FAILED',
            message: pattern(
              'the device did not answer again within 3 s after the networking restart (no answer for 3 s); ',
              new RegExp(SITE_CHECKS),
            ),
            rolledBack: false,
            // It comes back later, running the new configuration: mpprov said it restarted it and lost sight of it.
            device: { restarts: 1, phase: 'up', active: 'configured', pending: 'none', faultMet: true },
          },
  },
  {
    id: 'no-return',
    title: 'a device that never returns from the restart',
    device: ['no-return'],
    expect: (p) =>
      !p.restarts
        ? changed(p, false)
        : {
            exit: 1,
            word: 'FAILED',
            message: pattern(
              'the device did not answer again within 3 s after the networking restart (no answer for 3 s); ',
              new RegExp(SITE_CHECKS),
            ),
            rolledBack: false,
            device: { restarts: 1, phase: 'gone', active: 'configured', pending: 'none', faultMet: true },
          },
  },
  {
    id: 'pending-stuck',
    title: 'a restart that leaves the changes pending',
    device: ['pending-stuck'],
    // The harder case: an outage too short for a probe to see, so only the unchanged view tells.
    simulator: { restartMs: 1 },
    expect: (p) =>
      !p.restarts
        ? changed(p, false)
        : {
            exit: 1,
            word: 'FAILED',
            message: pattern(
              'the networking restart did not make the changes active (they are still pending): ',
              /.+ is missing/,
              '; a reboot of the MP may be needed',
            ),
            rolledBack: false,
            device: { restarts: 1, phase: 'up', active: 'initial', pending: 'named', faultMet: true },
          },
  },
  {
    id: 'wrong-active',
    title: 'a wrong active configuration after the restart (a field dropped)',
    device: ['drop-field=method,times=1'],
    expect: (p) =>
      !p.restarts
        ? changed(p, false)
        : {
            exit: 1,
            word: 'FAILED',
            message: pattern(
              'after the restart the device runs a different configuration than requested: ',
              /.+: method is \(none\), expected \S+/,
              '; rolled back: the device runs its previous configuration again (verified)',
            ),
            rolledBack: true,
            device: { restarts: 2, phase: 'up', active: 'initial', pending: 'none', faultMet: true },
          },
  },
  {
    id: 'new-cert',
    title: 'a changed TLS certificate after the restart',
    device: ['new-cert,times=1'],
    expect: (p) =>
      !p.restarts
        ? changed(p, false)
        : {
            exit: 1,
            word: 'FAILED',
            message: pattern(
              'the device presents a different certificate since the restart: the certificate of ',
              /https:\/\/\S+/,
              ' is not issued by the configured CA (',
              /[^)]+/,
              '); possible interception',
            ),
            rolledBack: false,
            // Nothing more is sent to it, so nothing is rolled back: the new configuration stays active.
            device: { restarts: 1, phase: 'up', active: 'configured', pending: 'none', faultMet: true },
          },
  },
  {
    id: 'wrong-credentials',
    title: 'wrong credentials (another admin password on the device)',
    simulator: { password: 'not-the-profile-admin-password' },
    expect: () => failedUnchanged(pattern('bad credentials for admin at ', /https:\/\/\S+/)),
  },
  {
    id: '429-then-accepted',
    // Two waits of 2 s: longer than the restart timeout (3 s), which counts from the device's 202 only.
    title: '429 twice on the first write of its kind, then accepted (Retry-After waited)',
    device: ['throttle=2s,times=2@PUT /api/v1/service/*', 'throttle=2s,times=2@PUT /api/v1/access_control/*'],
    expect: (p) => changed(p),
  },
  {
    id: '429-always',
    title: '429 on every restart or ACL request',
    device: ['throttle=1s@PUT /api/v1/service/*', 'throttle=1s@PUT /api/v1/access_control/*'],
    expect: (p) =>
      failedUnchanged(
        p.restarts
          ? pattern(
              /restart networking \(\d+ stanza change\(s\)\) failed: /,
              'the device still refused PUT /service/networking/?action=restart as too many requests (HTTP 429) after 5 attempts: Too many requests (injected fault); retry in 1 s; ',
              'the changes already posted were taken back; nothing became active',
            )
          : pattern(
              p.firstWrite,
              ' failed: the device still refused PUT /access_control/acl/ ',
              /.+/,
              ' as too many requests (HTTP 429) after 5 attempts: Too many requests (injected fault); retry in 1 s.',
            ),
      ),
  },
  {
    id: 'huge-body',
    title: 'a huge answer body (64 MiB, streamed)',
    device: ['huge-body=64MiB,times=1@GET /api/v1/interface/'],
    expect: () =>
      failedUnchanged(
        pattern(
          'the device at ',
          /https:\/\/\S+/,
          ' answered GET /interface/?config_state=active with a body longer than 4194304 bytes (4 MiB), which was not read further',
        ),
      ),
  },
  {
    id: 'service-500',
    title: 'the monitoring service answers 500',
    service: (s) => s.setFaults({ error: { name: 'internal' } }),
    expect: (p) =>
      notConfirmed(
        p,
        /service unreachable: the service at https:\/\/\S+ failed internally on GET \/v3\/appliance\?hostname=branch-12-mp1 \(HTTP 500 "Internal server error"\); retry later/,
      ),
  },
  {
    id: 'service-slow',
    title: 'the monitoring service answers later than the wait',
    service: (s) => s.setFaults({ latencyMs: 10_000 }),
    expect: (p) => notConfirmed(p, /service unreachable: no answer within the wait of 2 s/),
  },
  {
    id: 'service-revoked-token',
    title: 'the monitoring service has revoked the token',
    service: (s) => s.revokeToken('technician'),
    expect: (p) =>
      notConfirmed(
        p,
        /bad token: the service at https:\/\/\S+ does not accept the access token \(HTTP 401 "Bad credentials"\): it is wrong, expired or revoked/,
      ),
  },
];

export { PROFILE_TRAITS, type ProfileTraits };
