import { execFile, spawnSync } from 'node:child_process';
import { cp, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir } from '../../support/child-service.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

const run = promisify(execFile);

/** Whether `python3` with `venv` and `ensurepip` is here; the suite needs nothing else from the machine. */
function pythonMissing(): string | null {
  const probe = spawnSync('python3', ['-c', 'import sys, venv, ensurepip; assert sys.version_info >= (3, 11)'], {
    encoding: 'utf8',
  });
  if (probe.error) return 'python3 is not installed';
  if (probe.status !== 0) return `python3 (3.11 or later) with venv and ensurepip is missing: ${probe.stderr.trim()}`;
  return null;
}
const missing = pythonMissing();

/** What a user runs after `pip install ./clients/python`, against a running service. */
const SCENARIO = String.raw`
import json, os, sys
import httpx
from kb_client import KbApiError, KbClient, RetryOn429Transport

url, key, other_key = os.environ["KB_URL"], os.environ["KB_KEY"], os.environ["KB_OTHER_KEY"]
out = {}
with KbClient(url, key) as kb:
    up = kb.upload(b"# Release notes\n\nThe aurora dashboard now exports reports as PDF.\n", "notes.md", metadata={"team": "docs"})
    out["upload"] = {"status": up.status.value, "version": up.version, "name": up.name}
    doc = kb.wait_for(up.document_id)
    out["waited"] = {"status": doc.status.value, "metadata": doc.metadata.to_dict(), "chunks": doc.stats.chunks}
    hits = kb.search("export dashboard reports", limit=5, mode="keyword").results
    out["search"] = [{"document_id": h.document_id, "name": h.document_name, "version": h.version, "content": h.content} for h in hits]
    kb.replace(up.document_id, b"# Release notes\n\nThe aurora dashboard now exports reports as PDF and CSV.\n", "notes.md", change_reason="adds CSV")
    kb.wait_for(up.document_id, version=2)
    out["versions"] = [[v.version, v.status.value, v.change_reason] for v in kb.versions(up.document_id).versions]
    diff = kb.compare_versions(up.document_id, 1, 2)
    out["compare"] = {"modified": diff.changes.modified_chunks, "new": diff.changes.diff[0].new_content}
    back = kb.rollback(up.document_id, 1)
    out["rollback"] = {"version": back.version, "restored_from": back.restored_from}
    out["after_rollback"] = kb.get_document(up.document_id).served_version
    second = kb.upload(b"second", "second.txt")
    out["listed"] = [d.document_id for d in kb.iter_documents(limit=1)]
    out["ids"] = [second.document_id, up.document_id]
    try:
        KbClient(url, other_key).get_document(up.document_id)
    except KbApiError as error:
        out["other_workspace"] = {"status": error.status, "title": error.problem.title}
    minted = kb.create_token(600, permissions=["search"], filters={"document_ids": [str(up.document_id)]})
    with KbClient(url, minted.token) as scoped:
        found = scoped.search("export dashboard reports second", mode="keyword").results
        out["scoped"] = {"type": minted.token_type.value, "documents": sorted({str(h.document_id) for h in found})}
        try:
            scoped.get_document(up.document_id)
        except KbApiError as error:
            out["scoped"]["read"] = error.status

# Every write carries an Idempotency-Key unless turned off: a transport that loses the first answer
# and sends the request again (as after a network failure) creates one document with it, two without.
class Twice(httpx.BaseTransport):
    def __init__(self):
        self.inner = httpx.HTTPTransport()
    def handle_request(self, request):
        first = self.inner.handle_request(request)
        first.read()
        first.close()
        return self.inner.handle_request(request)
tag = "lost-" + str(__import__("uuid").uuid4())
with KbClient(url, key, transport=Twice()) as lossy:
    lossy.upload(b"Lost: the first answer is lost.", "lost.md", source=tag, source_item="lost.md")
with KbClient(url, key, transport=Twice(), idempotency_keys=False) as keyless:
    keyless.upload(b"Lost: no key this time.", "keyless.md", source=tag, source_item="keyless.md")
with KbClient(url, key) as kb:
    matches = kb.lookup([(tag, "lost.md"), (tag, "keyless.md")])
    out["lost"] = {"with_key": sum(m.source_item == "lost.md" for m in matches), "without_key": sum(m.source_item == "keyless.md" for m in matches)}

# 429 then 200: the layer waits Retry-After and sends the request again, body included.
seen = []
def answer(request):
    seen.append(request.content)
    if len(seen) == 1:
        return httpx.Response(429, headers={"retry-after": "1"}, json={"detail": "slow down"})
    return httpx.Response(200, json={"ok": True})
client = httpx.Client(transport=RetryOn429Transport(httpx.MockTransport(answer)))
started = __import__("time").monotonic()
response = client.post("http://kb.test/api/v1/search", json={"query": "x"})
out["retry"] = {"status": response.status_code, "attempts": len(seen), "same_body": seen[0] == seen[1], "waited": __import__("time").monotonic() - started >= 0.9}
print(json.dumps(out, default=str))
`;

describe.skipIf(missing !== null)(
  `Python client (pip install ./clients/python in a fresh venv)${missing ? ` — skipped: ${missing}` : ''}`,
  { timeout: 600_000 },
  () => {
    let svc: TestService;
    beforeAll(async () => {
      svc = await startTestService();
    });
    afterAll(async () => {
      await svc?.close();
    });

    it('installs as a user would and runs upload → wait → search → versions → rollback', async () => {
      const home = await tempDir('kb-python-client-');
      try {
        // A copy, so the build leaves nothing in the checkout.
        const source = path.join(home.path, 'clients', 'python');
        await cp(path.join(REPO_ROOT, 'clients', 'python'), source, { recursive: true });
        const venv = path.join(home.path, 'venv');
        await run('python3', ['-m', 'venv', venv]);
        const python = path.join(venv, 'bin', 'python');
        await run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', source], {
          cwd: home.path,
          maxBuffer: 16 * 1024 * 1024,
        });
        const script = path.join(home.path, 'scenario.py');
        await writeFile(script, SCENARIO);
        const { stdout } = await run(python, [script], {
          cwd: home.path,
          env: { ...process.env, KB_URL: svc.url, KB_KEY: svc.keys.all, KB_OTHER_KEY: svc.keys.otherWorkspace },
        });
        const out = JSON.parse(stdout);
        expect(out.upload).toEqual({ status: 'pending', version: 1, name: 'notes.md' });
        expect(out.waited).toEqual({ status: 'completed', metadata: { team: 'docs' }, chunks: 1 });
        expect(out.search[0]).toMatchObject({ name: 'notes.md', version: 1 });
        expect(out.search[0].content).toContain('exports reports as PDF.');
        expect(out.versions).toEqual([
          [2, 'completed', 'adds CSV'],
          [1, 'completed', null],
        ]);
        expect(out.compare.modified).toBe(1);
        expect(out.compare.new).toContain('PDF and CSV.');
        expect(out.rollback).toEqual({ version: 3, restored_from: 1 });
        expect(out.scoped).toEqual({ type: 'Bearer', documents: [out.ids[1]], read: 403 });
        expect(out.after_rollback).toBe(3);
        expect(out.listed).toEqual(out.ids);
        expect(out.other_workspace).toEqual({ status: 404, title: 'Not Found' });
        expect(out.retry).toEqual({ status: 200, attempts: 2, same_body: true, waited: true });
        expect(out.lost).toEqual({ with_key: 1, without_key: 2 });
      } finally {
        await home.remove();
      }
    });
  },
);
