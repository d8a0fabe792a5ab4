import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectProblem, startTestService, type TestService } from '../support/test-service.ts';

const LIMIT = 52_428_800;
const PNG = Uint8Array.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
  0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89,
]);

let svc: TestService;

beforeAll(async () => {
  // No stages: these uploads must fail before anything is queued.
  svc = await startTestService({ stages: 'none' });
});
afterAll(async () => {
  await svc?.close();
});

/** Every case here must leave nothing behind: no document, no stored object. */
let objectsBefore: string[] = [];
let documentsBefore = 0;
beforeEach(async () => {
  objectsBefore = await svc.storedObjects();
  documentsBefore = (await svc.request('GET', '/api/v1/documents')).body.pagination.total;
});
afterEach(async () => {
  const list = await svc.request('GET', '/api/v1/documents');
  expect(list.status).toBe(200);
  expect(list.body.pagination.total).toBe(documentsBefore);
  expect(await svc.storedObjects()).toEqual(objectsBefore);
});

it('starts from an empty workspace and an empty object store', async () => {
  expect(objectsBefore).toEqual([]);
  expect(documentsBefore).toBe(0);
});

function form(parts: Array<[string, string] | [string, Uint8Array | string, string, string?]>): FormData {
  const f = new FormData();
  for (const part of parts) {
    if (part.length === 2) f.append(part[0], part[1]);
    else f.append(part[0], new Blob([part[1]], { type: part[3] ?? 'text/plain' }), part[2]);
  }
  return f;
}

const post = (body: FormData | string, headers: Record<string, string> = {}) =>
  svc.request('POST', '/api/v1/documents', { body, headers });

describe('POST /documents rejects unusable uploads with 400', () => {
  it('a form without a file part', async () => {
    const res = await post(form([['metadata', '{"a":1}']]));
    const problem = expectProblem(res, 400, 'bad-request');
    expect(problem.title).toBe('Missing file');
    expect(problem.detail).toContain('file');
  });

  it('an empty file', async () => {
    const res = await svc.upload('empty.txt', '');
    expect(expectProblem(res, 400, 'bad-request').title).toBe('Empty file');
  });

  it('PNG bytes named .txt, naming the real type and the allowed ones', async () => {
    const res = await svc.upload('picture.txt', PNG, { type: 'text/plain' });
    const problem = expectProblem(res, 400, 'bad-request');
    expect(problem.detail).toContain('image/png');
    for (const allowed of ['text/plain', 'text/markdown', 'text/csv', 'application/pdf', 'application/json']) {
      expect(problem.detail).toContain(allowed);
    }
  });

  it('binary data named .txt', async () => {
    const bytes = new Uint8Array(4096);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 256;
    const res = await svc.upload('data.txt', bytes);
    const problem = expectProblem(res, 400, 'bad-request');
    expect(problem.detail).toContain('application/octet-stream');
  });

  it('text that is not UTF-8 (Latin-1, no NUL byte) named .txt', async () => {
    // "Café crème brûlée" in ISO-8859-1: every accented letter is a lone byte above 0x7f.
    const latin1 = Buffer.from('Caf\xe9 cr\xe8me br\xfbl\xe9e, served every day.\n', 'latin1');
    const res = await svc.upload('menu.txt', latin1, { type: 'text/plain' });
    const problem = expectProblem(res, 400, 'bad-request');
    expect(problem.detail).toContain('application/octet-stream');
  });

  it('a JSON request instead of multipart', async () => {
    const res = await svc.request('POST', '/api/v1/documents', { json: { file: 'hello' } });
    expect(expectProblem(res, 400, 'bad-request').detail).toContain('multipart/form-data');
  });

  it('a request without a body', async () => {
    const res = await svc.request('POST', '/api/v1/documents');
    expectProblem(res, 400, 'bad-request');
  });

  it('a text/plain body', async () => {
    const res = await post('just text', { 'content-type': 'text/plain' });
    expectProblem(res, 400, 'bad-request');
  });

  it('two file parts', async () => {
    const res = await post(
      form([
        ['file', 'first file', 'a.txt'],
        ['file', 'second file', 'b.txt'],
      ]),
    );
    expect(expectProblem(res, 400, 'bad-request').detail).toContain('one file');
  });

  it('a file sent under another field name', async () => {
    const res = await post(form([['document', 'some text', 'a.txt']]));
    expect(expectProblem(res, 400, 'bad-request').detail).toContain('`file`');
  });
});

describe('POST /documents rejects unusable file names with 422 and stores nothing', () => {
  it('a name over 1,024 bytes', async () => {
    const res = await post(form([['file', 'hello', `${'é'.repeat(600)}.txt`]]));
    const problem = expectProblem(res, 422, 'validation-error');
    expect(problem.errors).toEqual([{ field: 'file', message: 'name is 1204 bytes; at most 1024 are allowed' }]);
  });

  it('a name with control characters', async () => {
    // Written by hand: FormData would percent-encode the control character.
    const body = [
      '--kbBoundary',
      'Content-Disposition: form-data; name="file"; filename="bell\u0007name.txt"',
      'Content-Type: text/plain',
      '',
      'hello',
      '--kbBoundary--',
      '',
    ].join('\r\n');
    const res = await post(body, { 'content-type': 'multipart/form-data; boundary=kbBoundary' });
    expect(expectProblem(res, 422, 'validation-error').errors?.[0]?.message).toContain('control characters');
  });
});

describe('POST /documents rejects bad metadata with 422 and stores nothing', () => {
  const manyKeys = JSON.stringify(Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i])));
  const keysAndReason = JSON.stringify({
    ...Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`k${i}`, i])),
    change_reason: 'why',
  });
  const longKey = JSON.stringify({ ['x'.repeat(129)]: 1 });
  const tooBig = JSON.stringify({ text: 'y'.repeat(17 * 1024) });
  const nested = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
  const cases: Array<[string, string, RegExp]> = [
    ['not JSON', '{title: nope', /not valid JSON/],
    ['an array', '[1,2,3]', /JSON object/],
    ['a string', '"title"', /JSON object/],
    ['null', 'null', /JSON object/],
    ['65 keys', manyKeys, /65 keys; at most 64/],
    ['64 keys and a change_reason key', keysAndReason, /65 keys; at most 64 .*change_reason/],
    ['a key of 129 characters', longKey, /129 characters/],
    ['over 16 KiB serialised', tooBig, /16384/],
    ['nested 33 levels deep', nested(33), /nested 33 levels deep; at most 32/],
    ['nested 5,000 levels deep', nested(5000), /nested more than 33 levels deep; at most 32/],
  ];

  it.each(cases)('metadata that is %s (before the file)', async (_label, metadata, message) => {
    const res = await post(
      form([
        ['metadata', metadata],
        ['file', 'A perfectly fine text file.', 'fine.txt'],
      ]),
    );
    const problem = expectProblem(res, 422, 'validation-error');
    expect(problem.errors).toEqual([
      expect.objectContaining({ field: 'metadata', message: expect.stringMatching(message) }),
    ]);
  });

  it.each(cases)('metadata that is %s (after the file)', async (_label, metadata) => {
    const res = await post(
      form([
        ['file', 'A perfectly fine text file.', 'fine.txt'],
        ['metadata', metadata],
      ]),
    );
    expect(expectProblem(res, 422, 'validation-error').errors?.[0]?.field).toBe('metadata');
  });

  it('a metadata field longer than the form field limit', async () => {
    const res = await post(
      form([
        ['file', 'A perfectly fine text file.', 'fine.txt'],
        ['metadata', JSON.stringify({ text: 'z'.repeat(70 * 1024) })],
      ]),
    );
    expect(expectProblem(res, 422, 'validation-error').errors?.[0]?.field).toBe('metadata');
  });

  it('a change_reason key that is not a string', async () => {
    const res = await svc.upload('fine.txt', 'Fine text.', { metadata: { title: 't', change_reason: 42 } });
    const problem = expectProblem(res, 422, 'validation-error');
    expect(problem.errors).toEqual([{ field: 'metadata.change_reason', message: 'must be a string' }]);
  });

  it('an unknown form field', async () => {
    const res = await post(
      form([
        ['file', 'Fine text.', 'fine.txt'],
        ['titel', 'typo'],
      ]),
    );
    expect(expectProblem(res, 422, 'validation-error').errors).toEqual([expect.objectContaining({ field: 'titel' })]);
  });

  it('lists every failed field at once', async () => {
    const res = await post(
      form([
        ['file', 'Fine text.', 'fine.txt'],
        ['metadata', '[]'],
        ['source', 's'.repeat(300)],
        ['titel', 'typo'],
      ]),
    );
    const problem = expectProblem(res, 422, 'validation-error');
    expect(problem.errors?.map((e) => e.field).sort()).toEqual(['metadata', 'source', 'titel']);
  });

  it('a source over 256 characters as sent, even when it is 256 after trimming', async () => {
    const res = await post(
      form([
        ['file', 'Fine text.', 'fine.txt'],
        ['source', `\n\uFEFF${'s'.repeat(256)}`],
      ]),
    );
    expect(expectProblem(res, 422, 'validation-error').errors).toEqual([expect.objectContaining({ field: 'source' })]);
  });
});

describe('POST /documents over the size limit', () => {
  it('streams a 51 MB file and answers 413 with the real byte count and the limit', async () => {
    const size = 51 * 1024 * 1024;
    const boundary = `----kbtest${Date.now()}`;
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n{"title":"big"}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const chunk = Buffer.alloc(64 * 1024, 'a');
    async function* body() {
      yield head;
      let sent = 0;
      while (sent < size) {
        const n = Math.min(chunk.length, size - sent);
        yield n === chunk.length ? chunk : chunk.subarray(0, n);
        sent += n;
      }
      yield tail;
    }
    const res = await fetch(`${svc.url}/api/v1/documents`, {
      method: 'POST',
      headers: { 'x-api-key': svc.keys.all, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: ReadableStream.from(body()),
      duplex: 'half',
    } as RequestInit);
    const text = await res.text();
    const problem = expectProblem(
      { status: res.status, headers: res.headers, body: JSON.parse(text), text },
      413,
      'payload-too-large',
    );
    expect(problem.detail).toContain(String(size));
    expect(problem.detail).toContain(String(LIMIT));
  });
});
