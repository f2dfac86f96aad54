import { AsnProp, AsnPropTypes, AsnType, AsnTypeTypes, OctetString } from '@peculiar/asn1-schema';
import { EncryptedContentInfo } from '@peculiar/asn1-cms';
import { AlgorithmIdentifier } from '@peculiar/asn1-x509';

/**
 * The ASN.1 structures of password-based encryption that no @peculiar package defines: PKCS#5
 * (RFC 8018) PBES2 and PBKDF2 parameters, the PKCS#12 PBE parameters, and PKCS#7's EncryptedData
 * that wraps a PFX's encrypted certificates. Declared through asn1-schema's decorators, called as
 * functions because the project compiles without legacy decorator syntax.
 */

/** PBES2-params ::= SEQUENCE { keyDerivationFunc AlgorithmIdentifier, encryptionScheme AlgorithmIdentifier } */
export class Pbes2Params {
  keyDerivationFunc = new AlgorithmIdentifier();
  encryptionScheme = new AlgorithmIdentifier();
}
AsnProp({ type: AlgorithmIdentifier })(Pbes2Params.prototype, 'keyDerivationFunc');
AsnProp({ type: AlgorithmIdentifier })(Pbes2Params.prototype, 'encryptionScheme');
AsnType({ type: AsnTypeTypes.Sequence })(Pbes2Params);

/**
 * PBKDF2-params ::= SEQUENCE { salt CHOICE { specified OCTET STRING, otherSource AlgorithmIdentifier },
 * iterationCount INTEGER, keyLength INTEGER OPTIONAL, prf AlgorithmIdentifier DEFAULT hmacWithSHA1 }.
 * Only a specified salt: no tool writes otherSource, and such a file does not parse here.
 */
export class Pbkdf2Params {
  salt = new OctetString();
  /** A number, or a decimal string when the INTEGER takes four bytes or more. */
  iterationCount: number | string = 0;
  keyLength?: number | string;
  prf?: AlgorithmIdentifier;
}
AsnProp({ type: OctetString })(Pbkdf2Params.prototype, 'salt');
AsnProp({ type: AsnPropTypes.Integer })(Pbkdf2Params.prototype, 'iterationCount');
AsnProp({ type: AsnPropTypes.Integer, optional: true })(Pbkdf2Params.prototype, 'keyLength');
AsnProp({ type: AlgorithmIdentifier, optional: true })(Pbkdf2Params.prototype, 'prf');
AsnType({ type: AsnTypeTypes.Sequence })(Pbkdf2Params);

/** pkcs-12PbeParams ::= SEQUENCE { salt OCTET STRING, iterations INTEGER } (RFC 7292 appendix C) */
export class Pkcs12PbeParams {
  salt = new OctetString();
  iterations: number | string = 0;
}
AsnProp({ type: OctetString })(Pkcs12PbeParams.prototype, 'salt');
AsnProp({ type: AsnPropTypes.Integer })(Pkcs12PbeParams.prototype, 'iterations');
AsnType({ type: AsnTypeTypes.Sequence })(Pkcs12PbeParams);

/** EncryptedData ::= SEQUENCE { version INTEGER, encryptedContentInfo EncryptedContentInfo, ... } (RFC 5652 8) */
export class EncryptedData {
  version: number | string = 0;
  encryptedContentInfo = new EncryptedContentInfo();
}
AsnProp({ type: AsnPropTypes.Integer })(EncryptedData.prototype, 'version');
AsnProp({ type: EncryptedContentInfo })(EncryptedData.prototype, 'encryptedContentInfo');
AsnType({ type: AsnTypeTypes.Sequence })(EncryptedData);

/** A small non-negative INTEGER as asn1-schema gives it (number, or string from four bytes on); else undefined. */
export function countOf(value: number | string | undefined): number | undefined {
  const n = typeof value === 'string' ? Number(value) : value;
  return n !== undefined && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}
