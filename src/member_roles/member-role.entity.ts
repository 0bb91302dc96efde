import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

@Entity({ name: 'member_roles' })
export class MemberRole {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  /** The top-level group holding the role; null for an instance role. */
  @Column({ type: 'integer', name: 'namespace_id', nullable: true })
  namespaceId: number | null;

  @Column({ type: 'smallint', name: 'base_access_level' })
  baseAccessLevel: number;

  /** The enabled permission flags. */
  @Column({ type: 'text', array: true, default: () => "'{}'" })
  permissions: string[];

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}
