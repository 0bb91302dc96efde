import crypto from 'node:crypto';

const KEY_LENGTH = 64;

function scrypt(password: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    crypto.scrypt(password, salt, KEY_LENGTH, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** scrypt with a random salt, stored as `salt:hash` in hex. */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  return `${salt.toString('hex')}:${(await scrypt(password, salt)).toString('hex')}`;
}

export async function verifyPassword(password: string, digest: string | null): Promise<boolean> {
  const [saltHex, hashHex] = (digest ?? '').split(':');
  if (!saltHex || !hashHex) return false;
  const expected = Buffer.from(hashHex, 'hex');
  const actual = await scrypt(password, Buffer.from(saltHex, 'hex'));
  return expected.length === actual.length && crypto.timingSafeEqual(expected, actual);
}

/** For `reset_password` and `force_random_password`: nobody ever learns it. */
export const randomPassword = () => crypto.randomBytes(32).toString('base64url');
