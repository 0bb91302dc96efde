/**
 * A minimal ASN.1 BER/DER reader: enough to walk a CMS signature (which `gpgsm` writes with
 * indefinite lengths) and the extensions of the certificates inside it.
 */

export interface Asn1Node {
  /** The identifier octet, e.g. 0x30 for SEQUENCE, 0xa0 for [0] constructed. */
  tag: number;
  constructed: boolean;
  /** The whole element, header included. */
  raw: Buffer;
  /** The content octets (for indefinite lengths, without the end-of-contents marker). */
  value: Buffer;
  children: Asn1Node[];
}

export class Asn1Error extends Error {}

const MAX_DEPTH = 64;

function readNode(buffer: Buffer, offset: number, depth: number): { node: Asn1Node; end: number } {
  if (depth > MAX_DEPTH) throw new Asn1Error('ASN.1 nesting too deep');
  if (offset + 2 > buffer.length) throw new Asn1Error('truncated ASN.1 header');
  const tag = buffer[offset];
  // High tag numbers (0x1f) do not occur in the structures read here.
  if ((tag & 0x1f) === 0x1f) throw new Asn1Error('unsupported ASN.1 tag');
  const constructed = (tag & 0x20) !== 0;
  let position = offset + 1;
  const first = buffer[position++];
  let length: number | null;
  if (first < 0x80) length = first;
  else if (first === 0x80) length = null;
  else {
    const bytes = first & 0x7f;
    if (bytes > 4 || position + bytes > buffer.length) throw new Asn1Error('bad ASN.1 length');
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + buffer[position++];
  }
  const children: Asn1Node[] = [];
  if (length === null) {
    if (!constructed) throw new Asn1Error('indefinite length on a primitive');
    const start = position;
    for (;;) {
      if (position + 2 > buffer.length) throw new Asn1Error('unterminated indefinite length');
      if (buffer[position] === 0 && buffer[position + 1] === 0) break;
      const child = readNode(buffer, position, depth + 1);
      children.push(child.node);
      position = child.end;
    }
    const end = position + 2;
    return {
      node: {
        tag,
        constructed,
        raw: buffer.subarray(offset, end),
        value: buffer.subarray(start, position),
        children,
      },
      end,
    };
  }
  const end = position + length;
  if (end > buffer.length) throw new Asn1Error('ASN.1 length beyond the data');
  const value = buffer.subarray(position, end);
  if (constructed) {
    let inner = position;
    while (inner < end) {
      const child = readNode(buffer, inner, depth + 1);
      children.push(child.node);
      inner = child.end;
    }
  }
  return { node: { tag, constructed, raw: buffer.subarray(offset, end), value, children }, end };
}

/** Parses one element from the start of `buffer`. */
export function parseAsn1(buffer: Buffer): Asn1Node {
  return readNode(buffer, 0, 0).node;
}

/** Depth-first search for the first element with this tag. */
export function findTag(node: Asn1Node, tag: number): Asn1Node | undefined {
  if (node.tag === tag) return node;
  for (const child of node.children) {
    const found = findTag(child, tag);
    if (found) return found;
  }
  return undefined;
}

/** The DER content of an OBJECT IDENTIFIER, from its dotted form. */
export function oidBytes(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out = [parts[0] * 40 + parts[1]];
  for (const part of parts.slice(2)) {
    const septets = [part & 0x7f];
    for (let rest = Math.floor(part / 128); rest > 0; rest = Math.floor(rest / 128))
      septets.unshift((rest & 0x7f) | 0x80);
    out.push(...septets);
  }
  return Buffer.from(out);
}

export const isOid = (node: Asn1Node | undefined, dotted: string) =>
  node?.tag === 0x06 && node.value.equals(oidBytes(dotted));

/** `AB:CD:...`, as GitLab writes key identifiers. */
export const colonHex = (bytes: Buffer) =>
  [...bytes].map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join(':');
