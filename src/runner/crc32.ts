/** The IEEE CRC-32 GitLab Runner sends as the trace's checksum (`crc32:%08x`), computed incrementally. */
const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export class Crc32 {
  private crc = 0xffffffff;

  update(data: Buffer): void {
    let c = this.crc;
    for (let i = 0; i < data.length; i++) c = TABLE[(c ^ data[i]) & 0xff] ^ (c >>> 8);
    this.crc = c >>> 0;
  }

  /** `crc32:` and eight lowercase hex digits, as GitLab Runner formats it. */
  digest(): string {
    return `crc32:${((this.crc ^ 0xffffffff) >>> 0).toString(16).padStart(8, '0')}`;
  }
}
