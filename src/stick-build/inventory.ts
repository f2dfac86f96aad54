import type { Problem } from '../core/problem.js';
import type { Place } from './place.js';

/** A variable's value (any YAML value; text from a CSV) and where the inventory gives it. */
export interface Variable {
  value: unknown;
  place: Place;
}

/** One monitoring point of the inventory, its variables looked up MP, site `vars`, `defaults`. */
export interface InventoryMp {
  site: string;
  name: string;
  /** Its row (CSV) or its entry (YAML). */
  place: Place;
  /** Every variable it sees, `site`, `name` and `url` included, each from where it was found. */
  vars: ReadonlyMap<string, Variable>;
}

export interface Inventory {
  file: string;
  /** Sites in inventory order, each with its MPs in inventory order. */
  sites: ReadonlyMap<string, readonly InventoryMp[]>;
  problems: Problem[];
  /** Sites that get no stick: a problem in one of their rows. */
  refusedSites: ReadonlySet<string>;
  /** A problem no site can be blamed for (not UTF-8, the header): nothing is built. */
  refusedWhole: boolean;
}

/** `[a-z0-9][a-z0-9-]{0,31}`, docs/rolling-out.md. */
export const SITE_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;
/** A variable's (and a CSV column's) name. */
export const VARIABLE_NAME = /^[a-z][a-z0-9_]*$/;
export const SITE_HINT = 'a site name is 1-32 lower-case letters, digits and dashes, starting with a letter or digit';
export const VARIABLE_HINT = 'a variable name is lower-case letters, digits and _, starting with a letter';
