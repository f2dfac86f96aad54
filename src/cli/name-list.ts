import { InvalidArgumentError } from 'commander';

/**
 * A `--limit a,b --limit c` option's parser: every name, in order, each at most once. An empty
 * name is refused (exit 64): `--limit "$SITES"` with an empty variable must not quietly select
 * nothing and report success. `what` names the list in the sentence ("monitoring point names").
 */
export function nameList(what: string): (value: string, previous: string[] | undefined) => string[] {
  return (value, previous) => {
    const names = value.split(',').map((n) => n.trim());
    if (names.some((n) => n === ''))
      throw new InvalidArgumentError(`'${value}' has an empty name: give ${what} separated by commas`);
    return [...new Set([...(previous ?? []), ...names])];
  };
}
