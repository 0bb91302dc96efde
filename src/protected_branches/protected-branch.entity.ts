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

export type ProtectedBranchAction = 'push' | 'merge' | 'unprotect';

/** A branch name or wildcard (`release/*`) and who may push to, merge into and unprotect it. */
@Entity({ name: 'protected_branches' })
export class ProtectedBranch {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'boolean', name: 'allow_force_push', default: false })
  allowForcePush: boolean;

  @Column({ type: 'boolean', name: 'code_owner_approval_required', default: false })
  codeOwnerApprovalRequired: boolean;

  @OneToMany(() => ProtectedBranchAccessLevel, (level) => level.protectedBranch)
  accessLevels?: Relation<ProtectedBranchAccessLevel[]>;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}

/** One entry of a protected branch's push, merge or unprotect list: a role, a user, a group or a deploy key. */
@Entity({ name: 'protected_branch_access_levels' })
export class ProtectedBranchAccessLevel {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'protected_branch_id' })
  protectedBranchId: number;

  @ManyToOne(() => ProtectedBranch, (branch) => branch.accessLevels, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'protected_branch_id' })
  protectedBranch?: Relation<ProtectedBranch>;

  @Column({ type: 'varchar', length: 16 })
  action: ProtectedBranchAction;

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
