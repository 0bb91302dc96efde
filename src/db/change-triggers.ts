/**
 * SQL of a row trigger that announces `<kind>:<OLD.id>` on the change channel (src/db/changes.ts) when
 * a row of `table` is updated or deleted; `down` drops it.
 */
export const announceRowChanges = (table: string, kind: string) => ({
  up: `
    CREATE FUNCTION forge_notify_${table}_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('forge_changes', '${kind}:' || OLD.id);
      RETURN NULL;
    END $$;
    CREATE TRIGGER ${table}_changes AFTER UPDATE OR DELETE ON ${table}
      FOR EACH ROW EXECUTE FUNCTION forge_notify_${table}_change();`,
  down: `
    DROP TRIGGER ${table}_changes ON ${table};
    DROP FUNCTION forge_notify_${table}_change();`,
});

/**
 * SQL of a row trigger named `name` that announces `<kind>:<column>` of the old row and of the new one
 * (either side may be missing) on `events` of `table`, e.g. a row moving from one parent to another.
 */
export const announceReferenceChanges = (
  name: string,
  table: string,
  events: string,
  kind: string,
  column: string,
) => ({
  up: `
    CREATE FUNCTION forge_notify_${name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN
        PERFORM pg_notify('forge_changes', '${kind}:' || OLD.${column});
      END IF;
      IF TG_OP <> 'DELETE' THEN
        PERFORM pg_notify('forge_changes', '${kind}:' || NEW.${column});
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER ${name}_changes AFTER ${events} ON ${table}
      FOR EACH ROW EXECUTE FUNCTION forge_notify_${name}();`,
  down: `
    DROP TRIGGER ${name}_changes ON ${table};
    DROP FUNCTION forge_notify_${name}();`,
});
