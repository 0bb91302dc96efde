/**
 * Real data for the fuzzer, made through the API as root: with it, path parameters resolve and the
 * handlers run, rather than every request stopping at a 404.
 */
import { callJson } from './http.js';

export interface FuzzUser {
  id: number;
  username: string;
  token: string;
  tokenId: number;
}

export interface Fixture {
  /** A project with a README on its protected `main`, in `group`, with a branch, a tag and the rest. */
  project: { id: number; fullPath: string; readmeSha: string; commitSha: string };
  group: { id: number; fullPath: string };
  /** A second group the project is shared with. */
  sharedGroup: { id: number };
  /** A group the project is not shared with, and a user who is a member of nothing. */
  otherGroup: { id: number };
  outsider: { id: number };
  /** A Developer of the project and of the group, with a personal access token. */
  member: FuzzUser;
  branch: string;
  /** A branch for deleteBranch, so that deleting it leaves `branch` to the others. */
  doomedBranch: string;
  tag: string;
  protectedTag: string;
  protectedBranch: string;
  customAttribute: string;
  /** A label named `fuzz-label` in the project and in the group, and one of each that deletions may take. */
  label: string;
  doomedLabel: string;
  /** A label of the project alone, which promotion may move to the group. */
  promotedLabel: string;
  /** Milestone ids: the project's and the group's, and one of each that deletions may take. */
  milestones: { project: number; group: number; doomedProject: number; doomedGroup: number };
  /** Merge request !1 (`branch` into main) with its first diff version, and !2 for deleteMergeRequest. */
  mergeRequest: { iid: number; versionId: number; doomedIid: number };
  /** Notes on !1: a plain note, a thread with two notes, and a note of each for the deletions. */
  notes: {
    noteId: number;
    doomedNoteId: number;
    discussionId: string;
    threadNoteId: number;
    doomedThreadNoteId: number;
  };
  /** Emoji reactions on !1 and on its plain note, and one of each for the deletions. */
  awards: { mergeRequest: number; note: number; doomedMergeRequest: number; doomedNote: number };
  /** Approval rules of the project and of !1, and one of each for the deletions. */
  approvalRules: { project: number; mergeRequest: number; doomedProject: number; doomedMergeRequest: number };
  /** Draft notes of root's on !1: one to read and edit, one to delete, one to publish. */
  draftNotes: { draftId: number; doomedDraftId: number; publishedDraftId: number };
  /** A resource event of each kind on !1 (its label and milestone added, closed). */
  resourceEvents: { label: number; milestone: number; state: number };
  /** Enabled SSH push mirrors of the project (to a host that never resolves), and one for deleteRemoteMirror. */
  remoteMirrors: { mirror: number; doomed: number };
  /** The bot tokens `self` operations authenticate with. */
  projectToken: { id: number; token: string };
  groupToken: { id: number; token: string };
  /**
   * Cluster agents: one that stays with a token, and one for deleteClusterAgent; a user list (by iid) used
   * by a feature flag, a spare list for deletions, and the project's Unleash instance id.
   */
  agents: { id: number; tokenId: number; doomedId: number };
  featureFlags: { listIid: number; doomedListIid: number; flag: string; instanceId: string };
  /** Token ids that operations naming a token by id rotate and revoke. */
  spareTokens: { personal: number; project: number; group: number };
  /** Snippets holding README.md: the project's and a public personal one, and one of each to delete. */
  snippets: { project: number; doomedProject: number; personal: number; doomedPersonal: number };
  /** An instance role and a role of the group (member_roles family). */
  memberRoles: { instance: number; group: number };
}

export const ADMIN_SCOPES = [
  'api',
  'read_api',
  'read_user',
  'read_repository',
  'write_repository',
  'sudo',
  'admin_mode',
];
const DEVELOPER = 30;

const expiry = () => new Date(Date.now() + 180 * 86_400_000).toISOString().slice(0, 10);

export class FixtureMaker {
  private serial = 0;
  constructor(
    private readonly base: URL,
    private readonly rootToken: string,
    private readonly prefix: string,
  ) {}

  private name(kind: string) {
    return `${this.prefix}-${kind}-${++this.serial}`;
  }

  private call<T = Record<string, unknown>>(method: string, path: string, body?: unknown) {
    return callJson<T>(this.base, this.rootToken, method, path, body);
  }

  async user(admin = false): Promise<FuzzUser> {
    const username = this.name(admin ? 'admin' : 'user');
    const user = await this.call<{ id: number }>('POST', '/users', {
      username,
      name: username,
      email: `${username}@example.com`,
      force_random_password: true,
      skip_confirmation: true,
      admin,
    });
    return { id: user.id, username, ...(await this.token(user.id, admin ? ADMIN_SCOPES : ['api'])) };
  }

  /** A new personal access token for an existing user. */
  async token(userId: number, scopes: string[] = ['api']): Promise<{ token: string; tokenId: number }> {
    const created = await this.call<{ id: number; token: string }>(
      'POST',
      `/users/${userId}/personal_access_tokens`,
      { name: this.name('token'), scopes, expires_at: expiry() },
    );
    return { token: created.token, tokenId: created.id };
  }

  async fixture(): Promise<Fixture> {
    const groupPath = this.name('group');
    const group = await this.call<{ id: number; full_path: string }>('POST', '/groups', {
      name: groupPath,
      path: groupPath,
      visibility: 'private',
    });
    const sharedPath = this.name('shared');
    const sharedGroup = await this.call<{ id: number }>('POST', '/groups', {
      name: sharedPath,
      path: sharedPath,
    });
    const otherPath = this.name('other');
    const otherGroup = await this.call<{ id: number }>('POST', '/groups', {
      name: otherPath,
      path: otherPath,
    });
    const member = await this.user();
    const outsider = await this.user();
    const project = await this.call<{ id: number; path_with_namespace: string }>('POST', '/projects', {
      name: this.name('project'),
      namespace_id: group.id,
      initialize_with_readme: true,
    });
    const p = `/projects/${project.id}`;
    await this.call('POST', `${p}/members`, { user_id: member.id, access_level: DEVELOPER });
    await this.call('POST', `/groups/${group.id}/members`, { user_id: member.id, access_level: DEVELOPER });
    await this.call('POST', `${p}/share`, { group_id: sharedGroup.id, group_access: DEVELOPER });
    const branch = 'fuzz-branch';
    await this.call('POST', `${p}/repository/branches`, { branch, ref: 'main' });
    const tag = 'v1.0';
    await this.call('POST', `${p}/repository/tags`, { tag_name: tag, ref: 'main', message: 'annotated' });
    await this.call('POST', `${p}/protected_tags`, { name: 'v*' });
    await this.call('PUT', `${p}/custom_attributes/fuzzkey`, { value: 'fuzzvalue' });
    const projectToken = await this.call<{ id: number; token: string }>('POST', `${p}/access_tokens`, {
      name: this.name('bot'),
      scopes: ['api'],
      access_level: 40,
      expires_at: expiry(),
    });
    const groupToken = await this.call<{ id: number; token: string }>(
      'POST',
      `/groups/${group.id}/access_tokens`,
      {
        name: this.name('bot'),
        scopes: ['api'],
        access_level: 40,
        expires_at: expiry(),
      },
    );
    const doomedBranch = 'fuzz-doomed';
    await this.call('POST', `${p}/repository/branches`, { branch: doomedBranch, ref: 'main' });
    const spare = async (path: string) =>
      (
        await this.call<{ id: number }>('POST', path, {
          name: this.name('spare'),
          scopes: ['read_api'],
          access_level: 30,
          expires_at: expiry(),
        })
      ).id;
    const spareTokens = {
      personal: (await this.token(member.id, ['read_api'])).tokenId,
      project: await spare(`${p}/access_tokens`),
      group: await spare(`/groups/${group.id}/access_tokens`),
    };
    const label = 'fuzz-label';
    const doomedLabel = 'fuzz-doomed-label';
    const milestone = async (path: string, title: string) =>
      (await this.call<{ id: number }>('POST', `${path}/milestones`, { title })).id;
    for (const owner of [p, `/groups/${group.id}`])
      for (const name of [label, doomedLabel])
        await this.call('POST', `${owner}/labels`, { name, color: '#428BCA' });
    const promotedLabel = 'fuzz-promoted-label';
    await this.call('POST', `${p}/labels`, { name: promotedLabel, color: '#428BCA' });
    const milestones = {
      project: await milestone(p, 'fuzz-milestone'),
      group: await milestone(`/groups/${group.id}`, 'fuzz-group-milestone'),
      doomedProject: await milestone(p, 'fuzz-doomed'),
      doomedGroup: await milestone(`/groups/${group.id}`, 'fuzz-group-doomed'),
    };
    const mergeRequest = await this.call<{ iid: number }>('POST', `${p}/merge_requests`, {
      source_branch: branch,
      target_branch: 'main',
      title: 'Fuzz',
      labels: label,
      milestone_id: milestones.project,
    });
    // Closed and reopened, for a state event of each kind.
    for (const state_event of ['close', 'reopen'])
      await this.call('PUT', `${p}/merge_requests/${mergeRequest.iid}`, { state_event });
    const firstEvent = async (kind: string) =>
      (
        await this.call<Array<{ id: number }>>(
          'GET',
          `${p}/merge_requests/${mergeRequest.iid}/resource_${kind}_events`,
        )
      )[0].id;
    const resourceEvents = {
      label: await firstEvent('label'),
      milestone: await firstEvent('milestone'),
      state: await firstEvent('state'),
    };
    const doomedMergeRequest = await this.call<{ iid: number }>('POST', `${p}/merge_requests`, {
      source_branch: doomedBranch,
      target_branch: 'main',
      title: 'Doomed',
    });
    const [version] = await this.call<Array<{ id: number }>>(
      'GET',
      `${p}/merge_requests/${mergeRequest.iid}/versions`,
    );
    const notesPath = `${p}/merge_requests/${mergeRequest.iid}/notes`;
    const note = await this.call<{ id: number }>('POST', notesPath, { body: 'Fuzz' });
    const doomedNote = await this.call<{ id: number }>('POST', notesPath, { body: 'Doomed' });
    const thread = await this.call<{ id: string; notes: Array<{ id: number }> }>(
      'POST',
      `${p}/merge_requests/${mergeRequest.iid}/discussions`,
      { body: 'Fuzz' },
    );
    const doomedReply = await this.call<{ id: number }>(
      'POST',
      `${p}/merge_requests/${mergeRequest.iid}/discussions/${thread.id}/notes`,
      { body: 'Doomed' },
    );
    const mrAwards = `${p}/merge_requests/${mergeRequest.iid}/award_emoji`;
    const noteAwards = `${notesPath}/${note.id}/award_emoji`;
    const award = (path: string, name: string) => this.call<{ id: number }>('POST', path, { name });
    const awards = {
      mergeRequest: (await award(mrAwards, 'tada')).id,
      note: (await award(noteAwards, 'tada')).id,
      doomedMergeRequest: (await award(mrAwards, 'wastebasket')).id,
      doomedNote: (await award(noteAwards, 'wastebasket')).id,
    };
    const mirror = (url: string) =>
      this.call<{ id: number }>('POST', `${p}/remote_mirrors`, {
        url,
        enabled: true,
        auth_method: 'ssh_public_key',
      });
    const remoteMirrors = {
      mirror: (await mirror('ssh://git@mirror.invalid/fuzz.git')).id,
      doomed: (await mirror('ssh://git@mirror.invalid/doomed.git')).id,
    };
    const rule = (path: string, name: string) =>
      this.call<{ id: number }>('POST', path, { name, approvals_required: 1 });
    const mrRules = `${p}/merge_requests/${mergeRequest.iid}/approval_rules`;
    const approvalRules = {
      project: (await rule(`${p}/approval_rules`, 'Fuzz')).id,
      doomedProject: (await rule(`${p}/approval_rules`, 'Doomed')).id,
      mergeRequest: (await rule(mrRules, 'Fuzz on !1')).id,
      doomedMergeRequest: (await rule(mrRules, 'Doomed on !1')).id,
    };
    const agent = await this.call<{ id: number }>('POST', `${p}/cluster_agents`, { name: 'fuzz-agent' });
    const agentToken = await this.call<{ id: number }>('POST', `${p}/cluster_agents/${agent.id}/tokens`, {
      name: 'fuzz',
    });
    const doomedAgent = await this.call<{ id: number }>('POST', `${p}/cluster_agents`, {
      name: 'fuzz-doomed',
    });
    const list = await this.call<{ id: number; iid: number }>('POST', `${p}/feature_flags_user_lists`, {
      name: 'fuzz-list',
      user_xids: 'a,b',
    });
    const doomedList = await this.call<{ iid: number }>('POST', `${p}/feature_flags_user_lists`, {
      name: 'fuzz-doomed',
      user_xids: 'c',
    });
    await this.call('POST', `${p}/feature_flags`, {
      name: 'fuzz-flag',
      strategies: [
        {
          name: 'gitlabUserList',
          parameters: {},
          user_list_id: list.id,
          scopes: [{ environment_scope: '*' }],
        },
      ],
    });
    const unleash = await this.call<{ instance_id: string }>('GET', `${p}/feature_flags_client`);
    const draftsPath = `${p}/merge_requests/${mergeRequest.iid}/draft_notes`;
    const draft = async (note: string) => (await this.call<{ id: number }>('POST', draftsPath, { note })).id;
    const draftNotes = {
      draftId: await draft('Fuzz'),
      doomedDraftId: await draft('Doomed'),
      publishedDraftId: await draft('Published'),
    };
    // Custom roles for the member role routes (member_roles family); the fuzzer may delete them.
    const role = (path: string) =>
      this.call<{ id: number }>('POST', path, { name: this.name('role'), base_access_level: 10 });
    const memberRoles = {
      instance: (await role('/member_roles')).id,
      group: (await role(`/groups/${group.id}/member_roles`)).id,
    };
    const tree = await this.call<Array<{ name: string; id: string }>>('GET', `${p}/repository/tree`);
    const commits = await this.call<Array<{ id: string }>>('GET', `${p}/repository/commits?ref_name=main`);
    return {
      project: {
        id: project.id,
        fullPath: project.path_with_namespace,
        readmeSha: tree.find((entry) => entry.name === 'README.md')!.id,
        commitSha: commits[0].id,
      },
      group: { id: group.id, fullPath: group.full_path },
      sharedGroup: { id: sharedGroup.id },
      otherGroup: { id: otherGroup.id },
      outsider: { id: outsider.id },
      member,
      remoteMirrors,
      branch,
      doomedBranch,
      tag,
      protectedTag: 'v*',
      protectedBranch: 'main',
      label,
      doomedLabel,
      promotedLabel,
      milestones,
      customAttribute: 'fuzzkey',
      mergeRequest: { iid: mergeRequest.iid, versionId: version.id, doomedIid: doomedMergeRequest.iid },
      notes: {
        noteId: note.id,
        doomedNoteId: doomedNote.id,
        discussionId: thread.id,
        threadNoteId: thread.notes[0].id,
        doomedThreadNoteId: doomedReply.id,
      },
      awards,
      approvalRules,
      draftNotes,
      resourceEvents,
      agents: { id: agent.id, tokenId: agentToken.id, doomedId: doomedAgent.id },
      featureFlags: {
        listIid: list.iid,
        doomedListIid: doomedList.iid,
        flag: 'fuzz-flag',
        instanceId: unleash.instance_id,
      },
      projectToken: { id: projectToken.id, token: projectToken.token },
      groupToken: { id: groupToken.id, token: groupToken.token },
      spareTokens,
      snippets: await this.snippets(p),
      memberRoles,
    };
  }

  private async snippets(projectPath: string): Promise<Fixture['snippets']> {
    const make = async (url: string) =>
      (
        await this.call<{ id: number }>('POST', url, {
          title: 'Fuzz',
          visibility: 'public',
          files: [{ file_path: 'README.md', content: '# Fuzz' }],
        })
      ).id;
    return {
      project: await make(`${projectPath}/snippets`),
      doomedProject: await make(`${projectPath}/snippets`),
      personal: await make('/snippets'),
      doomedPersonal: await make('/snippets'),
    };
  }
}
