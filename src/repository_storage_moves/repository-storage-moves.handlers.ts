import type { Caller } from '../core/auth.js';
import type { ServiceRegistry } from '../core/family.js';
import { defineHandlers } from '../core/handler.js';
import { pagedResponse, type PageParams, type RequestInfo } from '../core/pagination.js';
import {
  presentGroupStorageMove,
  presentProjectStorageMove,
  presentSnippetStorageMove,
} from './repository-storage-moves.presenter.js';
import type { MoveRecord, MovableType } from './repository-storage-moves.service.js';

const ACCEPTED = { status: 202 as const, body: { message: '202 Accepted' } };

interface MovesContext<P = unknown, B = unknown> {
  params: P;
  body: B;
  caller: Caller;
  services: Pick<ServiceRegistry, 'repositoryStorageMoves'>;
  request: RequestInfo;
}
type OfContainer = { id: string | number };
type MoveId = { repository_storage_id: number };
type Storages = { source_storage_name: string; destination_storage_name?: string };

/**
 * The six operations of one kind of container (all its moves, one move, a bulk schedule, and the same
 * for one container): they differ only in the kind and its presenter.
 */
function movesOf<J>(type: MovableType, present: (move: MoveRecord, externalUrl: string) => J) {
  const containerId = ({ params, caller, services }: MovesContext<OfContainer>) =>
    services.repositoryStorageMoves.containerId(caller, type, params.id);
  const page = async (id: number | null, { params, services, request }: MovesContext<PageParams>) =>
    pagedResponse(await services.repositoryStorageMoves.list(type, id, params, request), (move) =>
      present(move, request.externalUrl),
    );
  const one = async (id: number | null, { params, services, request }: MovesContext<MoveId>) => {
    const move = await services.repositoryStorageMoves.get(type, id, params.repository_storage_id);
    return { status: 200 as const, body: present(move, request.externalUrl) };
  };
  return {
    list: (context: MovesContext<PageParams>) => page(null, context),
    get: (context: MovesContext<MoveId>) => one(null, context),
    async scheduleAll({ body, services }: MovesContext<unknown, Storages>) {
      const { source_storage_name: source, destination_storage_name: destination } = body;
      await services.repositoryStorageMoves.scheduleAll(type, source, destination);
      return ACCEPTED;
    },
    listOf: async (context: MovesContext<OfContainer & PageParams>) =>
      page(await containerId(context), context),
    getOf: async (context: MovesContext<OfContainer & MoveId>) => one(await containerId(context), context),
    async schedule(context: MovesContext<OfContainer, { destination_storage_name?: string } | undefined>) {
      const id = await containerId(context);
      const { services, body, request } = context;
      const move = await services.repositoryStorageMoves.schedule(type, id, body?.destination_storage_name);
      return { status: 201 as const, body: present(move, request.externalUrl) };
    },
  };
}

const projectMoves = movesOf('project', presentProjectStorageMove);
const groupMoves = movesOf('group', presentGroupStorageMove);
const snippetMoves = movesOf('snippet', presentSnippetStorageMove);

export const repositoryStorageMovesHandlers = defineHandlers(['repositoryStorageMoves'], {
  listProjectRepositoryStorageMoves: projectMoves.list,
  getProjectRepositoryStorageMove: projectMoves.get,
  scheduleProjectRepositoryStorageMoves: projectMoves.scheduleAll,
  listProjectRepositoryStorageMovesOfProject: projectMoves.listOf,
  getProjectRepositoryStorageMoveOfProject: projectMoves.getOf,
  createProjectRepositoryStorageMove: projectMoves.schedule,

  listGroupRepositoryStorageMoves: groupMoves.list,
  getGroupRepositoryStorageMove: groupMoves.get,
  scheduleGroupRepositoryStorageMoves: groupMoves.scheduleAll,
  listGroupRepositoryStorageMovesOfGroup: groupMoves.listOf,
  getGroupRepositoryStorageMoveOfGroup: groupMoves.getOf,
  createGroupRepositoryStorageMove: groupMoves.schedule,

  listSnippetRepositoryStorageMoves: snippetMoves.list,
  getSnippetRepositoryStorageMove: snippetMoves.get,
  scheduleSnippetRepositoryStorageMoves: snippetMoves.scheduleAll,
  listSnippetRepositoryStorageMovesOfSnippet: snippetMoves.listOf,
  getSnippetRepositoryStorageMoveOfSnippet: snippetMoves.getOf,
  createSnippetRepositoryStorageMove: snippetMoves.schedule,
});
