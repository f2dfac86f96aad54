/**
 * Why `name` cannot be an interface of this laptop, or undefined when it could be one. The
 * kernel's own rule (dev_valid_name: 1 to 15 bytes, not `.` or `..`, no `/`, `:` or white space),
 * plus no control character and no leading `-`, which a command line would read as an option.
 * Checked before any command runs, so a name from a stick, agent.yaml or the command line reaches
 * `ip` only when it is a name. Pure.
 */
export function portNameProblem(name: string): string | undefined {
  const shown = JSON.stringify(name);
  if (name === '' || name === '.' || name === '..') return `${shown} cannot be a network interface's name`;
  if (Buffer.byteLength(name, 'utf8') > 15)
    return `${shown} cannot be a network interface's name: Linux names have at most 15 bytes`;
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  if (/[\s/:\u0000-\u001f\u007f]/.test(name))
    return `${shown} cannot be a network interface's name: it holds a slash, a colon, white space or a control character`;
  if (name.startsWith('-')) return `${shown} cannot be a network interface's name: it starts with "-"`;
  return undefined;
}
