import {
  type AgentConfig,
  type DeviceAccess,
  formatKeyPath,
  type InnerTls,
  hasErrors,
  type KeyPath,
  loadStick,
  type LoadedStick,
  type Problem,
  resolveDeviceAccess,
  type StickFileContent,
} from '../config/index.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { StickReader } from '../ingest/index.js';
import {
  checkCredentialSet,
  checkTrustAnchor,
  type CredentialFile,
  type CredentialSet,
  type InstalledCertificate,
} from './check-credentials.js';
import { FileVerdicts } from './file-verdicts.js';

/** The keys of a dot1x or inner_tls block that give its private key's password. */
type KeyPasswordKeys = Pick<InnerTls, 'private_key_password' | 'private_key_password_file'>;

/** What the certificate checks learnt about one credential file, for the plan's upload step. */
interface CredentialFacts {
  keyHoldsCertificate: boolean;
  /** The client certificate's validity, learnt while the key was open: later stages never decrypt again. */
  clientCertValidity?: { notBefore: string; notAfter: string };
  /** The set's other certificates (CA chain, a PFX's extra ones) and their validity, for the device's clock. */
  otherCertificates: readonly InstalledCertificate[];
}

/**
 * A stick read and checked once, and everything later stages need from it: the model (secrets as
 * Secret), every secret for the redactor, the files it names with their bytes and hashes, what the
 * certificate checks learnt, and (validated against agent.yaml) how to reach each device. plan,
 * apply, the daemon's job and the CLI all take this; none of them reads the stick again.
 */
export interface ValidatedStick extends LoadedStick {
  /** Per dot1x block (dotted key path of the block, or of its inner_tls), what the checks learnt. */
  credentials: ReadonlyMap<string, CredentialFacts>;
  /**
   * How to reach each Monitoring Point, in the file's order: given when validated with an agent
   * configuration and the file is valid; a device without password or trust is then a problem.
   */
  access: readonly DeviceAccess[] | undefined;
}

export interface ValidateOptions {
  /** How the stick's files are read: the files themselves unless the daemon's job brings its seam. */
  reader?: StickReader;
  label?: string;
  now?: Date;
  /** agent.yaml, for device credentials and trust; without it `access` stays undefined (mpprov validate). */
  agent?: AgentConfig;
}

/**
 * The whole validation of a stick: the configuration (YAML, schema, rules, referenced files), then
 * every certificate and key it names, then each device's access. Every problem carries
 * FILE:LINE:COL. Never throws for bad input.
 */
export async function validateStick(configFile: string, options: ValidateOptions = {}): Promise<ValidatedStick> {
  const loaded = await loadStick(configFile, {
    ...(options.reader === undefined ? {} : { reader: options.reader }),
    ...(options.label === undefined ? {} : { label: options.label }),
  });
  const credentials = new Map<string, CredentialFacts>();
  const validated: ValidatedStick = { ...loaded, credentials, access: undefined };
  // Certificates are judged whatever the schema said elsewhere in the file: on what it accepted.
  const model = loaded.judged;
  if (model === undefined) return validated;
  const checkOptions = options.now === undefined ? {} : { now: options.now };
  const extra: Problem[] = [];

  const verdicts = new FileVerdicts();
  for (const [index, mp] of model.monitoring_points.entries()) {
    const mpPath: KeyPath = ['monitoring_points', index];
    const anchor = loaded.files.get(formatKeyPath([...mpPath, 'tls', 'ca']));
    if (anchor !== undefined) {
      const { first } = verdicts.judge('tls.ca', [anchor.bytes], anchor.keyPath, () => ({
        problems: checkTrustAnchor(credentialFile(anchor), checkOptions).problems,
        facts: undefined,
      }));
      // A turn of the event loop after each file judged: a signal or the watchdog is served between them.
      if (first) await nextTurn();
    }

    for (const [name, iface] of Object.entries(mp.interfaces ?? {})) {
      const dot1x = iface.dot1x;
      if (dot1x === undefined) continue;
      const blocks: { path: KeyPath; block: KeyPasswordKeys }[] = [
        { path: [...mpPath, 'interfaces', name, 'dot1x'], block: dot1x },
      ];
      if (dot1x.inner_tls !== undefined)
        blocks.push({ path: [...mpPath, 'interfaces', name, 'dot1x', 'inner_tls'], block: dot1x.inner_tls });
      for (const { path, block } of blocks) {
        const set = credentialSetAt(loaded, path, block);
        if (set.caCert === undefined && set.clientCert === undefined && set.privateKey === undefined) continue;
        // The same files with the same password in the same kind of block (its messages name the
        // block's keys) are the same verdict: judged once, named again after.
        const identity = [
          set.caCert?.bytes,
          set.clientCert?.bytes,
          set.privateKey?.bytes,
          verdicts.passwordIdentity(set.privateKeyPassword?.value),
        ];
        const { facts, first } = verdicts.judge(String(path.at(-1)), identity, path, () => {
          const check = checkCredentialSet(set, { ...checkOptions, verdicts });
          const learnt: CredentialFacts = {
            keyHoldsCertificate: check.keyHoldsCertificate,
            otherCertificates: check.otherCertificates,
            ...(check.clientCertValidity === undefined ? {} : { clientCertValidity: check.clientCertValidity }),
          };
          return { problems: check.problems, facts: learnt };
        });
        credentials.set(formatKeyPath(path), facts);
        if (first) await nextTurn();
      }
    }
  }
  extra.push(...verdicts.problems().map((p) => loaded.place(p)));
  validated.problems = [...loaded.problems, ...extra].sort((a, b) => a.line - b.line || a.column - b.column);
  if (options.agent === undefined || loaded.model === undefined || hasErrors(validated.problems)) return validated;

  // After every other check, and appended rather than sorted in: a missing password or trust is
  // about agent.yaml as much as about this file, and is said last.
  const access: DeviceAccess[] = [];
  const blocked: Problem[] = [];
  for (const index of model.monitoring_points.keys()) {
    const resolved = resolveDeviceAccess(loaded, index, options.agent);
    if ('access' in resolved) access.push(resolved.access);
    else blocked.push(loaded.place(resolved.problem));
  }
  validated.problems = [...validated.problems, ...blocked];
  if (blocked.length === 0) validated.access = access;
  return validated;
}

function credentialSetAt(loaded: LoadedStick, blockPath: KeyPath, block: KeyPasswordKeys): CredentialSet {
  const file = (key: string): CredentialFile | undefined => {
    const content = loaded.files.get(formatKeyPath([...blockPath, key]));
    return content === undefined ? undefined : credentialFile(content);
  };
  const set: CredentialSet = {};
  const caCert = file('ca_cert');
  const clientCert = file('client_cert');
  const privateKey = file('private_key');
  if (caCert !== undefined) set.caCert = caCert;
  if (clientCert !== undefined) set.clientCert = clientCert;
  if (privateKey !== undefined) set.privateKey = privateKey;
  // The model holds the key password as a Secret, inline or read from its _file.
  const password = block.private_key_password;
  // Point a wrong or ignored password at the key the person wrote: inline or _file.
  const fromFile = block.private_key_password_file !== undefined;
  const passwordPath = [...blockPath, fromFile ? 'private_key_password_file' : 'private_key_password'];
  if (password !== undefined) set.privateKeyPassword = { value: password, keyPath: passwordPath };
  return set;
}

function credentialFile(content: StickFileContent): CredentialFile {
  return { name: content.name, bytes: content.bytes, keyPath: content.keyPath };
}
