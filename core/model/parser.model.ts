import type { ChunkerOptions, ChunkingResult } from '../chunking/chunker.ts';
import type { ParsedDocument } from '../parsing/parsed-document.ts';

/** Parses a file's bytes and chunks parsed text; runs in a worker pool with a timeout and memory limits. */
/**
 * Parsing and chunking off the event loop. `share` names whom the work is for (the workspace):
 * callers waiting for a free thread take turns by share, so one workspace's large files do not
 * queue another's behind them.
 */
export interface Parser {
  parse(input: { bytes: Buffer; mimeType: string; filename?: string; share?: string }): Promise<ParsedDocument>;
  /** Chunks off the event loop; `content-too-large` past `options.maxChunks`. */
  chunk(document: ParsedDocument, options: ChunkerOptions, share?: string): Promise<ChunkingResult>;
}
