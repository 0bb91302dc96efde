import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** GitLab's access levels. */
export const AccessLevel = {
  NoAccess: 0,
  MinimalAccess: 5,
  Guest: 10,
  Planner: 15,
  Reporter: 20,
  Developer: 30,
  Maintainer: 40,
  Owner: 50,
} as const;

export type MemberSourceType = 'Project' | 'Namespace';

@Entity({ name: 'members' })
export class Member {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'varchar', length: 16, name: 'source_type' })
  sourceType: MemberSourceType;

  @Column({ type: 'integer', name: 'source_id' })
  sourceId: number;

  @Column({ type: 'integer', name: 'user_id' })
  userId: number;

  @Column({ type: 'smallint', name: 'access_level' })
  accessLevel: number;

  @Column({ type: 'date', name: 'expires_at', nullable: true })
  expiresAt: string | null;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}
