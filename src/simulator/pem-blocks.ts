/**
 * PEM blocks as OpenSSL reads them: `-----BEGIN LABEL-----`, optional RFC 1421 headers
 * (`Proc-Type`, `DEK-Info`) ended by an empty line, base64 content, `-----END LABEL-----`. Text
 * around and between blocks is ignored (OpenSSL skips it too, e.g. `openssl x509 -text` output).
 */
export interface PemBlock {
  label: string;
  /** Header lines of legacy encrypted keys, by name. */
  headers: Record<string, string>;
  /** The decoded content. */
  der: Buffer;
  /** The block's text, BEGIN to END line, as createPrivateKey and X509Certificate take it. */
  text: string;
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Every complete block; a block whose content is not base64 is left out. Never throws. */
export function pemBlocks(bytes: Uint8Array): PemBlock[] {
  // latin1 keeps every byte as one character: binary files give no blocks, and never throw.
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  const blocks: PemBlock[] = [];
  for (const match of text.matchAll(BLOCK)) {
    const [whole, label = '', inner = ''] = match;
    const headers: Record<string, string> = {};
    let body = inner;
    const split = /\r?\n\r?\n/.exec(inner);
    if (split !== null && /^[A-Za-z-]+:/.test(inner)) {
      for (const line of inner.slice(0, split.index).split(/\r?\n/)) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
      }
      body = inner.slice(split.index + split[0].length);
    }
    const base64 = body.replace(/\s+/g, '');
    if (base64.length === 0 || base64.length % 4 !== 0 || !BASE64.test(base64)) continue;
    blocks.push({ label, headers, der: Buffer.from(base64, 'base64'), text: `${whole}\n` });
  }
  return blocks;
}
