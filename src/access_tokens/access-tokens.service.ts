import type { DataSource } from 'typeorm';
import type { ServiceDeps, Services } from '../services.js';

export class AccessTokensService {
  private readonly dataSource: DataSource;

  constructor(
    deps: ServiceDeps,
    private readonly services: Pick<Services, 'projects' | 'groups' | 'users'>,
  ) {
    this.dataSource = deps.dataSource;
  }
}
