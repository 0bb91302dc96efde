import {
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  OneToMany,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
  type Relation,
} from 'typeorm';

/** A tag name or wildcard (`v*`) that only the listed roles, users, groups or deploy keys may create. */
@Entity({ name: 'protected_tags' })
export class ProtectedTag {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @OneToMany(() => ProtectedTagCreateAccessLevel, (level) => level.protectedTag)
  createAccessLevels?: Relation<ProtectedTagCreateAccessLevel[]>;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}

@Entity({ name: 'protected_tag_create_access_levels' })
export class ProtectedTagCreateAccessLevel {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'protected_tag_id' })
  protectedTagId: number;

  @ManyToOne(() => ProtectedTag, (tag) => tag.createAccessLevels, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'protected_tag_id' })
  protectedTag?: Relation<ProtectedTag>;

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
