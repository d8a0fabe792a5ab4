#!/usr/bin/env node
// The `kb` command: runs the TypeScript sources through tsx's loader.
import { register } from 'tsx/esm/api';

register();
await import('../apps/cli/kb.ts');
