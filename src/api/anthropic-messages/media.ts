// Images and PDFs in a Messages request, estimated for its hold without decoding them: an image's size is
// read from its header (PNG, JPEG, GIF, WebP) and priced with Anthropic's published rule; a PDF is priced
// per page, its pages counted in its bytes. Estimates by contract: the upstream's usage settles exactly.

/** Anthropic scales an image down until its long edge is at most this many pixels... */
const MAX_LONG_EDGE = 1568;
/** ...and its area at most about this many (≈ 1,600 tokens): Anthropic's vision documentation. */
const MAX_PIXELS = 1_200_000;
/** tokens ≈ width × height / 750 (Anthropic's vision documentation). */
const PIXELS_PER_TOKEN = 750;
/** An image whose size cannot be read (a URL, a file id, an unknown format): the most one can cost. */
export const UNKNOWN_IMAGE_TOKENS = 1_600;
/**
 * One PDF page: Anthropic sends each page as its extracted text (1,500–3,000 tokens for a dense page, by
 * its documentation) and as an image (≈ 1,600 tokens at the size limit). A dense page's text plus its
 * image, rounded: the hold errs high, settlement is the upstream's count.
 */
export const PDF_PAGE_TOKENS = 3_000;
/** The base64 text decoded first to find an image's size: a JPEG may put large EXIF/ICC segments before it. */
const HEAD_BASE64_CHARS = 65_536;

export interface Dimensions {
  readonly width: number;
  readonly height: number;
}

/** Anthropic's token count for an image of this size (after its down-scaling). */
export function imageTokens(size: Dimensions): number {
  const { width, height } = size;
  if (!(width > 0 && height > 0)) return UNKNOWN_IMAGE_TOKENS;
  const scale = Math.min(1, MAX_LONG_EDGE / Math.max(width, height), Math.sqrt(MAX_PIXELS / (width * height)));
  return Math.min(UNKNOWN_IMAGE_TOKENS, Math.max(1, Math.ceil((Math.round(width * scale) * Math.round(height * scale)) / PIXELS_PER_TOKEN)));
}

/** The first bytes of base64 text (enough for a header), or all of it. */
function decodeHead(base64: string, chars: number): Buffer {
  const cut = base64.length <= chars ? base64.length : chars - (chars % 4);
  return Buffer.from(base64.slice(0, cut), 'base64');
}

function pngSize(bytes: Buffer): Dimensions | undefined {
  // Signature, then the IHDR chunk: width and height are its first two big-endian words.
  if (bytes.length < 24 || bytes.readUInt32BE(0) !== 0x89504e47 || bytes.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

function gifSize(bytes: Buffer): Dimensions | undefined {
  if (bytes.length < 10 || bytes.toString('latin1', 0, 3) !== 'GIF') return undefined;
  return { width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8) };
}

function webpSize(bytes: Buffer): Dimensions | undefined {
  if (bytes.length < 30 || bytes.toString('latin1', 0, 4) !== 'RIFF' || bytes.toString('latin1', 8, 12) !== 'WEBP') return undefined;
  const chunk = bytes.toString('latin1', 12, 16);
  if (chunk === 'VP8 ') return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff };
  if (chunk === 'VP8L') {
    const bits = bytes.readUInt32LE(21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8X') return { width: bytes.readUIntLE(24, 3) + 1, height: bytes.readUIntLE(27, 3) + 1 };
  return undefined;
}

/** Start-of-frame markers (C0–CF but DHT C4, JPG C8, DAC CC) carry the height then the width. */
const isStartOfFrame = (marker: number): boolean => marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;

/** Walks a JPEG's segments to its frame header; undefined when it is not in `bytes` (or not a JPEG). */
function jpegSize(bytes: Buffer): Dimensions | undefined {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) return undefined;
  let at = 2;
  while (at + 9 < bytes.length) {
    if (bytes[at] !== 0xff) return undefined;
    const marker = bytes[at + 1]!;
    // Fill bytes and markers without a length.
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    if (isStartOfFrame(marker)) return { width: bytes.readUInt16BE(at + 7), height: bytes.readUInt16BE(at + 5) };
    at += 2 + bytes.readUInt16BE(at + 2);
  }
  return undefined;
}

function sizeIn(bytes: Buffer): Dimensions | undefined {
  return pngSize(bytes) ?? jpegSize(bytes) ?? gifSize(bytes) ?? webpSize(bytes);
}

/** The size of a base64 image, read from its header; undefined when it cannot be read. */
export function base64ImageSize(base64: string): Dimensions | undefined {
  const head = decodeHead(base64, HEAD_BASE64_CHARS);
  const size = sizeIn(head);
  // A JPEG whose frame header lies past the first 48 KB (large metadata): decode the rest once.
  if (size || base64.length <= HEAD_BASE64_CHARS || head[0] !== 0xff) return size;
  return jpegSize(Buffer.from(base64, 'base64'));
}

/** The tokens of a Messages image block's `source`. */
export function imageSourceTokens(source: unknown): number {
  if (typeof source !== 'object' || source === null) return UNKNOWN_IMAGE_TOKENS;
  const { type, data } = source as { type?: unknown; data?: unknown };
  if (type !== 'base64' || typeof data !== 'string') return UNKNOWN_IMAGE_TOKENS;
  const size = base64ImageSize(data);
  return size ? imageTokens(size) : UNKNOWN_IMAGE_TOKENS;
}

const PAGE_OBJECT = /\/Type\s*\/Page(?![a-zA-Z])/g;
const PAGE_COUNT = /\/Type\s*\/Pages\b[^>]*?\/Count\s+(\d+)|\/Count\s+(\d+)[^>]*?\/Type\s*\/Pages\b/g;

/**
 * A PDF's page count, cheaply: its page objects (`/Type /Page`), or its page tree's `/Count` when the
 * pages sit in compressed object streams — whichever is larger; at least 1.
 */
export function pdfPages(bytes: Buffer): number {
  const text = bytes.toString('latin1');
  let pages = 0;
  for (PAGE_OBJECT.lastIndex = 0; PAGE_OBJECT.exec(text); ) pages += 1;
  for (let match; (match = PAGE_COUNT.exec(text)); ) pages = Math.max(pages, Number(match[1] ?? match[2]));
  PAGE_COUNT.lastIndex = 0;
  return Math.max(1, pages);
}

/** The tokens of a base64 PDF: its pages at PDF_PAGE_TOKENS each. */
export function base64PdfTokens(base64: string): number {
  return pdfPages(Buffer.from(base64, 'base64')) * PDF_PAGE_TOKENS;
}
