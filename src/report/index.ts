export { formatProblem, summarizeProblems } from './format-problems.js';
