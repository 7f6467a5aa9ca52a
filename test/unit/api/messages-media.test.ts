// Images and PDFs in a Messages request, sized for the hold without decoding them
// (src/api/anthropic-messages/media.ts): image headers (PNG, JPEG, GIF, WebP), Anthropic's token rule, and
// a PDF's page count.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { base64ImageSize, base64PdfTokens, imageSourceTokens, imageTokens, pdfPages, PDF_PAGE_TOKENS, UNKNOWN_IMAGE_TOKENS } from '../../../src/api/anthropic-messages/media.js';

function png(width: number, height: number): Buffer {
  const bytes = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(bytes, 0);
  bytes.writeUInt32BE(13, 8);
  bytes.write('IHDR', 12, 'latin1');
  bytes.writeUInt32BE(width, 16);
  bytes.writeUInt32BE(height, 20);
  return bytes;
}

/** A JPEG with an APP1 (EXIF) segment of `metadataBytes` before its baseline frame header. */
function jpeg(width: number, height: number, metadataBytes = 100): Buffer {
  const app1 = Buffer.alloc(4 + metadataBytes);
  app1.writeUInt16BE(0xffe1, 0);
  app1.writeUInt16BE(2 + metadataBytes, 2);
  const sof = Buffer.alloc(19);
  sof.writeUInt16BE(0xffc0, 0);
  sof.writeUInt16BE(17, 2);
  sof[4] = 8;
  sof.writeUInt16BE(height, 5);
  sof.writeUInt16BE(width, 7);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app1, sof, Buffer.alloc(64)]);
}

function gif(width: number, height: number): Buffer {
  const bytes = Buffer.alloc(16);
  bytes.write('GIF89a', 0, 'latin1');
  bytes.writeUInt16LE(width, 6);
  bytes.writeUInt16LE(height, 8);
  return bytes;
}

function webp(chunk: 'VP8 ' | 'VP8L' | 'VP8X', width: number, height: number): Buffer {
  const bytes = Buffer.alloc(40);
  bytes.write('RIFF', 0, 'latin1');
  bytes.write('WEBP', 8, 'latin1');
  bytes.write(chunk, 12, 'latin1');
  if (chunk === 'VP8 ') {
    bytes.writeUInt16LE(width, 26);
    bytes.writeUInt16LE(height, 28);
  } else if (chunk === 'VP8L') {
    bytes[20] = 0x2f;
    bytes.writeUInt32LE(((width - 1) & 0x3fff) | (((height - 1) & 0x3fff) << 14), 21);
  } else {
    bytes.writeUIntLE(width - 1, 24, 3);
    bytes.writeUIntLE(height - 1, 27, 3);
  }
  return bytes;
}

const b64 = (bytes: Buffer) => bytes.toString('base64');

describe('image sizes from headers', () => {
  test('PNG, JPEG, GIF and WebP (lossy, lossless, extended)', () => {
    assert.deepEqual(base64ImageSize(b64(png(800, 600))), { width: 800, height: 600 });
    assert.deepEqual(base64ImageSize(b64(jpeg(1024, 768))), { width: 1024, height: 768 });
    assert.deepEqual(base64ImageSize(b64(gif(320, 200))), { width: 320, height: 200 });
    assert.deepEqual(base64ImageSize(b64(webp('VP8 ', 640, 480))), { width: 640, height: 480 });
    assert.deepEqual(base64ImageSize(b64(webp('VP8L', 300, 150))), { width: 300, height: 150 });
    assert.deepEqual(base64ImageSize(b64(webp('VP8X', 4000, 3000))), { width: 4000, height: 3000 });
  });

  test('a JPEG whose frame header lies past 48 KB of metadata is still read', () => {
    assert.deepEqual(base64ImageSize(b64(jpeg(2000, 1000, 60_000))), { width: 2000, height: 1000 });
  });

  test('bytes that are no known image give no size', () => {
    assert.equal(base64ImageSize(b64(Buffer.from('not an image at all, just text'))), undefined);
    assert.equal(base64ImageSize(''), undefined);
  });
});

describe('image tokens (Anthropic: width × height / 750 after scaling to a 1568-pixel long edge and ~1.15 MP)', () => {
  test('a small image costs its area over 750', () => {
    assert.equal(imageTokens({ width: 200, height: 200 }), 54);
    assert.equal(imageTokens({ width: 1000, height: 1000 }), 1334);
  });

  test('a large image costs what its scaled-down size does, about 1,600 at most', () => {
    const big = imageTokens({ width: 4000, height: 3000 });
    assert.ok(big > 1500 && big <= UNKNOWN_IMAGE_TOKENS, String(big));
    assert.ok(imageTokens({ width: 10_000, height: 200 }) < 600, 'a long strip is scaled by its long edge');
  });

  test('a block whose size cannot be read (a URL, a file, an unknown format) holds the most an image costs', () => {
    assert.equal(imageSourceTokens({ type: 'url', url: 'https://example.com/a.png' }), UNKNOWN_IMAGE_TOKENS);
    assert.equal(imageSourceTokens({ type: 'base64', media_type: 'image/png', data: b64(Buffer.from('junk')) }), UNKNOWN_IMAGE_TOKENS);
    assert.equal(imageSourceTokens({ type: 'base64', media_type: 'image/png', data: b64(png(200, 200)) }), 54);
  });
});

describe('PDF pages', () => {
  const pdf = (body: string) => Buffer.from(`%PDF-1.7\n${body}\n%%EOF`, 'latin1');

  test('counts page objects, never the page tree', () => {
    const text = '1 0 obj << /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >> endobj 3 0 obj << /Type /Page /Parent 1 0 R >> endobj 4 0 obj <</Type/Page>> endobj 5 0 obj << /Type /Page >> endobj';
    assert.equal(pdfPages(pdf(text)), 3);
  });

  test('reads the page tree count when the pages are in compressed object streams', () => {
    assert.equal(pdfPages(pdf('2 0 obj << /Count 12 /Kids [] /Type /Pages >> endobj 7 0 obj << /Type /ObjStm /N 12 >> stream ... endstream')), 12);
  });

  test('a PDF without either counts as one page; tokens are pages × the per-page estimate', () => {
    assert.equal(pdfPages(pdf('nothing here')), 1);
    assert.equal(base64PdfTokens(b64(pdf('<< /Type /Page >> << /Type /Page >>'))), 2 * PDF_PAGE_TOKENS);
  });
});
