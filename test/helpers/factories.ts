import crypto from 'node:crypto';
import type { DataSource } from 'typeorm';
import { Visibility, type VisibilityName } from '../../src/core/abilities.js';
import type { Caller } from '../../src/core/auth.js';
import { Member } from '../../src/members/member.entity.js';
import { ProjectGroupLink } from '../../src/members/project-group-link.entity.js';
import type { Namespace } from '../../src/namespaces/namespace.entity.js';
import type { CreateProjectParams } from '../../src/projects/projects.service.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { Services } from '../../src/families.js';
import type { User } from '../../src/users/user.entity.js';

const unique = (prefix: string) => `${prefix}-${crypto.randomBytes(4).toString('hex')}`;

export interface TestUser {
  user: User;
  token: string;
  caller: Caller;
}

/** Builds records through the services, each with unique names, so tests never share data. */
export class Factories {
  constructor(
    private readonly dataSource: DataSource,
    private readonly services: Services,
  ) {}

  async user(
    attrs: Partial<Pick<User, 'admin' | 'external' | 'state' | 'username' | 'name'>> = {},
  ): Promise<TestUser> {
    const username = attrs.username ?? unique('user');
    const user = await this.services.users.createUser({
      username,
      name: attrs.name ?? `User ${username}`,
      email: `${username}@example.com`,
      admin: attrs.admin ?? false,
      external: attrs.external ?? false,
      state: attrs.state ?? 'active',
    });
    const { token, record } = await this.services.users.createToken(user.id, {
      name: 'test',
      scopes: ['api'],
    });
    return { user, token, caller: { user, token: record } };
  }

  /** Another token for an existing user, with the given scopes (and optional expiry). */
  async token(user: User, scopes: string[], attrs: { expiresAt?: string | null } = {}): Promise<string> {
    const { token } = await this.services.users.createToken(user.id, {
      name: unique('token'),
      scopes,
      expiresAt: attrs.expiresAt,
    });
    return token;
  }

  /** Shares a project with a group at `groupAccess`, as POST /projects/:id/share would. */
  async share(project: Project, group: Namespace, groupAccess: number, expiresAt: string | null = null) {
    await this.dataSource
      .getRepository(ProjectGroupLink)
      .insert({ projectId: project.id, groupId: group.id, groupAccess, expiresAt });
  }

  group(attrs: { visibility?: VisibilityName; parent?: Namespace; path?: string } = {}): Promise<Namespace> {
    const path = attrs.path ?? unique('group');
    return this.services.namespaces.createGroup({
      name: path,
      path,
      parentId: attrs.parent?.id ?? null,
      visibilityLevel: Visibility[attrs.visibility ?? 'private'],
    });
  }

  async member(
    source: Project | Namespace,
    user: User,
    accessLevel: number,
    expiresAt: string | null = null,
  ) {
    const sourceType = 'namespaceId' in source ? 'Project' : 'Namespace';
    await this.dataSource
      .getRepository(Member)
      .insert({ sourceType, sourceId: source.id, userId: user.id, accessLevel, expiresAt });
  }

  /** A caller without a membership: none at all (anonymous), a plain user, an external user or an administrator. */
  async caller(kind: 'anonymous' | 'outsider' | 'external' | 'admin'): Promise<TestUser | undefined> {
    if (kind === 'anonymous') return undefined;
    return this.user({ admin: kind === 'admin', external: kind === 'external' });
  }

  /** A new user (with `attrs`) who is a member of `source` at `accessLevel`; 0 makes no membership. */
  async memberOf(
    source: Project | Namespace,
    accessLevel: number,
    attrs: Parameters<Factories['user']>[0] = {},
  ): Promise<TestUser> {
    const user = await this.user(attrs);
    if (accessLevel) await this.member(source, user.user, accessLevel);
    return user;
  }

  /** A project with a README on its protected default branch `main` (see `project`). */
  projectWithReadme(
    attrs: Partial<CreateProjectParams> & { owner?: TestUser; namespace?: Namespace } = {},
  ): Promise<Project> {
    return this.project({ initialize_with_readme: true, ...attrs });
  }

  /** A new user and a project of theirs with a README on `main`. */
  async ownedProjectWithReadme(
    attrs: Partial<CreateProjectParams> & { namespace?: Namespace } = {},
  ): Promise<{ owner: TestUser; project: Project }> {
    const owner = await this.user();
    return { owner, project: await this.projectWithReadme({ owner, ...attrs }) };
  }

  /** A project created as `owner` would create it (owner defaults to a new admin). */
  async project(
    attrs: Partial<CreateProjectParams> & { owner?: TestUser; namespace?: Namespace } = {},
  ): Promise<Project> {
    const owner = attrs.owner ?? (await this.user({ admin: true }));
    const { owner: _owner, namespace, ...params } = attrs;
    const view = await this.services.projects.create(owner.caller, {
      path: unique('project'),
      namespace_id: namespace?.id,
      ...params,
    } as CreateProjectParams);
    return view.project;
  }
}
