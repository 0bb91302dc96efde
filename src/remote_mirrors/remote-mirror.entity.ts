import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type RemoteMirrorStatus = 'none' | 'scheduled' | 'started' | 'finished' | 'to_retry' | 'failed';
export type RemoteMirrorAuthMethod = 'password' | 'ssh_public_key';

/** A push mirror of a project's repository. Secrets are kept encrypted (see secret-box.ts). */
@Entity({ name: 'remote_mirrors' })
export class RemoteMirror {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  /** The remote's URL without user info. */
  @Column({ type: 'varchar', length: 2048 })
  url: string;

  /** `{user, password}` of the URL's user info, encrypted; null when it had none. */
  @Column({ type: 'text', name: 'encrypted_credentials', nullable: true })
  encryptedCredentials: string | null;

  @Column({ type: 'varchar', length: 16, name: 'auth_method' })
  authMethod: RemoteMirrorAuthMethod;

  @Column({ type: 'text', name: 'encrypted_ssh_private_key', nullable: true })
  encryptedSshPrivateKey: string | null;

  @Column({ type: 'text', name: 'ssh_public_key', nullable: true })
  sshPublicKey: string | null;

  /** known_hosts lines: given through `host_keys`, or recorded on the first connection. */
  @Column({ type: 'text', name: 'ssh_known_hosts', nullable: true })
  sshKnownHosts: string | null;

  @Column({ type: 'boolean' })
  enabled: boolean;

  @Column({ type: 'boolean', name: 'only_protected_branches' })
  onlyProtectedBranches: boolean;

  @Column({ type: 'boolean', name: 'keep_divergent_refs' })
  keepDivergentRefs: boolean;

  @Column({ type: 'varchar', length: 255, name: 'mirror_branch_regex', nullable: true })
  mirrorBranchRegex: string | null;

  @Column({ type: 'varchar', length: 16, name: 'update_status' })
  updateStatus: RemoteMirrorStatus;

  @Column({ type: 'text', name: 'last_error', nullable: true })
  lastError: string | null;

  @Column({ type: 'timestamptz', name: 'last_update_at', nullable: true })
  lastUpdateAt: Date | null;

  @Column({ type: 'timestamptz', name: 'last_update_started_at', nullable: true })
  lastUpdateStartedAt: Date | null;

  @Column({ type: 'timestamptz', name: 'last_successful_update_at', nullable: true })
  lastSuccessfulUpdateAt: Date | null;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}
