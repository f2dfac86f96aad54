import { createHash, createPrivateKey } from 'node:crypto';
import { CredentialKind, detectCredentialKind } from './detect.js';
import { pemBlocks } from './pem-blocks.js';

/**
 * A certificate or key by what it is, not by how the file spells it: line endings, a BOM, text
 * around the PEM blocks ("Bag Attributes", comments) and PEM against DER are spelling. The file
 * uploaded is the canonical PEM of its blocks, and its name and the "unchanged" judgement come
 * from that, so re-saving a CA on Windows never uploads it again nor restarts the networking.
 * A PFX is DER by definition and its bytes are its content (re-encoding it would change its MAC
 * salt); a file of no known kind is kept byte for byte (validation refused it anyway).
 */
export interface CredentialIdentity {
  /** The bytes to upload: canonical PEM, a PFX's DER, or the file's own bytes for an unknown kind. */
  bytes: Buffer;
  /** SHA-256 hex of `bytes`: the same certificate or key always has the same one. */
  sha256: string;
  extension: 'pem' | 'p12';
}

export function credentialIdentity(file: Uint8Array): CredentialIdentity {
  const kind = detectCredentialKind(file);
  const canonical = canonicalPem(file, kind);
  const bytes = canonical ?? Buffer.from(file);
  return {
    bytes,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    extension: kind === CredentialKind.Pfx ? 'p12' : 'pem',
  };
}

function canonicalPem(file: Uint8Array, kind: CredentialKind): Buffer | undefined {
  switch (kind) {
    case CredentialKind.DerCertificate:
      return Buffer.from(pemBlock('CERTIFICATE', [], Buffer.from(file)));
    case CredentialKind.DerEncryptedPrivateKey:
      return Buffer.from(pemBlock('ENCRYPTED PRIVATE KEY', [], Buffer.from(file)));
    case CredentialKind.DerPrivateKey: {
      const label = derKeyLabel(Buffer.from(file));
      return label === undefined ? undefined : Buffer.from(pemBlock(label, [], Buffer.from(file)));
    }
    case CredentialKind.Pfx:
    case CredentialKind.Unknown:
      // A PEM-wrapped PFX is rare; its DER is its content all the same.
      return kind === CredentialKind.Pfx ? pfxOfPem(file) : undefined;
    default: {
      const blocks = pemBlocks(file);
      if (blocks.length === 0) return undefined;
      return Buffer.from(blocks.map((b) => pemBlock(b.label, headersOf(b.text), b.der)).join(''));
    }
  }
}

function pfxOfPem(file: Uint8Array): Buffer | undefined {
  const block = pemBlocks(file).find((b) => b.label === 'PKCS12');
  return block === undefined ? undefined : block.der;
}

/** A DER key's PEM label, by which encoding node reads it as (PKCS#8, PKCS#1 RSA or SEC1 EC). */
function derKeyLabel(der: Buffer): string | undefined {
  const labels = { pkcs8: 'PRIVATE KEY', pkcs1: 'RSA PRIVATE KEY', sec1: 'EC PRIVATE KEY' } as const;
  for (const type of ['pkcs8', 'pkcs1', 'sec1'] as const) {
    try {
      createPrivateKey({ key: der, format: 'der', type });
      return labels[type];
    } catch {
      // Not this encoding: the next one is tried.
    }
  }
  return undefined;
}

/** RFC 1421 headers of an encrypted traditional key (Proc-Type, DEK-Info): part of its content. */
function headersOf(block: string): string[] {
  const inner = block.replace(/^-----BEGIN [A-Z0-9 ]+-----/, '').replace(/-----END [A-Z0-9 ]+-----$/, '');
  if (!/^\s*[A-Za-z-]+:/.test(inner)) return [];
  const head = inner.replace(/^\s+/, '').split(/\r?\n\r?\n/)[0] ?? '';
  return head
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

function pemBlock(label: string, headers: readonly string[], der: Buffer): string {
  const body = der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
  const head = headers.length === 0 ? '' : `${headers.join('\n')}\n\n`;
  return `-----BEGIN ${label}-----\n${head}${body}\n-----END ${label}-----\n`;
}
