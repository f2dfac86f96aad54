/** A `${...}` in a template scalar: where it is in the text, and what is between the braces. */
interface Placeholder {
  start: number;
  end: number;
  expression: string;
}

export type Scanned = { ok: true; found: Placeholder[] } | { ok: false; index: number; message: string };

/**
 * Every `${...}` of a text, outermost only (`${secret:dot1x-${name}}` is one, its name holding
 * another). Braces nest; an opening `${` never closed is an error at its index.
 */
export function findPlaceholders(text: string): Scanned {
  const found: Placeholder[] = [];
  let from = 0;
  for (;;) {
    const start = text.indexOf('${', from);
    if (start === -1) return { ok: true, found };
    let depth = 0;
    let end = -1;
    for (let i = start + 1; i < text.length; i += 1) {
      if (text[i] === '{') depth += 1;
      else if (text[i] === '}') {
        depth -= 1;
        if (depth === 0) {
          end = i + 1;
          break;
        }
      }
    }
    if (end === -1) return { ok: false, index: start, message: 'a ${ is never closed with }' };
    found.push({ start, end, expression: text.slice(start + 2, end - 1) });
    from = end;
  }
}

export type Expression =
  | { kind: 'variable'; name: string; fallback?: string }
  | { kind: 'secret'; name: string }
  | { kind: 'invalid'; message: string };

const NAME = /^[a-z][a-z0-9_]*$/;

/** `var`, `var:-default` or `secret:NAME` (NAME may hold `${var}`s, resolved by the caller). */
export function parseExpression(expression: string): Expression {
  if (expression.startsWith('secret:')) {
    const name = expression.slice('secret:'.length);
    return name === '' ? { kind: 'invalid', message: '${secret:} names no secret' } : { kind: 'secret', name };
  }
  const split = expression.indexOf(':-');
  const name = split === -1 ? expression : expression.slice(0, split);
  if (!NAME.test(name))
    return { kind: 'invalid', message: `'${name}' is not a variable name (lower-case letters, digits and _)` };
  return split === -1 ? { kind: 'variable', name } : { kind: 'variable', name, fallback: expression.slice(split + 2) };
}

/** Where `${secret:...}` may stand, said the same by the template check and the renderer. */
export const SECRET_PLACEMENT = {
  message: '${secret:...} may stand only as the whole value of a *_file key',
  hint: 'write password_file: ${secret:NAME}',
} as const;
