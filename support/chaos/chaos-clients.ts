/**
 * The chaos clients: each uploads its share of small one-chunk documents, every one holding a
 * token no other document holds, and, as a document completes, may replace its content (a new
 * token), change its metadata or delete it. Every write is retried until answered (one
 * `Idempotency-Key` for all its attempts); the ledger keeps what the service acknowledged, which
 * the checks afterwards compare with what the service holds.
 */
import { randomBytes } from 'node:crypto';
import type { ChaosHttp, WriteOutcome } from './chaos-http.ts';

/** A follow-up a client makes once the document's last acknowledged version completed. */
export type FollowUp = 'update' | 'patch' | 'delete';

/** An acknowledged write as the audit log should show it: `update` for new content and new metadata alike. */
export interface LedgerAction {
  readonly action: 'create' | 'update' | 'delete';
  readonly version: number;
}

/** What one client was told about one document. */
export interface LedgerDocument {
  readonly id: string;
  readonly client: number;
  /** Acknowledged versions, in order. */
  readonly versions: number[];
  /** The token of the content the last acknowledged version holds. */
  token: string;
  /** Tokens of content an acknowledged update replaced: search must not find them any more. */
  readonly replacedTokens: string[];
  readonly actions: LedgerAction[];
  deleted: boolean;
  /** Follow-ups still to make, in order. */
  readonly plan: FollowUp[];
}

export interface WriteCounts {
  /** Logical writes the service acknowledged (2xx; a delete answered 404 after an unanswered attempt too). */
  acknowledged: number;
  /** Writes answered with a 4xx they should not have had. */
  refused: number;
  /** Writes given up without an answer other than 5xx. */
  gaveUp: number;
  /** Writes that took more than one attempt. */
  retried: number;
  /** Attempts that may have reached the service and got no answer. */
  unanswered: number;
  /** Attempts answered 5xx. */
  failedAnswers: number;
  /** Writes with at least one unanswered attempt (their retry may have been applied twice without idempotency). */
  ambiguous: number;
}

export interface Ledger {
  readonly documents: Map<string, LedgerDocument>;
  readonly writes: WriteCounts;
  /** A few refused or given-up writes, for the report. */
  readonly problems: string[];
  /** When each client's writes were acknowledged (epoch ms), for the timeline. */
  readonly acknowledgedAt: number[];
}

export function createLedger(): Ledger {
  return {
    documents: new Map(),
    writes: { acknowledged: 0, refused: 0, gaveUp: 0, retried: 0, unanswered: 0, failedAnswers: 0, ambiguous: 0 },
    problems: [],
    acknowledgedAt: [],
  };
}

export interface ClientOptions {
  readonly client: number;
  readonly http: ChaosHttp;
  readonly ledger: Ledger;
  /** Documents this client creates. */
  readonly documents: number;
  /** Its uploads are spread evenly over this many milliseconds from the start. */
  readonly spreadMs: number;
  /** Follow-ups stop being made after this instant (epoch ms); asked again on every turn. */
  followUpsUntil(): number;
  /**
   * Whether the uploads may go on past `fraction` (0–1) of this client's documents: false while the
   * faults lag behind (a slow one), so every fault has uploads after it.
   */
  mayPass(fraction: number): boolean;
}

/** A token only one document version holds: lowercase letters, one word for every analyser. */
export function uniqueToken(): string {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  return `zq${[...randomBytes(12)].map((b) => letters[b % 26]).join('')}`;
}

function noteText(client: number, n: number, token: string): string {
  return `# Chaos note ${client}-${n}\n\nThe ${token} ledger keeps entry ${n} of client ${client}.\n`;
}

function form(name: string, text: string): () => FormData {
  return () => {
    const body = new FormData();
    body.append('file', new Blob([text], { type: 'text/markdown' }), name);
    return body;
  };
}

/** The follow-ups of a new document: most get one or none, some an update and then a delete. */
function planFor(random: () => number): FollowUp[] {
  const r = random();
  if (r < 0.3) return ['update'];
  if (r < 0.4) return ['patch'];
  if (r < 0.55) return ['delete'];
  if (r < 0.65) return ['update', 'delete'];
  if (r < 0.7) return ['patch', 'update'];
  return [];
}

function count(ledger: Ledger, outcome: WriteOutcome, acknowledged: boolean, what: string): void {
  const w = ledger.writes;
  if (outcome.attempts > 1) w.retried++;
  w.unanswered += outcome.unanswered;
  w.failedAnswers += outcome.failedAnswers;
  if (outcome.unanswered > 0) w.ambiguous++;
  if (acknowledged) {
    w.acknowledged++;
    ledger.acknowledgedAt.push(Date.now());
    return;
  }
  if (outcome.status === 0 || outcome.status >= 500) w.gaveUp++;
  else w.refused++;
  if (ledger.problems.length < 20) {
    ledger.problems.push(
      `${what}: ${outcome.status || 'no answer'} after ${outcome.attempts} attempt(s) ${JSON.stringify(outcome.body ?? {}).slice(0, 200)}`,
    );
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs one client to its end: every upload made, and every follow-up made or its time up. */
export async function runClient(options: ClientOptions): Promise<void> {
  const { client, http, ledger } = options;
  const started = Date.now();
  const interval = options.documents > 0 ? options.spreadMs / options.documents : 0;
  /** Documents with follow-ups left, and when to look at each again. */
  const waiting: Array<{ doc: LedgerDocument; checkAt: number }> = [];

  async function create(n: number): Promise<void> {
    const token = uniqueToken();
    const outcome = await http.write({
      method: 'POST',
      path: '/api/v1/documents',
      form: form(`note-${client}-${n}.md`, noteText(client, n, token)),
    });
    const id = typeof outcome.body?.document_id === 'string' ? outcome.body.document_id : null;
    const acknowledged = outcome.status === 201 && id !== null;
    count(ledger, outcome, acknowledged, `create note-${client}-${n}`);
    if (!acknowledged || id === null) return;
    const doc: LedgerDocument = {
      id,
      client,
      versions: [1],
      token,
      replacedTokens: [],
      actions: [{ action: 'create', version: 1 }],
      deleted: false,
      plan: planFor(Math.random),
    };
    ledger.documents.set(id, doc);
    if (doc.plan.length > 0) waiting.push({ doc, checkAt: Date.now() + 1000 });
  }

  /** Makes the next follow-up of `doc`; returns false when none can be made any more. */
  async function followUp(doc: LedgerDocument): Promise<boolean> {
    const next = doc.plan[0];
    if (next === undefined) return false;
    const latest = doc.versions.at(-1) as number;
    const path = `/api/v1/documents/${doc.id}`;
    if (next === 'delete') {
      const outcome = await http.write({ method: 'DELETE', path });
      // A 404 after an attempt that got no answer: that attempt deleted it.
      const acknowledged = outcome.status === 204 || (outcome.status === 404 && outcome.unanswered > 0);
      count(ledger, outcome, acknowledged, `delete ${doc.id}`);
      if (!acknowledged) return false;
      doc.deleted = true;
      doc.actions.push({ action: 'delete', version: latest });
      return false;
    }
    let outcome: WriteOutcome;
    let token = doc.token;
    if (next === 'update') {
      token = uniqueToken();
      const n = doc.versions.length + 1;
      outcome = await http.write({
        method: 'PUT',
        path,
        form: form(`note-${client}-update.md`, noteText(client, n, token)),
      });
    } else {
      outcome = await http.write({
        method: 'PATCH',
        path,
        json: { metadata: { reviewed: true, pass: doc.versions.length }, change_reason: 'chaos follow-up' },
      });
    }
    const version = typeof outcome.body?.version === 'number' ? outcome.body.version : null;
    const acknowledged = outcome.status === 200 && version !== null;
    count(ledger, outcome, acknowledged, `${next} ${doc.id}`);
    if (!acknowledged || version === null) return false;
    if (token !== doc.token) {
      doc.replacedTokens.push(doc.token);
      doc.token = token;
    }
    doc.versions.push(version);
    doc.actions.push({ action: 'update', version });
    doc.plan.shift();
    return doc.plan.length > 0;
  }

  /** Looks at the document waiting longest; makes its follow-up once its last version completed. */
  async function tend(): Promise<boolean> {
    waiting.sort((a, b) => a.checkAt - b.checkAt);
    const first = waiting[0];
    if (!first || first.checkAt > Date.now()) return false;
    const { doc } = first;
    const read = await http.read(`/api/v1/documents/${doc.id}`);
    const body = read?.body;
    if (read?.status === 200 && body?.status === 'completed' && body.version === doc.versions.at(-1)) {
      waiting.shift();
      if (await followUp(doc)) waiting.push({ doc, checkAt: Date.now() + 1000 });
    } else if (read?.status === 200 && body?.status === 'failed' && body.version === doc.versions.at(-1)) {
      waiting.shift(); // the checks report it
    } else {
      first.checkAt = Date.now() + 1000;
    }
    return true;
  }

  for (let n = 0; n < options.documents; n++) {
    const due = started + n * interval + Math.random() * interval * 0.5;
    while (Date.now() < due || !options.mayPass(n / options.documents)) {
      if (!(await tend())) await sleep(Math.min(250, Math.max(10, due - Date.now())));
    }
    await create(n);
  }
  while (waiting.length > 0 && Date.now() < options.followUpsUntil()) {
    if (!(await tend())) await sleep(250);
  }
}
