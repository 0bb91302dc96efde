import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { ContainerType } from './write-gate.js';

/** One move of a container's repository between storages; `state` holds GitLab's numbers. */
@Entity({ name: 'repository_storage_moves' })
export class RepositoryStorageMove {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'varchar', length: 16, name: 'container_type' })
  containerType: ContainerType;

  @Column({ type: 'integer', name: 'container_id' })
  containerId: number;

  @Column({ type: 'smallint', default: 1 })
  state: number;

  @Column({ type: 'varchar', length: 255, name: 'source_storage_name' })
  sourceStorageName: string;

  @Column({ type: 'varchar', length: 255, name: 'destination_storage_name' })
  destinationStorageName: string;

  @Column({ type: 'varchar', length: 256, name: 'error_message', nullable: true })
  errorMessage: string | null;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}
