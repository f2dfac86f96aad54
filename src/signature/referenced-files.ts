/**
 * Every file a stick's configuration references, as written in it: `*_file` secrets,
 * `ca_cert` / `client_cert` / `private_key`, and `tls.ca`. Works on the parsed data whatever its
 * shape (keys are what mark a file, not their place), so a configuration the schema refuses still
 * gives its files; `mpprov sign` refuses such a stick anyway. The agent's list of what a
 * configuration reads and this list must agree: test/signature checks them against loadStick.
 */
const FILE_KEYS = new Set(['ca_cert', 'client_cert', 'private_key']);

export function referencedFiles(config: unknown): string[] {
  const found = new Set<string>();
  const visit = (node: unknown, parentKey: string | undefined): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item, undefined);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      const isFileKey = key.endsWith('_file') || FILE_KEYS.has(key) || (key === 'ca' && parentKey === 'tls');
      if (typeof value === 'string' && isFileKey) found.add(value);
      else visit(value, key);
    }
  };
  visit(config, undefined);
  return [...found];
}
