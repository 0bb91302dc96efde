import { defineHandlers } from '../core/handler.js';

export const accessTokensHandlers = defineHandlers({});
