import { Column, Entity, JoinColumn, ManyToOne, OneToMany, type Relation } from 'typeorm';
import { ProtectedRefColumns, ProtectionEntryColumns } from './protection-columns.js';

export type ProtectedBranchAction = 'push' | 'merge' | 'unprotect';

/** A branch name or wildcard (`release/*`) and who may push to, merge into and unprotect it. */
@Entity({ name: 'protected_branches' })
export class ProtectedBranch extends ProtectedRefColumns {
  @Column({ type: 'boolean', name: 'allow_force_push', default: false })
  allowForcePush: boolean;

  @Column({ type: 'boolean', name: 'code_owner_approval_required', default: false })
  codeOwnerApprovalRequired: boolean;

  @OneToMany(() => ProtectedBranchAccessLevel, (level) => level.protectedBranch)
  accessLevels?: Relation<ProtectedBranchAccessLevel[]>;
}

/** One entry of a protected branch's push, merge or unprotect list. */
@Entity({ name: 'protected_branch_access_levels' })
export class ProtectedBranchAccessLevel extends ProtectionEntryColumns {
  @Column({ type: 'integer', name: 'protected_branch_id' })
  protectedBranchId: number;

  @ManyToOne(() => ProtectedBranch, (branch) => branch.accessLevels, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'protected_branch_id' })
  protectedBranch?: Relation<ProtectedBranch>;

  @Column({ type: 'varchar', length: 16 })
  action: ProtectedBranchAction;
}
