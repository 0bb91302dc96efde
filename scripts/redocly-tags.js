/**
 * Redocly plugin: every tag, and every tag that `x-tagGroups` lists, has at least one operation. The docs
 * page renders a section for each tag, so a tag without operations would promise a family that is not
 * served; a family adds its tag with its first operation.
 */

function TagHasOperations() {
  const used = new Set();
  const declared = [];
  return {
    Tag(tag, { location }) {
      declared.push({ name: tag.name, location: location.child(['name']) });
    },
    Operation(operation) {
      for (const tag of operation.tags ?? []) used.add(tag);
    },
    Root: {
      leave(root, { report, location }) {
        for (const tag of declared)
          if (!used.has(tag.name))
            report({
              message: `Tag "${tag.name}" has no operation: remove it until its family has one.`,
              location: tag.location,
            });
        (root['x-tagGroups'] ?? []).forEach((group, i) =>
          (group.tags ?? []).forEach((name, j) => {
            if (!used.has(name))
              report({
                message: `x-tagGroups "${group.name}" lists "${name}", which has no operation.`,
                location: location.child(['x-tagGroups', i, 'tags', j]),
              });
          }),
        );
      },
    },
  };
}

export default function forgeTagsPlugin() {
  return { id: 'forge-tags', rules: { oas3: { 'tag-has-operations': TagHasOperations } } };
}
