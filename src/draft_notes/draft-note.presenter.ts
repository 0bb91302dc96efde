import type { components } from '../../generated/openapi.js';
import { presentPosition } from '../notes/note.presenter.js';
import type { DraftNote } from './draft-note.entity.js';

export type DraftNoteJson = components['schemas']['DraftNote'];

/** What GitLab shows for a draft without a position: an empty text position. */
const NO_POSITION: DraftNoteJson['position'] = {
  base_sha: null,
  start_sha: null,
  head_sha: null,
  old_path: null,
  new_path: null,
  position_type: 'text',
  old_line: null,
  new_line: null,
  line_range: null,
};

export function presentDraftNote(draft: DraftNote): DraftNoteJson {
  return {
    id: draft.id,
    author_id: draft.authorId,
    merge_request_id: draft.mergeRequestId,
    resolve_discussion: draft.resolveDiscussion,
    discussion_id: draft.discussionId,
    note: draft.note,
    commit_id: draft.commitId,
    line_code: draft.lineCode,
    position: draft.position ? presentPosition(draft.position) : NO_POSITION,
  };
}
