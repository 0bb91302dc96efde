/**
 * Where uploads live on disk: `DATA_DIR/uploads/@hashed/ab/cd/<sha256 of the project id>/<secret>/<filename>`,
 * as GitLab lays them out, so a rename of the project moves nothing. A file is put in place whole (a
 * rename from the spool beside it) before its row commits, and removed after its row is gone: a crash
 * leaves at most a file no row names, which nothing serves.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { RepositoryStorage } from '../git/storage.js';

export class UploadStorage {
  constructor(private readonly root: string) {}

  /** The project's upload directory. */
  projectDir(projectId: number): string {
    const hash = RepositoryStorage.hash(projectId);
    return path.join(this.root, '@hashed', hash.slice(0, 2), hash.slice(2, 4), hash);
  }

  private filePath(projectId: number, secret: string, filename: string): string {
    return path.join(this.projectDir(projectId), secret, filename);
  }

  /** Moves a spooled file to its place. */
  async place(projectId: number, secret: string, filename: string, spooled: string): Promise<void> {
    const target = this.filePath(projectId, secret, filename);
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    await fs.promises.rename(spooled, target);
  }

  /** The file's bytes, streamed; null when it is not on disk. */
  async open(projectId: number, secret: string, filename: string): Promise<Readable | null> {
    const target = this.filePath(projectId, secret, filename);
    const handle = await fs.promises.open(target, 'r').catch(() => null);
    return handle ? handle.createReadStream() : null;
  }

  /** Removes an upload: its secret's directory, which holds its one file. */
  async remove(projectId: number, secret: string): Promise<void> {
    await fs.promises.rm(path.join(this.projectDir(projectId), secret), { recursive: true, force: true });
  }

  /** Removes every upload of a deleted project. */
  async removeProject(projectId: number): Promise<void> {
    await fs.promises.rm(this.projectDir(projectId), { recursive: true, force: true });
  }
}
