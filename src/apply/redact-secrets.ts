/**
 * A device may quote our own request back in an error (an echoed body, a field value). Every event
 * and result leaving the engine is passed through this, so no secret of the stick or the agent can
 * reach a terminal, a JSON line, a log or a file by that route.
 */
export function redactSecrets<T>(value: T, secrets: readonly string[]): T {
  const list = secrets.filter((s) => s.length > 0);
  if (list.length === 0) return value;
  return walk(value, list) as T;
}

function walk(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') {
    let out = value;
    for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join('(secret)');
    return out;
  }
  if (Array.isArray(value)) return value.map((item) => walk(item, secrets));
  // Plain data only: class instances (a Plan's Secret objects) serialise themselves safely.
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, secrets)]));
  }
  return value;
}
