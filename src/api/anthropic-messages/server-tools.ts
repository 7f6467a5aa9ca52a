// Server tools run on the provider's side and are billed by it per use (a web search, an MCP call, a code
// container's hours), beyond any token the hold covers (product.md §14): a request that asks for one is a
// 400 naming it, unless the model's config sets `allow_server_tools: true`.
import { GatewayError } from '../../errors.js';
import { isJsonObject } from '../../json-object.js';

/** Tool types the upstream runs itself (versioned: `web_search_20250305`, ...). */
const SERVER_TOOL_TYPES = ['web_search', 'web_fetch', 'code_execution'];
/** Request fields that ask the upstream to run something on its side. */
const SERVER_FIELDS = ['mcp_servers', 'container'];

function refuse(what: string, param: string): never {
  throw new GatewayError('invalid_request', {
    param,
    message: `${what} runs on the provider's servers and is billed per use; it is not enabled for this model (an operator can allow it with allow_server_tools: true).`,
  });
}

/** Throws a 400 naming the first server tool `body` asks for. */
export function refuseServerTools(body: Readonly<Record<string, unknown>>): void {
  for (const field of SERVER_FIELDS) if (body[field] !== undefined && body[field] !== null) refuse(`'${field}'`, field);
  if (!Array.isArray(body.tools)) return;
  body.tools.forEach((tool, index) => {
    if (!isJsonObject(tool) || typeof tool.type !== 'string') return;
    const type = tool.type;
    const server = SERVER_TOOL_TYPES.find((prefix) => type === prefix || type.startsWith(`${prefix}_`));
    if (server) refuse(`The server tool '${server}' (type ${type})`, `tools[${index}]`);
  });
}
