/** One `-----BEGIN X-----` ... `-----END X-----` block of a PEM file. */
export interface PemBlock {
  label: string;
  /** The whole block, headers included, as node's PEM decoders want it. */
  text: string;
  /** The base64 body decoded; headers such as Proc-Type are not part of it. */
  der: Buffer;
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;

/** Every PEM block in the bytes, in order; none for DER or garbage. */
export function pemBlocks(bytes: Uint8Array): PemBlock[] {
  const text = Buffer.from(bytes).toString('latin1');
  const blocks: PemBlock[] = [];
  for (const match of text.matchAll(BLOCK)) {
    const label = match[1] ?? '';
    const inner = match[2] ?? '';
    // RFC 1421 headers ("Proc-Type: ...") end at the first blank line; the body follows it.
    const body = /^[\s]*[A-Za-z-]+:/.test(inner)
      ? inner
          .split(/\r?\n\r?\n/)
          .slice(1)
          .join('\n')
      : inner;
    blocks.push({ label, text: match[0], der: Buffer.from(body.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64') });
  }
  return blocks;
}
