// The basics every stage shares: errors with stable codes, secrets and their one redactor, located problems.
export * from './errors.js';
// Not `export *`: valueForRedaction is the redactor's own door to a secret, internal to core.
export { Secret } from './secret.js';
export { Redactor } from './redact.js';
export * from './problem.js';
// Sorting without the locale (and without loading ICU's collation data into the agent).
export { byCodeUnit } from './code-unit-order.js';
// Text from outside shown as data: controls escaped visibly.
export { visibleJson, visibleLines, visibleText, visibleValue } from './visible-text.js';
