import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type UserState = 'active' | 'blocked';
/** `project_bot` users stand behind project and group access tokens. */
export type UserType = 'human' | 'project_bot';

/** Free-text profile fields, kept together: nothing queries them one by one. */
export interface UserProfile {
  bio?: string;
  location?: string;
  public_email?: string | null;
  website_url?: string;
  organization?: string;
  job_title?: string;
  pronouns?: string | null;
  linkedin?: string;
  twitter?: string;
  discord?: string;
  skype?: string;
}

@Entity({ name: 'users' })
export class User {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'varchar', length: 255 })
  username: string;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 255 })
  email: string;

  @Column({ type: 'varchar', length: 16, default: 'active' })
  state: UserState;

  @Column({ type: 'boolean', default: false })
  admin: boolean;

  @Column({ type: 'boolean', default: false })
  external: boolean;

  @Column({ type: 'boolean', default: false })
  bot: boolean;

  @Column({ type: 'varchar', length: 32, name: 'user_type', default: 'human' })
  userType: UserType;

  @Column({ type: 'jsonb', default: () => "'{}'" })
  profile: UserProfile;

  /** Administrators' note about the user. */
  @Column({ type: 'text', nullable: true })
  note: string | null;

  @Column({ type: 'integer', name: 'projects_limit', default: 100000 })
  projectsLimit: number;

  @Column({ type: 'boolean', name: 'can_create_group', default: true })
  canCreateGroup: boolean;

  @Column({ type: 'boolean', name: 'private_profile', default: false })
  privateProfile: boolean;

  /** scrypt, `salt:hash` in hex; null for users who never set one (bots, token-only users). */
  @Column({ type: 'varchar', length: 255, name: 'password_digest', nullable: true, select: false })
  passwordDigest: string | null;

  @Column({ type: 'integer', name: 'created_by_id', nullable: true })
  createdById: number | null;

  @Column({ type: 'timestamptz', name: 'confirmed_at', nullable: true })
  confirmedAt: Date | null;

  @Column({ type: 'date', name: 'last_activity_on', nullable: true })
  lastActivityOn: string | null;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}
