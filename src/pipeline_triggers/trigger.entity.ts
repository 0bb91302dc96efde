import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A pipeline trigger token of a project (`ci_triggers`). The token is kept sealed with the instance's
 * secret key (its owner reads it back in lists) and as a SHA-256 digest, by which a trigger is found.
 */
@Entity({ name: 'ci_triggers' })
export class PipelineTrigger {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'integer', name: 'owner_id', nullable: true })
  ownerId: number | null;

  @Column({ type: 'text' })
  description: string;

  @Column({ type: 'text', name: 'token_encrypted' })
  tokenEncrypted: string;

  @Column({ type: 'varchar', length: 64, name: 'token_digest' })
  tokenDigest: string;

  @Column({ type: 'timestamptz', name: 'last_used', nullable: true })
  lastUsed: Date | null;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}
