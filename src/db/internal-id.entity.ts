import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The last per-project internal id (iid) handed out for each kind of record. */
@Entity({ name: 'internal_ids' })
export class InternalId {
  @PrimaryColumn({ type: 'integer', name: 'project_id' })
  projectId: number;

  @PrimaryColumn({ type: 'varchar', length: 64 })
  usage: string;

  @Column({ type: 'integer', name: 'last_value' })
  lastValue: number;
}
