// OpenAI tools, tool_choice, parallel_tool_calls and response_format → Anthropic tools and tool_choice.
// JSON mode has no Anthropic switch: it becomes a tool named `json_response` whose input is the answer,
// and the response readers turn that tool call back into message content.
import { isJsonObject, type JsonObject } from '../../json-object.js';

/** Reserved: a tool_use with this name is the JSON-mode answer, never shown as a tool call. */
export const JSON_RESPONSE_TOOL = 'json_response';

/** Asked for when thinking is on, where Anthropic refuses a forced tool choice. */
export const JSON_RESPONSE_INSTRUCTION = `Give your final answer by calling the ${JSON_RESPONSE_TOOL} tool with the answer as its input.`;

export interface ToolSetup {
  readonly tools: JsonObject[];
  readonly toolChoice: JsonObject | undefined;
  /** A system line to add (JSON mode with thinking on). */
  readonly instruction: string | undefined;
}

function convertTool(tool: unknown, dropped: Set<string>): JsonObject | undefined {
  if (!isJsonObject(tool)) return undefined;
  if (tool.type === 'function' && isJsonObject(tool.function)) {
    const fn = tool.function;
    return {
      name: fn.name,
      ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
      input_schema: isJsonObject(fn.parameters) ? fn.parameters : { type: 'object', properties: {} },
    };
  }
  if (tool.type === 'custom' && isJsonObject(tool.custom)) {
    // OpenAI's free-text custom tools: Anthropic tools always take a JSON input.
    dropped.add('tools[].custom');
    return undefined;
  }
  // Anthropic's own tool definitions (server tools such as web_search, or {name, input_schema}).
  return tool;
}

function convertToolChoice(choice: unknown, dropped: Set<string>): JsonObject | undefined {
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any' };
  if (isJsonObject(choice) && choice.type === 'function' && isJsonObject(choice.function)) {
    return { type: 'tool', name: choice.function.name };
  }
  if (choice !== undefined && choice !== null) dropped.add('tool_choice');
  return undefined;
}

/** The json_response tool for a JSON response_format, or undefined for text / no format. */
function jsonResponseTool(format: unknown, dropped: Set<string>): JsonObject | undefined {
  if (!isJsonObject(format) || format.type === 'text') return undefined;
  if (format.type === 'json_object') {
    return { name: JSON_RESPONSE_TOOL, description: 'Respond with a JSON object.', input_schema: { type: 'object' } };
  }
  if (format.type === 'json_schema') {
    const spec = isJsonObject(format.json_schema) ? format.json_schema : {};
    const description = typeof spec.description === 'string' ? spec.description : 'Respond with a JSON object that matches the schema.';
    return { name: JSON_RESPONSE_TOOL, description, input_schema: isJsonObject(spec.schema) ? spec.schema : { type: 'object' } };
  }
  dropped.add('response_format');
  return undefined;
}

/** @param thinkingOn Anthropic accepts only auto/none tool choices with extended thinking. */
export function convertTools(body: JsonObject, thinkingOn: boolean, dropped: Set<string>): ToolSetup {
  const clientTools: JsonObject[] = [];
  if (Array.isArray(body.tools)) {
    for (const tool of body.tools as unknown[]) {
      const converted = convertTool(tool, dropped);
      if (converted) clientTools.push(converted);
    }
  }
  let toolChoice = convertToolChoice(body.tool_choice, dropped);
  let instruction: string | undefined;
  const jsonTool = jsonResponseTool(body.response_format, dropped);
  const tools = jsonTool ? [...clientTools, jsonTool] : clientTools;
  if (jsonTool && !toolChoice) {
    if (thinkingOn) {
      toolChoice = { type: 'auto' };
      instruction = JSON_RESPONSE_INSTRUCTION;
    } else {
      // With tools of its own the model may still call those; otherwise the answer is the tool call.
      toolChoice = clientTools.length > 0 ? { type: 'any' } : { type: 'tool', name: JSON_RESPONSE_TOOL };
    }
  }
  if (body.parallel_tool_calls === false) {
    toolChoice ??= { type: 'auto' };
    if (toolChoice.type !== 'none') toolChoice = { ...toolChoice, disable_parallel_tool_use: true };
  }
  if (tools.length === 0) {
    // A tool choice without tools has nothing to choose from (and Anthropic rejects it).
    if (body.tool_choice !== undefined && body.tool_choice !== null) dropped.add('tool_choice');
    if (body.parallel_tool_calls !== undefined && body.parallel_tool_calls !== null) dropped.add('parallel_tool_calls');
    return { tools, toolChoice: undefined, instruction: undefined };
  }
  return { tools, toolChoice, instruction };
}
