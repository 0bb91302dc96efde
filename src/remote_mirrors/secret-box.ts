/**
 * Encryption of the secrets kept in the database (AES-256-GCM). The key is derived from
 * `FORGE_SECRET_KEY`; without it, one is generated on first start and kept in `DATA_DIR/secret-key`
 * (mode 0600), as GitLab generates its secrets file. Losing the key loses the secrets, not the rows.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const VERSION = 'v1';

export class SecretBox {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = Buffer.from(crypto.hkdfSync('sha256', secret, 'forge-api', 'database secrets', 32));
  }

  /** The configured secret, or the one kept in the data directory (made on first use). */
  static fromConfig(config: { secretKey?: string; dataDir: string }): SecretBox {
    if (config.secretKey) return new SecretBox(config.secretKey);
    const file = path.join(config.dataDir, 'secret-key');
    if (!fs.existsSync(file)) {
      fs.mkdirSync(config.dataDir, { recursive: true });
      try {
        fs.writeFileSync(file, crypto.randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
      } catch (err) {
        // Another process made it first.
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    return new SecretBox(fs.readFileSync(file, 'utf8').trim());
  }

  seal(plain: string): string {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), data]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64')))
      .join(':');
  }

  open(sealed: string): string {
    const [version, iv, tag, data] = sealed.split(':');
    if (version !== VERSION || !iv || !tag || data === undefined) throw new Error('not a sealed secret');
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
  }
}
