/**
 * Upload ingress: concurrent large uploads to a `kb serve --stages none` child process (so the
 * API process is measured alone), against the same bytes written to the same disk by plain Node
 * streams and posted to a bare `node:http` server. The client is one `curl` process per upload
 * (so the client is not the bottleneck), or `fetch` in this process when curl is missing. The
 * child's resident set size is sampled every 20 ms from /proc.
 */
import { execFile, spawn } from 'node:child_process';
import { createReadStream, createWriteStream, openAsBlob } from 'node:fs';
import { mkdir, mkdtemp, open, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { startChild, stopChild } from '../../support/child-service.ts';
import { passage } from '../corpus.ts';
import type { BenchContext } from '../lib/context.ts';
import { createRandom } from '../lib/random.ts';
import { addFigure, createRow, judge, type Row } from '../lib/report.ts';
import { childEnv, cpuSecondsOf, rssOf, uploadFiles } from '../lib/service.ts';
import type { Target } from '../lib/target.ts';

const MB = 1e6;

/** Whether `curl` runs here; decided once. */
let curlAvailable: Promise<boolean> | null = null;
function hasCurl(): Promise<boolean> {
  curlAvailable ??= new Promise((resolve) => execFile('curl', ['--version'], (error) => resolve(!error)));
  return curlAvailable;
}

/** Posts `file` as the multipart field `file` to `url` with one curl process; resolves status and body. */
function curlPost(
  url: string,
  file: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const args = ['-sS', '-o', '-', '-w', '\n%{http_code}', '-F', `file=@${file};filename=${path.basename(file)}`];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  args.push(url);
  return new Promise((resolve, reject) => {
    execFile('curl', args, { maxBuffer: 1024 * 1024 }, (error, stdout) => {
      if (error) return reject(error);
      const cut = stdout.lastIndexOf('\n');
      resolve({ status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) });
    });
  });
}

/** Uploads every file at once through the API with curl; resolves the document ids. */
async function curlUploads(url: string, key: string, files: readonly string[]): Promise<string[]> {
  return Promise.all(
    files.map(async (file) => {
      const { status, body } = await curlPost(`${url}/api/v1/documents`, file, { 'X-API-Key': key });
      const id = status === 201 ? (JSON.parse(body) as { document_id?: string }).document_id : undefined;
      if (!id) throw new Error(`upload of ${path.basename(file)} answered ${status}: ${body.slice(0, 300)}`);
      return id;
    }),
  );
}

/** Writes `count` distinct text files of `bytes` each (a pool of corpus prose at varying offsets). */
async function makeFiles(dir: string, count: number, bytes: number): Promise<string[]> {
  const rng = createRandom(7);
  let pool = '';
  while (pool.length < 4 * MB) pool += `${passage(rng)}\n\n`;
  const files: string[] = [];
  for (let i = 0; i < count; i++) {
    const file = path.join(dir, `upload-${i}.txt`);
    const out = createWriteStream(file);
    let written = 0;
    let offset = (i * 104_729) % pool.length;
    while (written < bytes) {
      const header = `upload ${i} block ${written}\n`;
      const piece = (header + pool.slice(offset, offset + 1_000_000)).slice(0, bytes - written);
      written += Buffer.byteLength(piece);
      if (!out.write(piece)) await new Promise<void>((r) => out.once('drain', () => r()));
      offset = (offset + 7919) % (pool.length - 1_000_000);
    }
    await new Promise<void>((resolve, reject) =>
      out.end((error?: Error | null) => (error ? reject(error) : resolve())),
    );
    files.push(file);
  }
  return files;
}

/** Copies each file into `dir` with its own stream, all at once; `sync` fsyncs each copy. Seconds. */
async function plainWrite(files: readonly string[], dir: string, sync: boolean): Promise<number> {
  await mkdir(dir, { recursive: true });
  const started = performance.now();
  await Promise.all(
    files.map(async (file, i) => {
      const target = path.join(dir, `copy-${i}`);
      await pipeline(createReadStream(file), createWriteStream(target));
      if (sync) {
        const handle = await open(target, 'r');
        await handle.sync();
        await handle.close();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await rm(dir, { recursive: true, force: true });
  return seconds;
}

/**
 * The transport's own ceiling: a bare `node:http` server in a child process that streams each
 * request body (the same multipart form the service gets) to a file and fsyncs it. Seconds.
 */
async function bareHttp(files: readonly string[], dir: string, curl: boolean): Promise<number> {
  await mkdir(dir, { recursive: true });
  const server = `
    const fs = require('node:fs');
    const { pipeline } = require('node:stream/promises');
    let n = 0;
    require('node:http').createServer(async (req, res) => {
      const file = require('node:path').join(process.argv[1], 'body-' + n++);
      await pipeline(req, fs.createWriteStream(file));
      const fd = fs.openSync(file, 'r'); fs.fsyncSync(fd); fs.closeSync(fd);
      res.end('{}');
    }).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`;
  const child = spawn(process.execPath, ['-e', server, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<string>((resolve, reject) => {
      child.stdout.once('data', (d: Buffer) => resolve(d.toString().trim()));
      child.once('exit', () => reject(new Error('the bare HTTP server exited')));
    });
    const started = performance.now();
    await Promise.all(
      files.map(async (file) => {
        if (curl) {
          const { status } = await curlPost(`http://127.0.0.1:${port}/`, file, {});
          if (status !== 200) throw new Error(`the bare HTTP server answered ${status}`);
          return;
        }
        const form = new FormData();
        form.append('file', await openAsBlob(file), path.basename(file));
        const response = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: form });
        await response.arrayBuffer();
      }),
    );
    return (performance.now() - started) / 1000;
  } finally {
    child.kill();
    await rm(dir, { recursive: true, force: true });
  }
}

function sampleRss(pid: number): { stop(): Promise<number> } {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      peak = Math.max(peak, (await rssOf(pid)) ?? 0);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    /** Stops sampling (at once: no sample starts after the call) and resolves the peak; idempotent. */
    async stop() {
      running = false;
      await loop;
      return peak;
    },
  };
}

export async function uploadIngress(ctx: BenchContext, target: Target): Promise<Row> {
  const { ingressFiles: count, ingressBytes: bytes } = ctx.options;
  const row = createRow('upload ingress', target.runtime, `${count} × ${bytes / MB} MB`);
  const work = await mkdtemp(path.join(os.tmpdir(), 'kb-bench-upload-'));
  const instance = await target.fresh();
  try {
    ctx.progress(`upload ingress (${target.runtime}): writing ${count} files of ${bytes / MB} MB`);
    const files = await makeFiles(work, count, bytes);
    const curl = await hasCurl();
    // One key sends every upload at once: its concurrent-upload cap is raised to the count.
    const child = await startChild(
      ['serve', '--stages', 'none'],
      childEnv(instance, { KB_BOOTSTRAP_KEY: 'true', KB_MAX_CONCURRENT_UPLOADS: String(count) }),
    );
    try {
      const key = /ink_[A-Za-z0-9]{32,}/.exec(child.output())?.[0];
      if (!key) throw new Error(`kb serve printed no bootstrap key:\n${child.output()}`);
      const pid = child.process.pid as number;
      const purge = async (ids: readonly string[]) => {
        for (const id of ids) {
          const response = await fetch(`${child.url}/api/v1/documents/${id}?purge=true`, {
            method: 'DELETE',
            headers: { 'X-API-Key': key },
          });
          await response.arrayBuffer();
        }
      };
      // Warm-up: one small upload, so the baseline RSS includes the loaded upload path.
      await purge(await uploadFiles(child.url, [key], ctx.corpus.files.slice(0, 1), 1));

      const upload: number[] = [];
      const synced: number[] = [];
      const unsynced: number[] = [];
      const bare: number[] = [];
      const ofBare: number[] = [];
      const ratio: number[] = [];
      const baseline: number[] = [];
      const growth: number[] = [];
      const apiCpu: number[] = [];
      const clientCpu: number[] = [];
      const total = (count * bytes) / MB;
      for (let round = 0; round < ctx.options.rounds; round++) {
        ctx.progress(`upload ingress (${target.runtime}): round ${round + 1}`);
        const plainFirst = round % 2 === 1;
        let syncedS = plainFirst ? await plainWrite(files, path.join(work, 'plain'), true) : 0;
        const before = (await rssOf(pid)) ?? 0;
        const sampler = sampleRss(pid);
        const cpuBefore = (await cpuSecondsOf(pid)) ?? 0;
        const clientBefore = process.cpuUsage();
        const started = performance.now();
        // The sampler stops whatever the uploads do: a failed upload must not leave it polling (the
        // benchmark would never exit).
        const ids = await (curl
          ? curlUploads(child.url, key, files)
          : uploadFiles(child.url, [key], files, count)
        ).finally(() => {
          void sampler.stop();
        });
        const uploadS = (performance.now() - started) / 1000;
        const client = process.cpuUsage(clientBefore);
        const cpuAfter = (await cpuSecondsOf(pid)) ?? 0;
        const peak = await sampler.stop();
        apiCpu.push((100 * (cpuAfter - cpuBefore)) / uploadS);
        clientCpu.push((100 * (client.user + client.system)) / 1e6 / uploadS);
        await purge(ids);
        if (!plainFirst) syncedS = await plainWrite(files, path.join(work, 'plain'), true);
        const unsyncedS = await plainWrite(files, path.join(work, 'plain'), false);
        const bareS = await bareHttp(files, path.join(work, 'bare'), curl);
        bare.push(total / bareS);
        ofBare.push(bareS / uploadS);
        upload.push(total / uploadS);
        synced.push(total / syncedS);
        unsynced.push(total / unsyncedS);
        ratio.push(syncedS / uploadS);
        baseline.push(before / MB);
        growth.push((peak - before) / MB);
      }
      addFigure(row, 'upload through the API', 'MB/s', upload);
      addFigure(row, 'plain stream + fsync, same bytes', 'MB/s', synced);
      judge(addFigure(row, 'upload ÷ plain stream', 'ratio', ratio), { atLeast: 0.7 });
      addFigure(row, 'plain stream without fsync', 'MB/s', unsynced);
      addFigure(row, 'bare node:http server + fsync, same client', 'MB/s', bare);
      judge(addFigure(row, 'upload ÷ bare node:http server', 'ratio', ofBare), { atLeast: 0.8 });
      addFigure(row, 'API process RSS before', 'MB', baseline);
      judge(addFigure(row, 'API process RSS growth (peak)', 'MB', growth), { atMost: 64 });
      addFigure(row, 'API process CPU during uploads', '% of a core', apiCpu);
      if (!curl) addFigure(row, 'client (this process) CPU during uploads', '% of a core', clientCpu);
      row.notes.push(
        `${count} concurrent uploads of ${bytes / MB} MB text files to kb serve --stages none (${target.runtime}; one key, KB_MAX_CONCURRENT_UPLOADS=${count}), ` +
          `${curl ? 'one curl process per upload' : 'fetch from this process (curl not found)'}; ` +
          'the object store fsyncs every file, so the baseline streams the same files to the same disk and fsyncs each copy; ' +
          'the bare node:http figure is the same client posting the same forms to a server that only writes and fsyncs the body: the ceiling of HTTP over loopback on this machine',
      );
    } finally {
      await stopChild(child);
    }
  } finally {
    await instance.cleanup();
    await rm(work, { recursive: true, force: true });
  }
  return row;
}
