import { formatKeyPath, type KeyPath, loadStick, type LoadedStick, type Problem, type StickFileContent } from '../config/index.js';
import { checkCredentialSet, checkTrustAnchor, type CredentialFile, type CredentialSet } from './check-credentials.js';

/** What the certificate checks learnt about one credential file, for the plan's upload step. */
export interface CredentialFacts {
  keyHoldsCertificate: boolean;
}

export interface ValidatedStick extends LoadedStick {
  /** Per dot1x block (dotted key path of the block, or of its inner_tls), what the checks learnt. */
  credentials: Map<string, CredentialFacts>;
}

/**
 * The whole validation of a stick: the configuration (YAML, schema, rules, referenced files), then
 * every certificate and key it names. Every problem carries FILE:LINE:COL. Never throws for bad input.
 */
export async function validateStick(configFile: string, options: { label?: string; now?: Date } = {}): Promise<ValidatedStick> {
  const loaded = await loadStick(configFile, options.label === undefined ? {} : { label: options.label });
  const credentials = new Map<string, CredentialFacts>();
  const validated: ValidatedStick = { ...loaded, credentials };
  const stick = loaded.stick;
  if (stick === undefined) return validated;
  const checkOptions = options.now === undefined ? {} : { now: options.now };
  const extra: Problem[] = [];

  stick.monitoring_points.forEach((mp, index) => {
    const mpPath: KeyPath = ['monitoring_points', index];
    const anchor = loaded.files.get(formatKeyPath([...mpPath, 'tls', 'ca']));
    if (anchor !== undefined) extra.push(...checkTrustAnchor(credentialFile(anchor), checkOptions).problems.map(loaded.place));

    for (const [name, iface] of Object.entries(mp.interfaces ?? {})) {
      const dot1x = iface.dot1x;
      if (dot1x === undefined) continue;
      const blocks: KeyPath[] = [[...mpPath, 'interfaces', name, 'dot1x']];
      if (dot1x.inner_tls !== undefined) blocks.push([...mpPath, 'interfaces', name, 'dot1x', 'inner_tls']);
      for (const blockPath of blocks) {
        const set = credentialSetAt(loaded, blockPath);
        if (set.caCert === undefined && set.clientCert === undefined && set.privateKey === undefined) continue;
        const check = checkCredentialSet(set, checkOptions);
        extra.push(...check.problems.map(loaded.place));
        credentials.set(formatKeyPath(blockPath), { keyHoldsCertificate: check.keyHoldsCertificate });
      }
    }
  });
  validated.problems = [...loaded.problems, ...extra].sort((a, b) => a.line - b.line || a.column - b.column);
  return validated;
}

function credentialSetAt(loaded: LoadedStick, blockPath: KeyPath): CredentialSet {
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
  const password = loaded.secrets.get(formatKeyPath([...blockPath, 'private_key_password']));
  // Point a wrong or ignored password at the key the person wrote: inline or _file.
  const fromFile = valueAt(loaded.stick, [...blockPath, 'private_key_password_file']) !== undefined;
  const passwordPath = [...blockPath, fromFile ? 'private_key_password_file' : 'private_key_password'];
  if (password !== undefined) set.privateKeyPassword = { value: password.reveal(), keyPath: passwordPath };
  return set;
}

function valueAt(data: unknown, path: KeyPath): unknown {
  let node = data;
  for (const part of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[part];
  }
  return node;
}

function credentialFile(content: StickFileContent): CredentialFile {
  return { name: content.name, bytes: content.bytes, keyPath: content.keyPath };
}
