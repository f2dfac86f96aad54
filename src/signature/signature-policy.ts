import type { Problem } from '../core/problem.js';
import { SignatureStatus, type StickSignature } from './verify-stick-signature.js';

/**
 * What a verification means for a job. A refused signature always stops the stick: a list that
 * is there but does not match is an altered or corrupt stick, whether or not signatures are
 * required. An unsigned stick stops it only with `signatures.required: true`.
 */
export function signatureProblems(signature: StickSignature, required: boolean): Problem[] {
  switch (signature.status) {
    case SignatureStatus.Signed:
      return [];
    case SignatureStatus.Unsigned:
      return required ? signature.problems : [];
    case SignatureStatus.Refused:
      return signature.problems;
  }
}

/** One sentence for usb.log and `mpprov validate`: who signed, or why not. */
export function describeSignature(signature: StickSignature): string {
  switch (signature.status) {
    case SignatureStatus.Signed:
      return `signed by ${signature.principal}${signature.key === undefined ? '' : ` (${signature.key})`}, ${signature.listed.length} file${signature.listed.length === 1 ? '' : 's'} checked`;
    case SignatureStatus.Unsigned:
      return 'not signed';
    case SignatureStatus.Refused:
      return signature.principal === undefined ? 'signature refused' : `signature of ${signature.principal} refused`;
  }
}
