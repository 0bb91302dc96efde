import type { DataSource } from 'typeorm';
import type { ServiceDeps, Services } from '../services.js';

export class MembersService {
  private readonly dataSource: DataSource;

  constructor(
    deps: ServiceDeps,
    private readonly services: Pick<Services, 'projects' | 'groups'>,
  ) {
    this.dataSource = deps.dataSource;
  }
}
