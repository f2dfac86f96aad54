// The basics every stage shares: errors with stable codes, secrets, located problems.
export * from './errors.js';
export * from './secret.js';
export * from './problem.js';
