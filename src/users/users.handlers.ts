import { defineHandlers } from '../core/handler.js';

export const usersHandlers = defineHandlers({});
