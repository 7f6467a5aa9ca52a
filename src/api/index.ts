// The client APIs the gateway serves under /v1, in the order their routes are registered. Adding an API
// is adding its folder and one line here.
import type { ClientApiRoutes } from '../http/deps.js';
import { anthropicMessages } from './anthropic-messages/index.js';
import { registerCountTokens } from './anthropic-messages/count-tokens.js';
import { openaiChat } from './openai-chat/index.js';
import { openaiEmbeddings } from './openai-embeddings/index.js';
import { openaiResponses } from './openai-responses/index.js';
import { registerResponsesRoutes } from './openai-responses/routes.js';
import { clientApiRoutes } from './route.js';

export const CLIENT_APIS: readonly ClientApiRoutes[] = [
  clientApiRoutes(openaiChat),
  clientApiRoutes(openaiEmbeddings),
  clientApiRoutes(anthropicMessages, registerCountTokens),
  clientApiRoutes(openaiResponses, registerResponsesRoutes),
];
