import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AuthenticatorProfile } from './authenticator-profile.js';
import type { Dot1xBackend, Dot1xFiles, Dot1xResult } from './dot1x-backend.js';
import { runEapAttempt } from './eap-attempt.js';
import { judgeAttempt, type AttemptContext } from './eap-outcome.js';
import { renderEapUserFile, renderHostapdConfig } from './hostapd-config.js';
import { NetnsLab, type LabNames } from './netns-lab.js';
import { requireRealBackend, type RealBackendCommands } from './real-backend-prerequisites.js';
import { isSimulatorError, SimulatorErrorCode } from './simulator-error.js';
import { FILE_SLOTS, type FileSlot, type Stanza } from './stanza.js';
import { renderWpaSupplicantConfig } from './wpa-supplicant-config.js';

/**
 * 802.1X decided on a wire: for each authentication the stanza is rendered into a wpa_supplicant
 * network block (wpa-supplicant-config.ts), the switch port's profile into a hostapd with its
 * internal EAP server (hostapd-config.ts), both run in the instance's own namespaces on one veth
 * pair (netns-lab.ts), and the port is authorized only if wpa_supplicant saw EAP success AND
 * hostapd flags the station AUTHORIZED. One authentication at a time per instance; each one
 * bounded (a timeout counts as unauthorized, with a reason saying so).
 */

export interface RealDot1xBackendOptions {
  /** Bound on one authentication, from hostapd's start to the EAP result; default 10 s. */
  timeoutMs?: number;
  /**
   * Default true: once the supplicant is up, tell hostapd a station arrived, so it asks for the
   * identity at once, as a switch that polls its port does. false: wait for the supplicant's own
   * EAPOL-Start, about 2 s later (a switch that does not poll; also what tests of a running
   * authentication use, to have time to look at it).
   */
  kickAuthenticator?: boolean;
}

export const DEFAULT_DOT1X_TIMEOUT_MS = 10_000;

/**
 * Some builds of hostapd and wpa_supplicant do not load OpenSSL 3's legacy provider themselves,
 * yet MSCHAPv2 needs MD4 and a legacy PFX needs RC2/3DES: give the daemons a configuration that
 * activates it beside the default provider. (Debian's 2.10 loads it anyway; this keeps it so.)
 */
const OPENSSL_CNF = `openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
[provider_sect]
default = default_sect
legacy = legacy_sect
[default_sect]
activate = 1
[legacy_sect]
activate = 1
`;

/** Checks root and the commands, then builds the instance's namespaces; throws one sentence if it cannot. */
export async function createRealDot1xBackend(options: RealDot1xBackendOptions = {}): Promise<RealDot1xBackend> {
  const commands = requireRealBackend();
  const lab = await NetnsLab.create(commands);
  try {
    await writeFile(join(lab.names.dir, 'openssl.cnf'), OPENSSL_CNF, { mode: 0o600 });
    const version = async (command: string) => {
      const out = await lab.run(command, ['-v']);
      return /v\d+\.\d+\S*/.exec(`${out.stdout}\n${out.stderr}`)?.[0] ?? '(unknown version)';
    };
    const versions = `hostapd ${await version(commands.hostapd)}, wpa_supplicant ${await version(commands.wpa_supplicant)}`;
    return new RealDot1xBackend(lab, commands, versions, {
      timeoutMs: options.timeoutMs ?? DEFAULT_DOT1X_TIMEOUT_MS,
      kick: options.kickAuthenticator ?? true,
    });
  } catch (error) {
    await lab.close();
    throw error;
  }
}

export class RealDot1xBackend implements Dot1xBackend {
  readonly name = 'real';
  /** The daemons' output of the last authentication, for tests and rehearsals that ask why. */
  lastLogs: { hostapd: string[]; wpaSupplicant: string[] } | undefined;
  private readonly lab: NetnsLab;
  private readonly commands: RealBackendCommands;
  private readonly versions: string;
  private readonly timing: { timeoutMs: number; kick: boolean };
  private queue: Promise<unknown> = Promise.resolve();
  private attempts = 0;
  private closed = false;

  constructor(
    lab: NetnsLab,
    commands: RealBackendCommands,
    versions: string,
    timing: { timeoutMs: number; kick: boolean },
  ) {
    this.lab = lab;
    this.commands = commands;
    this.versions = versions;
    this.timing = timing;
  }

  get names(): LabNames {
    return this.lab.names;
  }

  /** One line for the simulator's banner. */
  describe(): string {
    return `real: ${this.versions} in network namespaces ${this.names.authNamespace} and ${this.names.supplicantNamespace}`;
  }

  authenticate(profile: AuthenticatorProfile, stanza: Stanza, files: Dot1xFiles): Promise<Dot1xResult> {
    const run = this.queue.then(() => this.attempt(profile, stanza, files));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Stops any authentication under way and removes the namespaces, daemons and files. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.lab.close();
    await this.queue;
  }

  private async attempt(profile: AuthenticatorProfile, stanza: Stanza, files: Dot1xFiles): Promise<Dot1xResult> {
    if (this.closed) return deny('the real 802.1X backend is closed (the simulator is stopping)');
    this.attempts += 1;
    const dir = join(this.names.dir, `attempt-${this.attempts}`);
    try {
      await mkdir(dir, { mode: 0o700 });
      const prepared = await this.prepare(profile, stanza, files, dir);
      if (typeof prepared === 'string') return deny(prepared);
      const seen = await runEapAttempt({
        lab: this.lab,
        commands: this.commands,
        dir,
        hostapdConf: prepared.hostapdConf,
        hostapdCtrl: prepared.hostapdCtrl,
        wpaSupplicantConf: prepared.wpaSupplicantConf,
        env: {
          PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
          OPENSSL_CONF: join(this.names.dir, 'openssl.cnf'),
        },
        timeoutMs: this.timing.timeoutMs,
        kick: this.timing.kick,
      });
      this.lastLogs = { hostapd: seen.hostapdLog, wpaSupplicant: seen.supplicantLog };
      if (this.closed) return deny('the real 802.1X backend was closed during the authentication');
      return judgeAttempt(seen, prepared.context);
    } catch (error) {
      return deny(
        `the real 802.1X backend could not run the authentication: ${error instanceof Error ? error.message : String(error)}`,
      );
    } finally {
      // Keys and passwords lie in there: gone as soon as the daemons are.
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** Writes the files and configurations of one attempt; a string is why it cannot run. */
  private async prepare(
    profile: AuthenticatorProfile,
    stanza: Stanza,
    files: Dot1xFiles,
    dir: string,
  ): Promise<
    string | { hostapdConf: string; hostapdCtrl: string; wpaSupplicantConf: string; context: AttemptContext }
  > {
    if (stanza.wpa_key_mgmt === undefined) return '802.1X is disabled on the interface, but its switch port demands it';
    if (stanza.ssid !== undefined || stanza.security !== undefined) {
      return 'the real 802.1X backend drives wired ports only (hostapd wired driver); a wireless stanza cannot be tested on a veth';
    }
    const write = (name: string, content: string | Uint8Array) =>
      writeFile(join(dir, name), content, { mode: 0o600 }).then(() => join(dir, name));

    const paths = new Map<FileSlot, string>();
    const described = new Map<string, string>();
    for (const slot of FILE_SLOTS) {
      const name = stanza[slot];
      if (name === undefined) continue;
      const content = files.get(slot, name);
      if (content === undefined) return `${slot} file "${name}" is not active on the device`;
      const path = await write(`${slot}-${name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 128)}`, content);
      paths.set(slot, path);
      described.set(path, `${slot} "${name}"`);
    }
    const wpaText = renderWpaSupplicantConfig(stanza, (slot) => paths.get(slot) ?? '', {
      ctrlInterface: join(dir, 'wpa_supplicant'),
    });
    if (wpaText === undefined) return '802.1X is disabled on the interface, but its switch port demands it';

    let eapUsers: string;
    try {
      eapUsers = renderEapUserFile(profile);
    } catch (error) {
      if (isSimulatorError(error) && error.code === SimulatorErrorCode.ProfileNotRenderable)
        return `the switch port's profile cannot be given to hostapd: ${error.message}`;
      throw error;
    }
    const hostapdCtrl = join(dir, 'hostapd');
    const hostapdText = renderHostapdConfig(profile, {
      interface: this.names.authInterface,
      ctrlInterface: hostapdCtrl,
      eapUserFile: await write('hostapd.eap_user', eapUsers),
      clientCa: profile.clientCa === undefined ? undefined : await write('client-ca.pem', profile.clientCa.pem),
      serverCert: profile.serverCert === undefined ? undefined : await write('server-cert.pem', profile.serverCert.pem),
      serverKey: profile.serverKey === undefined ? undefined : await write('server-key.pem', profile.serverKey.pem),
    });
    return {
      hostapdConf: await write('hostapd.conf', hostapdText),
      hostapdCtrl,
      wpaSupplicantConf: await write('wpa_supplicant.conf', wpaText),
      context: { ...describeMethod(stanza), describeFile: (path) => described.get(path) },
    };
  }
}

/** The method's name, and the identity the server decides on: for EAP-TLS and MD5 wpa_supplicant sends the anonymous identity when there is one. */
function describeMethod(s: Stanza): { method: string; identity: string } {
  const identity = s.wpa_identity ?? '';
  switch (s.wpa_eap) {
    case 'PEAP':
      return { method: s.wpa_phase2 === 'auth=TLS' ? 'PEAP with inner EAP-TLS' : 'PEAP-MSCHAPv2', identity };
    case 'TLS':
      return { method: 'EAP-TLS', identity: s.wpa_anonymous_identity ?? identity };
    default:
      return { method: 'EAP-MD5', identity: s.wpa_anonymous_identity ?? identity };
  }
}

function deny(reason: string): Dot1xResult {
  return { authorized: false, reason };
}
