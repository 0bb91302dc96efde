import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A project's push rule: the checks every push and every API commit must pass. */
@Entity({ name: 'push_rules' })
export class PushRule {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'text', name: 'commit_message_regex', nullable: true })
  commitMessageRegex: string | null;

  @Column({ type: 'text', name: 'commit_message_negative_regex', nullable: true })
  commitMessageNegativeRegex: string | null;

  @Column({ type: 'text', name: 'branch_name_regex', nullable: true })
  branchNameRegex: string | null;

  @Column({ type: 'text', name: 'author_email_regex', nullable: true })
  authorEmailRegex: string | null;

  @Column({ type: 'text', name: 'file_name_regex', nullable: true })
  fileNameRegex: string | null;

  @Column({ type: 'boolean', name: 'deny_delete_tag', default: false })
  denyDeleteTag: boolean;

  @Column({ type: 'boolean', name: 'member_check', default: false })
  memberCheck: boolean;

  @Column({ type: 'boolean', name: 'commit_committer_check', default: false })
  commitCommitterCheck: boolean;

  @Column({ type: 'boolean', name: 'commit_committer_name_check', default: false })
  commitCommitterNameCheck: boolean;

  @Column({ type: 'boolean', name: 'reject_non_dco_commits', default: false })
  rejectNonDcoCommits: boolean;

  /** MiB; 0 for no limit. */
  @Column({ type: 'integer', name: 'max_file_size', default: 0 })
  maxFileSize: number;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}
