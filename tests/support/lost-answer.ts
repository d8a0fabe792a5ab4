/**
 * Requests whose answer the client never gets: the whole request goes out over a raw socket,
 * then the connection is cut, as when a client's network fails after sending. Used to check that
 * a retry with the same `Idempotency-Key` does not write twice.
 */
import { randomUUID } from 'node:crypto';
import net from 'node:net';

export interface FormFile {
  readonly name: string;
  readonly content: string;
}

/** A file with a unique name and content, labelled for the test. */
export function uniqueFile(label: string): FormFile {
  return { name: `${label}-${randomUUID()}.txt`, content: `Notes about ${label}: ${randomUUID()}\n` };
}

/** The upload form of `file` (and text `fields`), as `fetch` sends it. */
export function uploadForm(file: FormFile, fields: Record<string, string> = {}): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([file.content], { type: 'text/plain' }), file.name);
  return form;
}

/** The same form as bytes with a boundary of its own, for a raw socket. */
export function rawUploadForm(file: FormFile, fields: Record<string, string> = {}): { body: Buffer; type: string } {
  const boundary = `----kb${randomUUID().replaceAll('-', '')}`;
  const parts = Object.entries(fields).map(
    ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
  parts.push(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: text/plain\r\n\r\n${file.content}\r\n`,
  );
  return {
    body: Buffer.from(`${parts.join('')}--${boundary}--\r\n`),
    type: `multipart/form-data; boundary=${boundary}`,
  };
}

/**
 * Sends an upload of `file` to `POST <base>/api/v1/documents` and loses the answer: `cut` closes
 * the connection as soon as the last byte of the request is written (the service may or may not
 * have read it all), `drop` when the first byte of the answer arrives, unread (the service
 * certainly ran the request). Resolves once the connection is closed.
 */
export function uploadAndLoseAnswer(
  base: string,
  headers: Record<string, string>,
  file: FormFile,
  mode: 'cut' | 'drop',
): Promise<void> {
  const { hostname, port } = new URL(base);
  const { body, type } = rawUploadForm(file);
  const lines = [
    'POST /api/v1/documents HTTP/1.1',
    `Host: ${hostname}:${port}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    `Content-Type: ${type}`,
    `Content-Length: ${body.length}`,
    '',
    '',
  ];
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    socket.on('error', reject);
    socket.on('close', () => resolve());
    socket.on('data', () => socket.destroy());
    socket.write(Buffer.concat([Buffer.from(lines.join('\r\n')), body]), () => {
      if (mode === 'cut') socket.destroy();
    });
  });
}
