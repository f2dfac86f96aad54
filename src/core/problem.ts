/**
 * A configuration problem is data, not an exception: where it is, what is wrong, what would fix it.
 * Rendering (text with caret, JSON, usb.log) happens at the edges.
 */

export const Severity = { Error: 'error', Warning: 'warning' } as const;
export type Severity = (typeof Severity)[keyof typeof Severity];

/** A key path into the configuration, e.g. ['monitoring_points', 0, 'interfaces', 'eth0']. */
export type KeyPath = readonly (string | number)[];

export interface Problem {
  severity: Severity;
  file: string;
  line: number;
  column: number;
  /** Dotted key path, array items as [i]: `monitoring_points[0].interfaces.eth0.ipv4.gateway`. */
  path: string;
  message: string;
  hint?: string;
}

/** A problem found before its position is known; the loader attaches file, line and column. */
export interface UnplacedProblem {
  severity: Severity;
  path: KeyPath;
  message: string;
  hint?: string;
  /** Point at the key itself rather than its value (unknown keys, duplicate keys). */
  atKey?: boolean;
}

export function formatKeyPath(path: KeyPath): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? part : `.${part}`;
  }
  return out;
}

export function hasErrors(problems: readonly Problem[]): boolean {
  return problems.some((p) => p.severity === Severity.Error);
}
