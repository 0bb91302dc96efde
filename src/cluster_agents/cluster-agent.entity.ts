import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A Kubernetes agent registered for a project (its configuration project). */
@Entity({ name: 'cluster_agents' })
export class ClusterAgent {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'varchar', length: 63 })
  name: string;

  @Column({ type: 'integer', name: 'created_by_user_id', nullable: true })
  createdByUserId: number | null;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}

export type AgentTokenStatus = 'active' | 'revoked';

/** A token the agent authenticates with; only its SHA-256 digest is kept. */
@Entity({ name: 'cluster_agent_tokens' })
export class ClusterAgentToken {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'agent_id' })
  agentId: number;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column({ type: 'varchar', length: 64, name: 'token_digest' })
  tokenDigest: string;

  @Column({ type: 'varchar', length: 7 })
  status: AgentTokenStatus;

  @Column({ type: 'integer', name: 'created_by_user_id', nullable: true })
  createdByUserId: number | null;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'last_used_at', nullable: true })
  lastUsedAt: Date | null;
}
