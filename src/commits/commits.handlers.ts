import { defineHandlers } from '../core/handler.js';
import { presentCommitDetail, presentCommitListItem } from './commit.presenter.js';
import { projectWebUrl } from '../projects/project.presenter.js';

export const commitsHandlers = defineHandlers(['commits'], {
  async listCommits({ params, subject, caller, services, request }) {
    const { repo, items, headers } = await services.commits.list(caller, subject, params, request);
    const webUrl = projectWebUrl(repo.view, request.externalUrl);
    const body = items.map(({ commit, stats }) => presentCommitListItem(commit, webUrl, stats));
    return { status: 200, body, headers };
  },

  async getCommit({ params, subject, caller, services, request }) {
    const { repo, view } = await services.commits.get(caller, subject, params.sha, params.stats !== false);
    const fields = await services.commits.detailFields(
      caller,
      subject,
      [view.commit.id],
      request.externalUrl,
    );
    const body = presentCommitDetail(
      view.commit,
      projectWebUrl(repo.view, request.externalUrl),
      repo.view.project.id,
      view.stats,
      fields.get(view.commit.id),
    );
    return { status: 200, body };
  },

  async createCommit({ subject, body, caller, services, request }) {
    const { repo, view } = await services.commits.create(caller, subject, body);
    const fields = await services.commits.detailFields(
      caller,
      subject,
      [view.commit.id],
      request.externalUrl,
    );
    const json = presentCommitDetail(
      view.commit,
      projectWebUrl(repo.view, request.externalUrl),
      repo.view.project.id,
      view.stats,
      fields.get(view.commit.id),
    );
    return { status: 201, body: json };
  },
});
