import { defineHandlers } from '../core/handler.js';

export const membersHandlers = defineHandlers({});
