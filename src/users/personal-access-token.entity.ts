import {
  Column,
  CreateDateColumn,
  Entity,
  ManyToOne,
  JoinColumn,
  PrimaryGeneratedColumn,
  type Relation,
} from 'typeorm';
import { User } from './user.entity.js';

@Entity({ name: 'personal_access_tokens' })
export class PersonalAccessToken {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'user_id' })
  userId: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  /** SHA-256 of the token, hex. The token itself is shown once, on creation. */
  @Column({ type: 'varchar', length: 64, name: 'token_digest' })
  tokenDigest: string;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  /** The token this one replaced by rotation. */
  @Column({ type: 'integer', name: 'previous_token_id', nullable: true })
  previousTokenId: number | null;

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  scopes: string[];

  @Column({ type: 'date', name: 'expires_at', nullable: true })
  expiresAt: string | null;

  @Column({ type: 'boolean', default: false })
  revoked: boolean;

  @Column({ type: 'timestamptz', name: 'last_used_at', nullable: true })
  lastUsedAt: Date | null;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}
