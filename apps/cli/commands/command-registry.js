/**
 * The commands of `kb`, one entry per command: the one-line summary and the usage text (what `kb
 * --help` and `kb <command> --help` print) and `load`, which imports the command's module only
 * when the command runs.
 *
 * Plain JavaScript that imports nothing: `bin/kb.js` answers help from it before the TypeScript
 * loader starts, so help comes back at once instead of after loading the whole application.
 * `command-registry.d.ts` gives its types; `tests/unit/cli/command-registry.test.ts` checks that
 * every entry loads a command.
 */

/** @type {Readonly<Record<string, import('./command-registry.d.ts').CommandEntry>>} */
export const COMMANDS = {
  serve: {
    summary: 'Run the HTTP API (embedded: with every pipeline stage in the same process)',
    usage: `kb serve [--stages parse,chunk,embed,index|all|none]`,
    load: async () => (await import('./serve.command.ts')).serveCommand,
  },
  worker: {
    summary: 'Run pipeline stages without the API (one consumer per stage group)',
    usage: `kb worker --stages parse,chunk,embed,index [--metrics-port 9464]`,
    load: async () => (await import('./serve.command.ts')).workerCommand,
  },
  keys: {
    summary: 'Create, list and revoke API keys',
    usage: `kb keys create --workspace <id> --name <name> --permissions read,search,write [--plan starter] [--json]
kb keys list [--workspace <id>] [--json]
kb keys revoke <key-id> [--json]`,
    load: async () => (await import('./keys.command.ts')).keysCommand,
  },
  users: {
    summary: 'Create, list and reset dashboard accounts',
    usage: `kb users create --email <address> --workspace <id>[,<id>…] [--role owner|member] [--password-stdin] [--json]
kb users list [--json]
kb users reset-password --email <address> [--json]

  A generated password is shown once and must be changed at the first sign-in to the dashboard;
  --password-stdin reads a password of the person's own (at least 12 characters) from standard input.
  reset-password replaces a password with a generated one and signs the account out everywhere.`,
    load: async () => (await import('./users.command.ts')).usersCommand,
  },
  ingest: {
    summary: 'Upload files and folders through the API; a re-run uploads only new and changed files',
    usage: `kb ingest <file|folder>... [--url http://127.0.0.1:8080] [--key ink_…] [--concurrency 4] [--metadata '{"k":"v"}'] [--source name] [--wait] [--json]

  Uploads .txt .md .markdown .csv .json .pdf .docx .xlsx files; other files, hidden entries (".name") and missing paths are ignored and listed.
  Each file is recorded under a source with its path relative to the folder given (name and source_item, e.g. guide/index.md),
  so running it again skips unchanged files, uploads a changed file as a new version of its document ("re-ingested")
  and a new file as a new document; it reports how many were created, updated, skipped and failed.
  --url          the service (default KB_API_URL)
  --key          an API key with write permission, and read to recognise unchanged files (default KB_API_KEY, else KB_KEY)
  --concurrency  uploads in flight, 1–64
  --metadata     a JSON object given to every document (and to every new version)
  --source       the source to record the files under (default: the folder's name; "upload" for file arguments)
  --wait         follow every uploaded document until it is completed or failed (told by the event stream)
  --json         print one JSON object (skipped, created, updated, failed counts; uploaded, failures, ignored, processed)`,
    load: async () => (await import('./ingest.command.ts')).ingestCommand,
  },
  dlq: {
    summary: 'List dead-lettered pipeline events and replay them once their cause is fixed',
    usage:
      'kb dlq list [--stage parse|chunk|embed|index] [--workspace <id>] [--pending] [--json]\n' +
      'kb dlq replay [--stage parse|chunk|embed|index] [--workspace <id>] [--json]\n\n' +
      '  list     every dead letter retained, oldest first, with whether it was replayed\n' +
      '  replay   re-drives every pending dead letter: a failed version goes back to processing and the\n' +
      "           event back to its stage's input topic; each dead letter is replayed once (a second\n" +
      '           replay finds nothing pending); one whose version completed or is gone is skipped\n' +
      '  --stage      only this stage\n' +
      '  --workspace  only this workspace\n' +
      '  --pending    list only the dead letters not replayed yet\n' +
      '  --json       print JSON instead of text',
    load: async () => (await import('./dlq.command.ts')).dlqCommand,
  },
  search: {
    summary: 'Search the knowledge base through the API and print the best passages',
    usage: `kb search <query>... [--mode hybrid|semantic|keyword] [--limit 10] [--filter '{"k":"v"}'] [--as-of <instant>] [--url http://127.0.0.1:8080] [--key ink_…] [--json]

  Prints the best passages, each with its document's name, version, page (for formats with pages) and
  score, wrapped to the terminal's width. Several words are searched for together.
  --mode    hybrid (keyword and semantic rankings combined; the default), semantic or keyword
  --limit   passages to print, 1–100 (default 10)
  --filter  the API's search filters as a JSON object: document_ids, metadata, mime_types,
            created_after, created_before, e.g. '{"metadata":{"team":"docs"}}'
  --as-of   search the knowledge base as it was served at an instant (ISO 8601, e.g. 2026-01-31T12:00:00Z)
  --url     the service (default KB_API_URL)
  --key     an API key with search permission (default KB_API_KEY, else KB_KEY)
  --json    print the service's JSON answer exactly as it came`,
    load: async () => (await import('./search.command.ts')).searchCommand,
  },
  tokens: {
    summary: 'Mint a scoped token for an end user (reads and searches only what its rules let through)',
    usage: `kb tokens create --expires-in <seconds> [--permissions read,search] [--filter '{"metadata":{"customer":"acme"}}'] [--sources <name>,…] [--url http://127.0.0.1:8080] [--key ink_…] [--json]

  Prints the token alone on stdout (what it carries on stderr): hand it to the end user's client, which
  sends it as Authorization: Bearer <token>. It expires, dies with the key, never writes.
  --expires-in   lifetime in seconds (required; at most the service's KB_TOKEN_MAX_TTL_S)
  --permissions  read, search or both (default: those of the key's)
  --filter       the rules in the search filter language: document_ids, metadata, mime_types,
                 created_after, created_before
  --sources      source names a visible document must come from
  --url          the service (default KB_API_URL)
  --key          an API key with read or search permission (default KB_API_KEY, else KB_KEY)
  --json         print the service's JSON answer exactly as it came`,
    load: async () => (await import('./tokens.command.ts')).tokensCommand,
  },
  sources: {
    summary: 'Add, list, sync and remove sources of synchronisation (folders kept in sync)',
    usage: `kb sources add <name> --kind folder --path <dir> [--include <glob>]... [--exclude <glob>]... [--metadata '{"k":"v"}'] [--schedule PT15M] [--json]
kb sources list [--json]
kb sources show <name> [--json]
kb sources sync <name> [--wait] [--allow-mass-delete] [--json]
kb sources runs <name> [--limit 20] [--json]
kb sources remove <name> [--delete-documents] [--json]

  <name>               a source's name or id
  --url                the service (default KB_API_URL)
  --key                an API key (default KB_API_KEY, else KB_KEY); write permission to add, sync and remove
  --wait               follow the run until it ends, showing its counts; exit 1 when it failed
  --allow-mass-delete  let this run delete more than KB_SOURCE_MAX_DELETE_FRACTION of the documents
  --delete-documents   also delete (not purge) the documents of the source
  --json               print the answer as JSON`,
    load: async () => (await import('./sources.command.ts')).sourcesCommand,
  },
  webhooks: {
    summary: 'Add, list and remove webhook endpoints; show their deliveries',
    usage: `kb webhooks add <receiver-url> [--events document.version.completed,…|*] [--description text] [--json]
kb webhooks list [--json]
kb webhooks remove <webhook-id> [--json]
kb webhooks deliveries <webhook-id> [--limit 50] [--json]

  --url          the service (default KB_API_URL)
  --key          an API key with write permission (default KB_API_KEY, else KB_KEY)
  --events       event types to receive, comma-separated (default: *, every type)
  --json         print JSON instead of text`,
    load: async () => (await import('./webhooks.command.ts')).webhooksCommand,
  },
  schemas: {
    summary: 'Register the Avro event schemas and create the topics',
    usage: `kb schemas register [--json]`,
    load: async () => (await import('./maintenance.command.ts')).schemasCommand,
  },
  reindex: {
    summary: 'Re-embed every stored chunk with the configured embedding model',
    usage: `kb reindex [--force] [--json]

  Moves the index to the configured model: every stored chunk gets a vector of it, from the vector
  cache when that text was embedded by this model before, else embedded now. On an index already on
  the configured model it only fills in what is missing.
  --force  embed every chunk again with the model, ignoring the vector cache (and replacing it)
  --json   print the report as one JSON object`,
    load: async () => (await import('./maintenance.command.ts')).reindexCommand,
  },
  backup: {
    summary: 'Back up the whole knowledge base while it serves, or verify a backup',
    usage: `kb backup <folder|s3://bucket/prefix> [--json]
kb backup verify <folder|s3://bucket/prefix> [--json]

  Writes a consistent backup of documents, every version with its file, chunks with their vectors,
  accounts, API keys (hashed), audit log, sources and webhooks. A later backup to the same place
  copies only what changed. verify checks every file against the manifest's checksums and
  restores nothing (exit status 1 when a file is missing or damaged).
  --json  print the backup's manifest summary as one JSON object`,
    load: async () => (await import('./backup.command.ts')).backupCommand,
  },
  restore: {
    summary: 'Restore a backup into an empty data directory or empty engines',
    usage: `kb restore <folder|s3://bucket/prefix> [--force] [--json]

  Restores the latest backup at the location onto the configured runtime (KB_RUNTIME), embedded
  or distributed, whichever runtime took it. Nothing is embedded again. A damaged or incomplete
  backup is refused before anything is written.
  --force  restore into a target that already holds data (records of the same ids are replaced)
  --json   print the restored backup's summary as one JSON object`,
    load: async () => (await import('./backup.command.ts')).restoreCommand,
  },
  retention: {
    summary: "Archive versions older than the workspace plan's retention",
    usage: `kb retention run [--json]`,
    load: async () => (await import('./maintenance.command.ts')).retentionCommand,
  },
  config: {
    summary: 'Print every configuration variable with its default and meaning',
    usage: `kb config [--markdown | --json]`,
    load: async () => (await import('./config.command.ts')).configCommand,
  },
  models: {
    summary: 'Fetch the configured embedding model into the model folder (once; then offline)',
    usage: `kb models fetch [--if-possible] [--json]

  fetch          download, verify (sha256) and lay out the configured model if it is missing
  --if-possible  exit 0 with a hint instead of failing when it cannot be fetched (for npm install)
  --json         print the outcome as one JSON object (provider, model, outcome, path, message)`,
    load: async () => (await import('./models.command.ts')).modelsCommand,
  },
  mcp: {
    summary: 'Serve the MCP tools (search, documents, versions) over stdio for assistants',
    usage: `kb mcp [--key ink_…]

  Speaks the Model Context Protocol on stdin/stdout: tools search, get_document, get_chunks,
  list_documents, list_versions and compare_versions, acting as one API key.
  --key  the API key whose workspace and permissions the tools use (default KB_API_KEY, else KB_KEY)`,
    load: async () => (await import('./mcp.command.ts')).mcpCommand,
  },
};
