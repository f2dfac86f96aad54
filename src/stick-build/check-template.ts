import { isMap, isScalar, isSeq, type Node } from 'yaml';
import { STICK_SECRET_KEYS } from '../config/index.js';
import type { Problem } from '../core/problem.js';
import type { Template } from './load-template.js';
import { problemAt } from './place.js';
import { findPlaceholders, parseExpression, SECRET_PLACEMENT } from './placeholders.js';

/**
 * What is wrong with the template whatever the inventory says: a `${` never closed, an
 * expression that is no variable, a `${secret:...}` anywhere but the whole value of a `*_file`
 * key, a secret key given by value (`password: ...`), whether written in the template or taken
 * from the inventory: secrets are never template or inventory values, files the team shares and
 * keeps in version control. Said once, at the template's line, rather than once per monitoring
 * point; nothing is built from such a template.
 */
export function checkTemplate(template: Template): Problem[] {
  const problems: Problem[] = [];
  const at = (node: Node, message: string, hint?: string): void => {
    const { line, col } = template.lines.linePos(node.range?.[0] ?? 0);
    problems.push(problemAt({ file: template.file, line, column: col }, message, hint));
  };
  const visit = (node: unknown, key: string | undefined): void => {
    if (isMap(node)) {
      for (const item of node.items) {
        const name = isScalar(item.key) ? String(item.key.value) : undefined;
        if (name !== undefined && STICK_SECRET_KEYS.has(name))
          at(
            item.key as Node,
            `'${name}' is a secret: a template names its file, never its value`,
            `write ${name}_file: \${secret:NAME} and put the secret in --secrets-dir/NAME`,
          );
        else visit(item.value, name);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) visit(item, undefined);
    } else if (isScalar(node) && typeof node.value === 'string') {
      const text = node.value;
      const scanned = findPlaceholders(text);
      if (!scanned.ok) return at(node, scanned.message);
      for (const placeholder of scanned.found) {
        const expression = parseExpression(placeholder.expression);
        if (expression.kind === 'invalid') at(node, expression.message);
        else if (expression.kind === 'secret') {
          const whole = placeholder.start === 0 && placeholder.end === text.length;
          if (!whole || key?.endsWith('_file') !== true) at(node, SECRET_PLACEMENT.message, SECRET_PLACEMENT.hint);
          else {
            const inner = findPlaceholders(expression.name);
            if (!inner.ok) at(node, inner.message);
            for (const nested of inner.ok ? inner.found : []) {
              const parsed = parseExpression(nested.expression);
              if (parsed.kind !== 'variable') at(node, 'a secret name may hold ${var}s only', SECRET_PLACEMENT.hint);
            }
          }
        }
      }
    }
    return undefined;
  };
  visit(template.doc.contents, undefined);
  return problems;
}
