// Responses tools → chat completions tools (docs/adr/0044-responses-to-chat.md). A chat upstream runs
// nothing itself and knows only functions, so:
//  - `function` tools go as chat functions (name, description, parameters, strict);
//  - a `namespace` (Codex groups its sub-agent tools in one) is flattened: its functions go under their
//    own names, and a call of one comes back as a function_call carrying that `namespace`;
//  - hosted built-in tools (web_search, file_search, code_interpreter, image_generation, mcp) cannot run on
//    a chat upstream: they are dropped — Codex sends web_search on every turn and its other tools are what
//    a coding session needs — unless tool_choice forces one, which is a 400 naming it;
//  - any other tool (custom / freeform, local_shell, computer use, ...) would need output items chat cannot
//    produce: a 400 naming it.
import { GatewayError } from '../../../errors.js';
import { isJsonObject, type JsonObject } from '../../../json-object.js';

/** Built-in tool types that run on the upstream's servers (web_search_preview, web_search_2025_08_26, ...). */
const HOSTED_TOOL = /^(?:web_search|file_search|code_interpreter|image_generation|mcp)(?:$|_)/;

export interface ChatTools {
  readonly tools?: JsonObject[];
  readonly tool_choice?: unknown;
  readonly parallel_tool_calls?: boolean;
  /** The namespace each flattened function came from (a call of it goes back with that namespace). */
  readonly namespaces: ReadonlyMap<string, string>;
}

function chatFunction(tool: JsonObject): JsonObject {
  const fn: JsonObject = { name: tool.name };
  if (typeof tool.description === 'string') fn.description = tool.description;
  fn.parameters = isJsonObject(tool.parameters) ? tool.parameters : { type: 'object', properties: {} };
  if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
  return { type: 'function', function: fn };
}

function refuse(param: string, type: string, why: string): never {
  throw new GatewayError('unsupported_parameter', {
    param,
    message: `The tool '${type}' ${why} on this model: its upstream serves only chat completions, which run function tools only. Remove it from 'tools'.`,
  });
}

/** The chat tool_choice of a Responses tool_choice; hosted tools it forces are refused. */
function chatToolChoice(choice: unknown, hasTools: boolean): unknown {
  if (isJsonObject(choice) && choice.type !== 'function' && choice.type !== 'allowed_tools') {
    return refuse('tool_choice', typeof choice.type === 'string' ? choice.type : 'unknown', 'cannot be forced');
  }
  if (!hasTools) return undefined;
  if (typeof choice === 'string') return choice;
  if (!isJsonObject(choice)) return undefined;
  if (choice.type === 'function') return typeof choice.name === 'string' ? { type: 'function', function: { name: choice.name } } : undefined;
  // An allowed-tools list narrows what the model may call; compatible servers know only its mode.
  return choice.mode === 'required' ? 'required' : 'auto';
}

/** The chat tools of a Responses request; `dropped` collects what was left out. */
export function chatTools(body: JsonObject, dropped: Set<string>): ChatTools {
  const namespaces = new Map<string, string>();
  const tools: JsonObject[] = [];
  const names = new Set<string>();
  const add = (tool: JsonObject, namespace?: string) => {
    if (typeof tool.name !== 'string' || names.has(tool.name)) return;
    names.add(tool.name);
    tools.push(chatFunction(tool));
    if (namespace !== undefined) namespaces.set(tool.name, namespace);
  };
  const list = Array.isArray(body.tools) ? body.tools : [];
  list.forEach((tool: unknown, index) => {
    if (!isJsonObject(tool)) return;
    const type = typeof tool.type === 'string' ? tool.type : '';
    if (type === 'function') return add(tool);
    if (type === 'namespace' && typeof tool.name === 'string' && Array.isArray(tool.tools)) {
      for (const inner of tool.tools) if (isJsonObject(inner) && inner.type === 'function') add(inner, tool.name);
      return;
    }
    if (HOSTED_TOOL.test(type)) {
      dropped.add(`tools[${index}] (${type})`);
      return;
    }
    refuse(`tools[${index}].type`, type, 'cannot run');
  });
  const hasTools = tools.length > 0;
  const choice = chatToolChoice(body.tool_choice, hasTools);
  return {
    ...(hasTools ? { tools } : {}),
    ...(choice === undefined ? {} : { tool_choice: choice }),
    ...(hasTools && typeof body.parallel_tool_calls === 'boolean' ? { parallel_tool_calls: body.parallel_tool_calls } : {}),
    namespaces,
  };
}
