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

export type NamespaceKind = 'user' | 'group';

@Entity({ name: 'namespaces' })
export class Namespace {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 255 })
  path: string;

  @Column({ type: 'varchar', length: 16 })
  kind: NamespaceKind;

  @Column({ type: 'integer', name: 'parent_id', nullable: true })
  parentId: number | null;

  /** Ids from the root namespace down to this one, itself included: one index lookup finds every ancestor. */
  @Column({ type: 'integer', array: true, name: 'traversal_ids', default: () => "'{}'" })
  traversalIds: number[];

  @Column({ type: 'varchar', length: 2048, name: 'full_path' })
  fullPath: string;

  @Column({ type: 'varchar', length: 2048, name: 'full_name' })
  fullName: string;

  /** The user of a personal namespace. */
  @Column({ type: 'integer', name: 'owner_id', nullable: true })
  ownerId: number | null;

  @ManyToOne(() => User, { onDelete: 'CASCADE', nullable: true })
  @JoinColumn({ name: 'owner_id' })
  owner?: Relation<User> | null;

  @Column({ type: 'smallint', name: 'visibility_level', default: 20 })
  visibilityLevel: number;

  @Column({ type: 'text', default: '' })
  description: string;

  /** Group settings (request_access_enabled, project_creation_level...); defaults live in the groups service. */
  @Column({ type: 'jsonb', default: () => "'{}'" })
  settings: Record<string, unknown>;

  @Column({ type: 'timestamptz', name: 'marked_for_deletion_at', nullable: true })
  markedForDeletionAt: Date | null;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}
