import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';

/**
 * An entity read by hand-written SQL: `select` lists the columns TypeORM would select, each as
 * `<alias>_<column>`, and `hydrate` builds the entity from such a row as TypeORM does (driver
 * conversions, transformers). For hot reads that join several entities in one statement, without
 * building the query each time.
 */
export interface EntityRows<T> {
  select: string;
  /** null when the row holds no such entity (a LEFT JOIN that found nothing). */
  hydrate(row: Record<string, unknown>): T | null;
  /** The entity from a row as `to_json`/`json_agg` gives it: keyed by column name, without the alias. */
  fromJson(json: Record<string, unknown>): T;
}

type Convert = (value: unknown) => unknown;

/** Types whose value node-postgres and JSON both give as TypeORM would hydrate it. */
const AS_READ = new Set<unknown>(['integer', 'int', 'smallint', 'varchar', 'text', 'char', 'jsonb', 'json']);
const TIMESTAMPS = new Set<unknown>(['timestamptz', 'timestamp with time zone', 'timestamp', Date]);

/**
 * How a column's value becomes the property TypeORM would set, decided once per column: the common
 * types directly, anything else (transformers, embeddeds, enums, dates...) through TypeORM itself.
 */
function converter(dataSource: DataSource, column: ColumnMetadata): Convert {
  const generic = (value: unknown) => dataSource.driver.prepareHydratedValue(value, column) as unknown;
  if (column.transformer) return generic;
  if (AS_READ.has(column.type)) return (value) => value;
  if (column.type === 'boolean' || column.type === Boolean)
    return (value) => (value === null || value === undefined ? value : Boolean(value));
  if (TIMESTAMPS.has(column.type) && !column.isArray)
    return (value) => (typeof value === 'string' && value !== '' ? new Date(value) : value);
  return generic;
}

/** A plain property needs no help from TypeORM to be set. */
const plainProperty = (column: ColumnMetadata) =>
  !column.embeddedMetadata && !(column.isVirtual && column.referencedColumn);

interface Field {
  key: string;
  name: string;
  property: string;
  convert: Convert;
  set: ((entity: ObjectLiteral, value: unknown) => void) | null;
}

export function entityRows<T extends ObjectLiteral>(
  dataSource: DataSource,
  target: EntityTarget<T>,
  alias: string,
): EntityRows<T> {
  const metadata = dataSource.getMetadata(target);
  const fields: Field[] = metadata.columns
    .filter((column) => column.isSelect && !column.isVirtual)
    .map((column) => ({
      key: `${alias}_${column.databaseName}`,
      name: column.databaseName,
      property: column.propertyName,
      convert: converter(dataSource, column),
      set: plainProperty(column) ? null : (entity, value) => column.setEntityValue(entity, value),
    }));
  const primaryKeys = metadata.primaryColumns.map((column) => `${alias}_${column.databaseName}`);
  const build = (row: Record<string, unknown>, keyed: 'key' | 'name') => {
    const entity = metadata.create() as T;
    for (const field of fields) {
      const value = field.convert(row[field[keyed]]);
      if (field.set) field.set(entity, value);
      else (entity as ObjectLiteral)[field.property] = value;
    }
    return entity;
  };
  return {
    select: fields.map((field) => `"${alias}"."${field.name}" AS "${field.key}"`).join(', '),
    hydrate(row) {
      if (primaryKeys.some((key) => row[key] === null || row[key] === undefined)) return null;
      return build(row, 'key');
    },
    fromJson: (json) => build(json, 'name'),
  };
}
