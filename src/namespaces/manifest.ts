import { defineFamily, defineService } from '../core/family.js';
import { Namespace } from './namespace.entity.js';
import { NamespacesService } from './namespaces.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    namespaces: NamespacesService;
  }
}

export const namespacesManifest = defineFamily({
  name: 'namespaces',
  entities: [Namespace],
  services: [defineService('namespaces', [], (core) => new NamespacesService(core))],
});
