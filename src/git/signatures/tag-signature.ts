/**
 * What can be read out of a tag's signature without the signer's keys: its kind, the OpenPGP key ID it
 * names, and the X.509 certificate a CMS signature carries, checked against the system trust store.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { launch } from '../launcher.js';
import { colonHex, findTag, isOid, oidBytes, parseAsn1, type Asn1Node } from './der.js';

export type SignatureType = 'PGP' | 'X509' | 'SSH';

/** The armor line each signature format starts with, as git recognises them. */
const ARMOR: Array<[string, SignatureType]> = [
  ['-----BEGIN PGP SIGNATURE-----', 'PGP'],
  ['-----BEGIN PGP MESSAGE-----', 'PGP'],
  ['-----BEGIN SIGNED MESSAGE-----', 'X509'],
  ['-----BEGIN SSH SIGNATURE-----', 'SSH'],
];

export function signatureType(signature: string): SignatureType | null {
  return ARMOR.find(([header]) => signature.startsWith(header))?.[1] ?? null;
}

/**
 * The base64 body of an ASCII-armored block: the lines between its BEGIN and END lines, without armor
 * headers (`Key: value`, which base64 never contains) and the OpenPGP checksum line (`=XXXX`).
 */
function dearmor(text: string): Buffer {
  const body: string[] = [];
  for (const line of text.split(/\r?\n/).slice(1)) {
    if (line.startsWith('-----') || line.startsWith('=')) break;
    if (!line.includes(':')) body.push(line.trim());
  }
  return Buffer.from(body.join(''), 'base64');
}

/** An OpenPGP packet: its tag and body. Partial (streamed) lengths do not occur in signatures. */
function firstPacket(data: Buffer): { tag: number; body: Buffer } | null {
  if (data.length < 2 || (data[0] & 0x80) === 0) return null;
  let offset = 1;
  let tag: number;
  let length: number;
  if (data[0] & 0x40) {
    tag = data[0] & 0x3f;
    const first = data[offset++];
    if (first < 192) length = first;
    else if (first < 224) length = ((first - 192) << 8) + data[offset++] + 192;
    else if (first === 255) {
      length = data.readUInt32BE(offset);
      offset += 4;
    } else return null;
  } else {
    tag = (data[0] >> 2) & 0x0f;
    const size = [1, 2, 4][data[0] & 0x03];
    if (size === undefined) length = data.length - offset;
    else {
      length = data.readUIntBE(offset, size);
      offset += size;
    }
  }
  if (offset + length > data.length) return null;
  return { tag, body: data.subarray(offset, offset + length) };
}

/** The issuer key ID among signature subpackets: Issuer (16), else Issuer Fingerprint (33). */
function issuerFromSubpackets(area: Buffer): string | null {
  let fromFingerprint: string | null = null;
  let offset = 0;
  while (offset < area.length) {
    const first = area[offset++];
    let length: number;
    if (first < 192) length = first;
    else if (first < 255) length = ((first - 192) << 8) + area[offset++] + 192;
    else {
      length = area.readUInt32BE(offset);
      offset += 4;
    }
    if (length < 1 || offset + length > area.length) break;
    const type = area[offset] & 0x7f;
    const data = area.subarray(offset + 1, offset + length);
    if (type === 16 && data.length === 8) return data.toString('hex').toUpperCase();
    if (type === 33 && data.length > 1) {
      const fingerprint = data.subarray(1);
      // Version 4 key IDs are the fingerprint's last 8 bytes; version 5 and 6 the first 8.
      const id = data[0] === 4 ? fingerprint.subarray(-8) : fingerprint.subarray(0, 8);
      fromFingerprint = id.toString('hex').toUpperCase();
    }
    offset += length;
  }
  return fromFingerprint;
}

/** The 16-hex-digit ID of the key an armored OpenPGP signature names, or null. */
export function pgpIssuerKeyId(armored: string): string | null {
  const packet = firstPacket(dearmor(armored));
  if (!packet || packet.tag !== 2 || packet.body.length < 1) return null;
  const body = packet.body;
  try {
    if (body[0] === 3) return body.subarray(7, 15).toString('hex').toUpperCase();
    if (body[0] !== 4 && body[0] !== 5 && body[0] !== 6) return null;
    // Version 6 counts subpacket areas in four octets, the others in two.
    const wide = body[0] === 6;
    const hashedLength = wide ? body.readUInt32BE(4) : body.readUInt16BE(4);
    const hashedStart = wide ? 8 : 6;
    const hashed = body.subarray(hashedStart, hashedStart + hashedLength);
    const unhashedAt = hashedStart + hashedLength;
    const unhashedLength = wide ? body.readUInt32BE(unhashedAt) : body.readUInt16BE(unhashedAt);
    const unhashedStart = unhashedAt + (wide ? 4 : 2);
    const unhashed = body.subarray(unhashedStart, unhashedStart + unhashedLength);
    return issuerFromSubpackets(hashed) ?? issuerFromSubpackets(unhashed);
  } catch {
    return null;
  }
}

export interface CertificateInfo {
  /** RFC 2253 order: most significant part last. */
  subject: string;
  subjectKeyIdentifier: string | null;
  email: string | null;
  serialNumber: string;
  issuer: {
    subject: string;
    /** The authority key identifier of the signing certificate. */
    subjectKeyIdentifier: string | null;
    crlUrl: string | null;
  };
}

const SIGNED_DATA = '1.2.840.113549.1.7.2';
const SUBJECT_KEY_IDENTIFIER = '2.5.29.14';
const AUTHORITY_KEY_IDENTIFIER = '2.5.29.35';
const CRL_DISTRIBUTION_POINTS = '2.5.29.31';

/** Node prints names one attribute per line, in certificate order; RFC 2253 joins them reversed. */
const rfc2253 = (name: string) => name.split('\n').filter(Boolean).reverse().join(',');

/** The extensions of a DER certificate: OID content bytes (hex) to the extension's value. */
function extensions(certificate: Asn1Node): Map<string, Buffer> {
  const found = new Map<string, Buffer>();
  const tbs = certificate.children[0];
  const wrapper = tbs?.children.find((child) => child.tag === 0xa3);
  for (const extension of wrapper?.children[0]?.children ?? []) {
    const oid = extension.children[0];
    const value = extension.children[extension.children.length - 1];
    if (oid?.tag === 0x06 && value?.tag === 0x04) found.set(oid.value.toString('hex'), value.value);
  }
  return found;
}

const extension = (all: Map<string, Buffer>, dotted: string) => all.get(oidBytes(dotted).toString('hex'));

function describe(der: Buffer): CertificateInfo {
  const certificate = new crypto.X509Certificate(der);
  const all = extensions(parseAsn1(der));
  const ski = extension(all, SUBJECT_KEY_IDENTIFIER);
  const aki = extension(all, AUTHORITY_KEY_IDENTIFIER);
  const crl = extension(all, CRL_DISTRIBUTION_POINTS);
  const keyIdentifier = aki ? findTag(parseAsn1(aki), 0x80) : undefined;
  const crlUri = crl ? findTag(parseAsn1(crl), 0x86) : undefined;
  const altEmail = /(?:^|, )email:([^,]+)/.exec(certificate.subjectAltName ?? '')?.[1];
  const subjectEmail = /(?:^|\n)emailAddress=([^\n]+)/.exec(certificate.subject)?.[1];
  return {
    subject: rfc2253(certificate.subject),
    subjectKeyIdentifier: ski ? colonHex(parseAsn1(ski).value) : null,
    email: altEmail ?? subjectEmail ?? null,
    serialNumber: BigInt(`0x${certificate.serialNumber}`).toString(10),
    issuer: {
      subject: rfc2253(certificate.issuer),
      subjectKeyIdentifier: keyIdentifier ? colonHex(keyIdentifier.value) : null,
      crlUrl: crlUri ? crlUri.value.toString('latin1') : null,
    },
  };
}

/**
 * The signing certificate a CMS signature carries (the one its first signer names by serial number,
 * else the first), or null when it carries none or cannot be read.
 */
export function cmsSigningCertificate(armored: string): CertificateInfo | null {
  try {
    const contentInfo = parseAsn1(dearmor(armored));
    if (!isOid(contentInfo.children[0], SIGNED_DATA)) return null;
    const signedData = contentInfo.children[1]?.children[0];
    if (!signedData) return null;
    const certificates = signedData.children.find((child) => child.tag === 0xa0)?.children ?? [];
    if (certificates.length === 0) return null;
    const signerInfos = signedData.children[signedData.children.length - 1];
    const signerSerial = signerInfos?.children[0]?.children[1]?.children[1];
    const serialOf = (cert: Asn1Node) => cert.children[0]?.children.find((c) => c.tag === 0x02);
    const signer =
      (signerSerial?.tag === 0x02 &&
        certificates.find((cert) => serialOf(cert)?.value.equals(signerSerial.value))) ||
      certificates[0];
    return describe(signer.raw);
  } catch {
    // Malformed or truncated input in any part: the signature carries no certificate we can read.
    return null;
  }
}

/**
 * Whether the CMS signature is valid over `payload` and its certificate chains to a CA the system
 * trust store holds (`SSL_CERT_FILE` and `SSL_CERT_DIR` change it), ignoring validity dates as GitLab
 * does. Uses the openssl command line; without it, nothing verifies.
 */
export async function cmsSignatureVerifies(armored: string, payload: Buffer): Promise<boolean> {
  const pem = armored.replace(/-----(BEGIN|END) SIGNED MESSAGE-----/g, '-----$1 PKCS7-----');
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'forge-cms-'));
  try {
    const content = path.join(dir, 'payload');
    await fs.writeFile(content, payload);
    return await new Promise<boolean>((resolve) => {
      // Through the launcher, as git is: no fork of the server's heap.
      const child = launch(
        'openssl',
        [
          'cms',
          '-verify',
          '-inform',
          'PEM',
          '-content',
          content,
          '-binary',
          '-no_check_time',
          '-purpose',
          'any',
          '-out',
          '/dev/null',
        ],
        process.env,
      );
      child.stdout.resume();
      child.stderr.resume();
      child.on('error', () => resolve(false));
      child.on('close', (code) => resolve(code === 0));
      child.stdin.on('error', () => {
        // openssl may exit before reading the signature; its exit code answers.
      });
      child.stdin.end(pem);
    });
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
