import { Column, CreateDateColumn, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/**
 * What a protected branch and a protected tag both are: a name or wildcard in a project. Not an
 * entity: each keeps its own table and its own lists of entries.
 */
export abstract class ProtectedRefColumns {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}

/** One entry of a protection's list: a role, or a user, a group or a deploy key it names. */
export abstract class ProtectionEntryColumns {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  /** 0 No access, 30 Developer, 40 Maintainer, 60 Administrator; null when the entry names someone. */
  @Column({ type: 'smallint', name: 'access_level', nullable: true })
  accessLevel: number | null;

  @Column({ type: 'integer', name: 'user_id', nullable: true })
  userId: number | null;

  @Column({ type: 'integer', name: 'group_id', nullable: true })
  groupId: number | null;

  @Column({ type: 'integer', name: 'deploy_key_id', nullable: true })
  deployKeyId: number | null;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}
