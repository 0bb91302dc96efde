import {
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  type Relation,
} from 'typeorm';
import { User } from '../users/user.entity.js';

/** A file uploaded to a project for Markdown; its bytes are in the upload storage. */
@Entity({ name: 'uploads' })
export class Upload {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  /** 32 hex characters: the part of the URL that makes it unguessable. */
  @Column({ type: 'varchar', length: 32 })
  secret: string;

  @Column({ type: 'varchar', length: 255 })
  filename: string;

  @Column({
    type: 'bigint',
    transformer: { to: (value: number) => value, from: (value: string) => Number(value) },
  })
  size: number;

  @Column({ type: 'integer', name: 'uploaded_by_id', nullable: true })
  uploadedById: number | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'uploaded_by_id' })
  uploadedBy?: Relation<User> | null;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}
