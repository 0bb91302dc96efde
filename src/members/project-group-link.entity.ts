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
import { Namespace } from '../namespaces/namespace.entity.js';

/** A project shared with a group: the group's members get at most `groupAccess` in the project. */
@Entity({ name: 'project_group_links' })
export class ProjectGroupLink {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'integer', name: 'group_id' })
  groupId: number;

  @ManyToOne(() => Namespace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'group_id' })
  group?: Relation<Namespace>;

  @Column({ type: 'smallint', name: 'group_access' })
  groupAccess: number;

  @Column({ type: 'date', name: 'expires_at', nullable: true })
  expiresAt: string | null;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}
