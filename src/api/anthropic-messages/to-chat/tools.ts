// Messages tools and tool_choice → chat completions functions: {name, description, input_schema} →
// {type: "function", function: {name, description, parameters}}; tool_choice auto / any / tool / none →
// "auto" / "required" / {type: "function", function: {name}} / "none"; disable_parallel_tool_use →
// parallel_tool_calls: false. A tool Anthropic defines or runs itself (web_search, bash_…, text_editor_…,
// computer_…: a `type` and no schema of the client's) has no chat equivalent: a 400 naming it.
import { GatewayError } from '../../../errors.js';
import { isJsonObject, type JsonObject } from '../../../json-object.js';

export interface ChatTools {
  readonly tools?: JsonObject[];
  readonly tool_choice?: string | JsonObject;
  readonly parallel_tool_calls?: false;
}

function functionOf(tool: unknown, index: number, dropped: Set<string>): JsonObject | undefined {
  if (!isJsonObject(tool)) return undefined;
  if (tool.cache_control !== undefined) dropped.add('cache_control');
  const clientTool = tool.type === undefined || tool.type === null || tool.type === 'custom';
  if (!clientTool || !isJsonObject(tool.input_schema)) {
    const name = typeof tool.name === 'string' ? `'${tool.name}' ` : '';
    throw new GatewayError('invalid_request', {
      param: `tools[${index}]`,
      message: `The tool ${name}(type ${String(tool.type)}) is defined and run by Anthropic; this model's upstream speaks chat completions and cannot run it.`,
    });
  }
  const fn: JsonObject = { name: tool.name, parameters: tool.input_schema };
  if (typeof tool.description === 'string') fn.description = tool.description;
  if (tool.strict === true) fn.strict = true;
  return { type: 'function', function: fn };
}

function choiceOf(choice: JsonObject): string | JsonObject | undefined {
  switch (choice.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return typeof choice.name === 'string' ? { type: 'function', function: { name: choice.name } } : undefined;
    default:
      return undefined;
  }
}

export function chatTools(tools: unknown, toolChoice: unknown, dropped: Set<string>): ChatTools {
  const functions = Array.isArray(tools) ? tools.map((tool, index) => functionOf(tool, index, dropped)).filter((fn): fn is JsonObject => fn !== undefined) : [];
  const choice = isJsonObject(toolChoice) ? toolChoice : undefined;
  // A choice without tools has nothing to choose from (and OpenAI refuses it).
  if (functions.length === 0) {
    if (choice) dropped.add('tool_choice');
    return {};
  }
  const chosen = choice && choiceOf(choice);
  if (choice && chosen === undefined) dropped.add('tool_choice');
  const serial = choice?.disable_parallel_tool_use === true && chosen !== 'none';
  return { tools: functions, ...(chosen !== undefined ? { tool_choice: chosen } : {}), ...(serial ? { parallel_tool_calls: false as const } : {}) };
}
