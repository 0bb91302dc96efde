import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type CiVariableLevel = 'instance' | 'group' | 'project';
export type CiVariableType = 'env_var' | 'file';

/**
 * A CI/CD variable of the instance, a group or a project (one table, `level` says which). The value is
 * kept sealed with the server's key (see remote_mirrors/secret-box.ts).
 */
@Entity({ name: 'ci_variables' })
export class CiVariable {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'varchar', length: 16 })
  level: CiVariableLevel;

  /** The group's namespace id, for a group variable. */
  @Column({ type: 'integer', name: 'group_id', nullable: true })
  groupId: number | null;

  @Column({ type: 'integer', name: 'project_id', nullable: true })
  projectId: number | null;

  @Column({ type: 'varchar', length: 255 })
  key: string;

  @Column({ type: 'text', name: 'encrypted_value' })
  encryptedValue: string;

  @Column({ type: 'varchar', length: 16, name: 'variable_type', default: 'env_var' })
  variableType: CiVariableType;

  @Column({ type: 'boolean', name: 'protected', default: false })
  protected: boolean;

  @Column({ type: 'boolean', default: false })
  masked: boolean;

  @Column({ type: 'boolean', default: false })
  hidden: boolean;

  @Column({ type: 'boolean', default: false })
  raw: boolean;

  /** `*` for every environment; instance variables have no scope and keep `*`. */
  @Column({ type: 'varchar', length: 255, name: 'environment_scope', default: '*' })
  environmentScope: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  description: string | null;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}
