import {
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
  type Relation,
} from 'typeorm';
import { User } from '../users/user.entity.js';

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

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  @Column({ type: 'smallint', name: 'access_level' })
  accessLevel: number;

  @Column({ type: 'date', name: 'expires_at', nullable: true })
  expiresAt: string | null;

  /** A custom role (member_roles family) widening the access level. */
  @Column({ type: 'integer', name: 'member_role_id', nullable: true })
  memberRoleId: number | null;

  @Column({ type: 'integer', name: 'created_by_id', nullable: true })
  createdById: number | null;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}
