import fs from 'node:fs';
import path from 'node:path';
import type { DataSource } from 'typeorm';
import type { Config } from '../config.js';
import { hashToken } from '../core/auth.js';
import { PersonalAccessToken } from './personal-access-token.entity.js';
import { User } from './user.entity.js';
import { UsersService } from './users.service.js';

export interface RootUser {
  user: User;
  tokenFile: string;
  /** Set only on the start that generated the token: the one time it may be shown. */
  generatedToken?: string;
  /** Where the token comes from, for the start message; never the token. */
  tokenSource: string;
}

const ROOT_SCOPES = [
  'api',
  'read_api',
  'read_user',
  'read_repository',
  'write_repository',
  'read_registry',
  'write_registry',
  'sudo',
  'admin_mode',
];

/**
 * On first start, creates the administrator `root`. Its token is FORGE_ROOT_TOKEN, or a generated one
 * that is printed once and saved to DATA_DIR/root-token with mode 0600.
 */
export async function ensureRootUser(dataSource: DataSource, config: Config): Promise<RootUser> {
  const users = new UsersService({ dataSource, config });
  const tokenFile = path.join(config.dataDir, 'root-token');
  const savedToken = fs.existsSync(tokenFile) ? fs.readFileSync(tokenFile, 'utf8').trim() : undefined;
  let user = await dataSource.getRepository(User).findOne({ where: { username: 'root' } });
  if (!user) {
    user = await users.createUser({
      username: 'root',
      name: 'Administrator',
      email: 'admin@example.com',
      admin: true,
    });
  }
  const tokens = dataSource.getRepository(PersonalAccessToken);
  if (config.rootToken) {
    const known = await tokens.findOne({ where: { tokenDigest: hashToken(config.rootToken) } });
    if (!known)
      await users.createToken(user.id, {
        name: 'root (FORGE_ROOT_TOKEN)',
        scopes: ROOT_SCOPES,
        token: config.rootToken,
      });
    return { user, tokenFile, tokenSource: 'from FORGE_ROOT_TOKEN' };
  }
  if (savedToken && (await tokens.findOne({ where: { tokenDigest: hashToken(savedToken) } }))) {
    return { user, tokenFile, tokenSource: `saved in ${tokenFile}` };
  }
  const { token } = await users.createToken(user.id, { name: 'root (generated)', scopes: ROOT_SCOPES });
  fs.mkdirSync(config.dataDir, { recursive: true });
  fs.writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  fs.chmodSync(tokenFile, 0o600);
  return { user, tokenFile, generatedToken: token, tokenSource: `saved in ${tokenFile}` };
}
