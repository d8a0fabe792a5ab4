import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, loadConfig } from '../../core/config/config.ts';

describe('configuration', () => {
  it('defaults to the embedded runtime on 127.0.0.1:8080 with data in ./data', () => {
    const config = loadConfig({});
    expect(config.runtime).toBe('embedded');
    expect(config.host).toBe('127.0.0.1');
    expect(config.port).toBe(8080);
    expect(config.dataDir.endsWith('/data')).toBe(true);
    expect(config.maxUploadBytes).toBe(52428800);
    expect(config.chunking).toEqual({ chunkTokens: 512, overlapTokens: 64, maxChunks: 20000 });
  });

  it('lists every invalid variable in one error', () => {
    let message = '';
    try {
      loadConfig({ PORT: 'eighty', KB_RUNTIME: 'cloud', KB_OCR: 'maybe' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('PORT: "eighty" is not an integer');
    expect(message).toContain('KB_RUNTIME: "cloud" is not one of embedded, distributed');
    expect(message).toContain('KB_OCR: "maybe" is not a boolean');
  });

  it('reads folder roots per workspace and refuses a malformed entry', () => {
    const config = loadConfig({
      KB_SOURCE_FOLDER_ROOTS: 'team-a=/srv/a:*=/srv/shared',
      KB_SOURCE_ITEM_TIMEOUT_MS: '5000',
    });
    expect(config.sources.folderRoots).toEqual([
      { workspace: 'team-a', path: '/srv/a' },
      { workspace: '*', path: '/srv/shared' },
    ]);
    expect(config.sources.itemTimeoutMs).toBe(5000);
    expect(loadConfig({}).sources.itemTimeoutMs).toBe(120_000);
    expect(() => loadConfig({ KB_SOURCE_FOLDER_ROOTS: 'team/a=/srv/a' })).toThrow(/KB_SOURCE_FOLDER_ROOTS/);
  });

  it('requires the engine URLs in the distributed runtime', () => {
    expect(() => loadConfig({ KB_RUNTIME: 'distributed' })).toThrow(/KB_OPENSEARCH_URL is required/);
  });

  it('reports an invalid configuration as a configuration error, not a bad request', () => {
    expect(() => loadConfig({ KB_RUNTIME: 'distributed' })).toThrow(
      expect.objectContaining({ code: 'config-invalid', retriable: false }),
    );
    expect(() => loadConfig({ PORT: '70000' })).toThrow(expect.objectContaining({ code: 'config-invalid' }));
  });

  it('names every engine URL the distributed runtime lacks, and returns them set once given', () => {
    let message = '';
    try {
      loadConfig({ KB_RUNTIME: 'distributed', KB_S3_ENDPOINT: 'http://127.0.0.1:9000' });
    } catch (error) {
      message = (error as Error).message;
    }
    for (const name of ['KB_SCHEMA_REGISTRY_URL', 'KB_OPENSEARCH_URL', 'KB_CLICKHOUSE_URL']) {
      expect(message).toContain(`${name} is required when KB_RUNTIME=distributed`);
    }
    expect(message).not.toContain('KB_S3_ENDPOINT');

    const config = loadConfig({
      KB_RUNTIME: 'distributed',
      KB_SCHEMA_REGISTRY_URL: 'http://127.0.0.1:8081/',
      KB_S3_ENDPOINT: 'http://127.0.0.1:9000',
      KB_OPENSEARCH_URL: 'http://127.0.0.1:9200',
      KB_CLICKHOUSE_URL: 'http://127.0.0.1:8123',
    });
    if (config.runtime !== 'distributed') throw new Error('expected the distributed runtime');
    expect(config.schemaRegistryUrl).toBe('http://127.0.0.1:8081');
    expect([config.s3.endpoint, config.opensearch.url, config.clickhouse.url]).toEqual([
      'http://127.0.0.1:9000',
      'http://127.0.0.1:9200',
      'http://127.0.0.1:8123',
    ]);
  });

  it('requires a Cohere key for the cohere provider', () => {
    expect(() => loadConfig({ KB_EMBEDDING_PROVIDER: 'cohere' })).toThrow(/KB_COHERE_API_KEY/);
  });

  it('requires the URL and the model of the openai provider, and reads its settings', () => {
    expect(() => loadConfig({ KB_EMBEDDING_PROVIDER: 'openai' })).toThrow(
      /KB_EMBEDDING_URL is required when KB_EMBEDDING_PROVIDER=openai\n {2}- KB_EMBEDDING_MODEL is required/,
    );
    const config = loadConfig({
      KB_EMBEDDING_PROVIDER: 'openai',
      KB_EMBEDDING_URL: 'http://tei.internal:8080/v1/',
      KB_EMBEDDING_MODEL: 'BAAI/bge-small-en-v1.5',
      KB_EMBEDDING_DIMENSIONS: '384',
    });
    expect(config.embedding).toMatchObject({
      url: 'http://tei.internal:8080/v1',
      model: 'BAAI/bge-small-en-v1.5',
      apiKey: null,
      dimensions: 384,
      timeoutMs: 60_000,
    });
    expect(loadConfig({}).embedding.dimensions).toBeNull();
  });

  it('takes the key of kb ingest from KB_API_KEY, else from KB_KEY (the name the service prints)', () => {
    expect(loadConfig({ KB_KEY: 'ink_a' }).client.apiKey).toBe('ink_a');
    expect(loadConfig({ KB_KEY: 'ink_a', KB_API_KEY: 'ink_b' }).client.apiKey).toBe('ink_b');
    expect(loadConfig({}).client.apiKey).toBeNull();
  });

  it('documents every variable it reads', () => {
    for (const v of CONFIG_VARIABLES) expect(v.description.length).toBeGreaterThan(8);
    expect(new Set(CONFIG_VARIABLES.map((v) => v.name)).size).toBe(CONFIG_VARIABLES.length);
  });
});
