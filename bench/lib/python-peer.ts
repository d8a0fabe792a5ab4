import { execFile } from 'node:child_process';
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const BENCH_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** A virtual environment of the benchmark's own (git-ignored), made on first use. */
const VENV = path.join(BENCH_DIR, '.venv');
const SCRIPT = path.join(BENCH_DIR, 'peers', 'onnxruntime_embed.py');

/** The model the peer runs: the folder holding `tokenizer.json` and `onnx/model_quantized.onnx`. */
export interface PeerModel {
  readonly folder: string;
  readonly pooling: 'cls' | 'mean';
  readonly threads: number;
}

/**
 * Python's onnxruntime with the `tokenizers` package, in `bench/.venv` (created with `python3 -m venv`
 * and filled from PyPI the first time). Resolves the interpreter, or a reason it is unavailable.
 */
export async function pythonPeer(
  progress: (message: string) => void,
): Promise<{ python: string } | { unavailable: string }> {
  const python = path.join(VENV, 'bin', 'python');
  try {
    await access(python);
    await run(python, ['-c', 'import onnxruntime, tokenizers, numpy']);
    return { python };
  } catch {
    try {
      progress('python peer: creating bench/.venv with onnxruntime, tokenizers and numpy from PyPI');
      await run('python3', ['-m', 'venv', VENV]);
      await run(python, ['-m', 'pip', 'install', '-q', 'onnxruntime', 'tokenizers', 'numpy'], { timeout: 600_000 });
      return { python };
    } catch (error) {
      return { unavailable: `Python's onnxruntime could not be installed: ${String(error).split('\n')[0]}` };
    }
  }
}

/** Embeds `texts` one by one with the same ONNX file in Python; returns seconds. */
export async function embedInPython(python: string, model: PeerModel, texts: readonly string[]): Promise<number> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kb-bench-peer-'));
  try {
    const file = path.join(dir, 'texts.json');
    await writeFile(file, JSON.stringify(texts));
    const { stdout } = await run(python, [SCRIPT, model.folder, file, String(model.threads), model.pooling], {
      maxBuffer: 1024 * 1024,
      timeout: 3_600_000,
    });
    return (JSON.parse(stdout) as { seconds: number }).seconds;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
