import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, loadConfig } from '../../pipeline/config/config.ts';

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

  it('requires the engine URLs in the distributed runtime', () => {
    expect(() => loadConfig({ KB_RUNTIME: 'distributed' })).toThrow(/KB_OPENSEARCH_URL is required/);
  });

  it('requires a Cohere key for the cohere provider', () => {
    expect(() => loadConfig({ KB_EMBEDDING_PROVIDER: 'cohere' })).toThrow(/KB_COHERE_API_KEY/);
  });

  it('documents every variable it reads', () => {
    for (const v of CONFIG_VARIABLES) expect(v.description.length).toBeGreaterThan(8);
    expect(new Set(CONFIG_VARIABLES.map((v) => v.name)).size).toBe(CONFIG_VARIABLES.length);
  });
});
