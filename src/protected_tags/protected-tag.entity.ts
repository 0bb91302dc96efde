import { Column, Entity, JoinColumn, ManyToOne, OneToMany, type Relation } from 'typeorm';
import { ProtectedRefColumns, ProtectionEntryColumns } from '../protected_branches/protection-columns.js';

/** A tag name or wildcard (`v*`) that only the listed roles, users, groups or deploy keys may create. */
@Entity({ name: 'protected_tags' })
export class ProtectedTag extends ProtectedRefColumns {
  @OneToMany(() => ProtectedTagCreateAccessLevel, (level) => level.protectedTag)
  createAccessLevels?: Relation<ProtectedTagCreateAccessLevel[]>;
}

/** One entry of a protected tag's create list. */
@Entity({ name: 'protected_tag_create_access_levels' })
export class ProtectedTagCreateAccessLevel extends ProtectionEntryColumns {
  @Column({ type: 'integer', name: 'protected_tag_id' })
  protectedTagId: number;

  @ManyToOne(() => ProtectedTag, (tag) => tag.createAccessLevels, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'protected_tag_id' })
  protectedTag?: Relation<ProtectedTag>;
}
