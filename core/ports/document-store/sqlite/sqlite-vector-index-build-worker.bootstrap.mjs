// Entry file of the thread that builds a large vector index: a worker thread does not inherit the
// parent's module hooks, so it registers tsx itself, then loads the TypeScript worker.
import { register } from 'tsx/esm/api';

register();

await import('./sqlite-vector-index-build.worker.ts');
