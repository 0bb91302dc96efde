import { defineHandlers } from '../core/handler.js';
import {
  presentGroupStorageMove,
  presentProjectStorageMove,
  presentSnippetStorageMove,
} from './repository-storage-moves.presenter.js';

const ACCEPTED = { status: 202 as const, body: { message: '202 Accepted' } };

export const repositoryStorageMovesHandlers = defineHandlers({
  async listProjectRepositoryStorageMoves({ params, services, request }) {
    const page = await services.repositoryStorageMoves.list('project', null, params, request);
    return { status: 200, body: page.items.map(presentProjectStorageMove), headers: page.headers };
  },

  async getProjectRepositoryStorageMove({ params, services }) {
    const move = await services.repositoryStorageMoves.get('project', null, params.repository_storage_id);
    return { status: 200, body: presentProjectStorageMove(move) };
  },

  async scheduleProjectRepositoryStorageMoves({ body, services }) {
    await services.repositoryStorageMoves.scheduleAll(
      'project',
      body.source_storage_name,
      body.destination_storage_name,
    );
    return ACCEPTED;
  },

  async listProjectRepositoryStorageMovesOfProject({ params, caller, services, request }) {
    const moves = services.repositoryStorageMoves;
    const id = await moves.containerId(caller, 'project', params.id);
    const page = await moves.list('project', id, params, request);
    return { status: 200, body: page.items.map(presentProjectStorageMove), headers: page.headers };
  },

  async getProjectRepositoryStorageMoveOfProject({ params, caller, services }) {
    const moves = services.repositoryStorageMoves;
    const id = await moves.containerId(caller, 'project', params.id);
    const move = await moves.get('project', id, params.repository_storage_id);
    return { status: 200, body: presentProjectStorageMove(move) };
  },

  async createProjectRepositoryStorageMove({ params, body, caller, services }) {
    const moves = services.repositoryStorageMoves;
    const id = await moves.containerId(caller, 'project', params.id);
    const move = await moves.schedule('project', id, body?.destination_storage_name);
    return { status: 201, body: presentProjectStorageMove(move) };
  },

  async listGroupRepositoryStorageMoves({ params, services, request }) {
    const page = await services.repositoryStorageMoves.list('group', null, params, request);
    return {
      status: 200,
      body: page.items.map((move) => presentGroupStorageMove(move, request.externalUrl)),
      headers: page.headers,
    };
  },

  async getGroupRepositoryStorageMove({ params, services, request }) {
    const move = await services.repositoryStorageMoves.get('group', null, params.repository_storage_id);
    return { status: 200, body: presentGroupStorageMove(move, request.externalUrl) };
  },

  async scheduleGroupRepositoryStorageMoves({ body, services }) {
    await services.repositoryStorageMoves.scheduleAll(
      'group',
      body.source_storage_name,
      body.destination_storage_name,
    );
    return ACCEPTED;
  },

  async listGroupRepositoryStorageMovesOfGroup({ params, caller, services, request }) {
    const moves = services.repositoryStorageMoves;
    const id = await moves.containerId(caller, 'group', params.id);
    const page = await moves.list('group', id, params, request);
    return {
      status: 200,
      body: page.items.map((move) => presentGroupStorageMove(move, request.externalUrl)),
      headers: page.headers,
    };
  },

  async getGroupRepositoryStorageMoveOfGroup({ params, caller, services, request }) {
    const moves = services.repositoryStorageMoves;
    const id = await moves.containerId(caller, 'group', params.id);
    const move = await moves.get('group', id, params.repository_storage_id);
    return { status: 200, body: presentGroupStorageMove(move, request.externalUrl) };
  },

  async createGroupRepositoryStorageMove({ params, body, caller, services, request }) {
    const moves = services.repositoryStorageMoves;
    const id = await moves.containerId(caller, 'group', params.id);
    const move = await moves.schedule('group', id, body?.destination_storage_name);
    return { status: 201, body: presentGroupStorageMove(move, request.externalUrl) };
  },

  async listSnippetRepositoryStorageMoves({ params, services, request }) {
    const page = await services.repositoryStorageMoves.list('snippet', null, params, request);
    return {
      status: 200,
      body: page.items.map((move) => presentSnippetStorageMove(move, request.externalUrl)),
      headers: page.headers,
    };
  },

  async getSnippetRepositoryStorageMove({ params, services, request }) {
    const move = await services.repositoryStorageMoves.get('snippet', null, params.repository_storage_id);
    return { status: 200, body: presentSnippetStorageMove(move, request.externalUrl) };
  },

  async scheduleSnippetRepositoryStorageMoves({ body, services }) {
    await services.repositoryStorageMoves.scheduleAll(
      'snippet',
      body.source_storage_name,
      body.destination_storage_name,
    );
    return ACCEPTED;
  },

  async listSnippetRepositoryStorageMovesOfSnippet({ params, caller, services, request }) {
    const moves = services.repositoryStorageMoves;
    const id = await moves.containerId(caller, 'snippet', params.id);
    const page = await moves.list('snippet', id, params, request);
    return {
      status: 200,
      body: page.items.map((move) => presentSnippetStorageMove(move, request.externalUrl)),
      headers: page.headers,
    };
  },

  async getSnippetRepositoryStorageMoveOfSnippet({ params, caller, services, request }) {
    const moves = services.repositoryStorageMoves;
    const id = await moves.containerId(caller, 'snippet', params.id);
    const move = await moves.get('snippet', id, params.repository_storage_id);
    return { status: 200, body: presentSnippetStorageMove(move, request.externalUrl) };
  },

  async createSnippetRepositoryStorageMove({ params, body, caller, services, request }) {
    const moves = services.repositoryStorageMoves;
    const id = await moves.containerId(caller, 'snippet', params.id);
    const move = await moves.schedule('snippet', id, body?.destination_storage_name);
    return { status: 201, body: presentSnippetStorageMove(move, request.externalUrl) };
  },
});
