import type { ChunkerOptions, ChunkingResult } from '../chunking/chunker.ts';
import type { ParsedDocument } from '../parsing/parsed-document.ts';

/** Parses a file's bytes and chunks parsed text; runs in a worker pool with a timeout and memory limits. */
export interface Parser {
  parse(input: { bytes: Buffer; mimeType: string; filename?: string }): Promise<ParsedDocument>;
  /** Chunks off the event loop; `content-too-large` past `options.maxChunks`. */
  chunk(document: ParsedDocument, options: ChunkerOptions): Promise<ChunkingResult>;
}
