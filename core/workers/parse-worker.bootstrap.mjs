// Entry file of the parse pool's threads: a worker thread does not inherit the parent's module
// hooks, so it registers tsx itself, then loads the TypeScript worker.
import { register } from 'tsx/esm/api';

register();

const worker = await import('./parse.worker.ts');

export default worker.default;
