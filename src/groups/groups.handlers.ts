import { defineHandlers } from '../core/handler.js';

export const groupsHandlers = defineHandlers({});
