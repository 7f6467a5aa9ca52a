// `data:<media type>;base64,<data>` URLs, as clients send images and files inline.

export interface InlineData {
  readonly mediaType: string;
  readonly data: string;
}

export function parseDataUrl(url: string): InlineData | undefined {
  const match = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(url);
  return match ? { mediaType: match[1]!, data: match[2]! } : undefined;
}
