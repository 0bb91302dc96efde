import { remoteMirrorsAbilities } from './abilities.js';
import { defineSubscriber } from '../core/events.js';
import { defineFamily, defineService } from '../core/family.js';
import { RemoteMirrors1767745400000 } from './migrations/1767745400000-remote-mirrors.js';
import { RemoteMirror } from './remote-mirror.entity.js';
import './remote-mirrors.events.js';
import { remoteMirrorsHandlers } from './remote-mirrors.handlers.js';
import { MIRROR_RETRY, RemoteMirrorsService } from './remote-mirrors.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    remoteMirrors: RemoteMirrorsService;
  }
}

export const remoteMirrorsManifest = defineFamily({
  name: 'remote_mirrors',
  abilities: remoteMirrorsAbilities,
  entities: [RemoteMirror],
  migrations: [RemoteMirrors1767745400000],
  services: [
    defineService('remoteMirrors', ['repositories'], (core, deps) => new RemoteMirrorsService(core, deps)),
  ],
  subscribers: ({ remoteMirrors }) => [
    // Every accepted push, over git or through the API, is mirrored (GitLab's RemoteMirror#sync on push).
    defineSubscriber({
      event: 'refs.updated',
      name: 'remote_mirrors.schedule_after_push',
      handle: (payload) => remoteMirrors.scheduleAfterPush(payload),
    }),
    defineSubscriber({
      event: 'remote_mirror.update_requested',
      name: 'remote_mirrors.update',
      ...MIRROR_RETRY,
      handle: ({ mirrorId }, job) => remoteMirrors.runUpdate(mirrorId, job),
    }),
  ],
  handlers: remoteMirrorsHandlers,
});
