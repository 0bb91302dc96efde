import { defineAbilities } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';

export const uploadsAbilities = defineAbilities({
  project: {
    /** Uploading files for Markdown: members, and any signed-in user who sees a public or internal project. */
    upload_file: { minimum: AccessLevel.Guest, openWhenVisible: 'signed_in' },
    /** Listing and deleting a project's uploads. */
    admin_upload: { minimum: AccessLevel.Maintainer },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    uploads: typeof uploadsAbilities;
  }
}
