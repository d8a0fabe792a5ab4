import os from 'node:os';
import path from 'node:path';
import { CONFIG_VARIABLES, type ConfigVariable, type VariableName } from './config-variables.ts';

/**
 * Typed readers of catalogued variables over one environment. A value that does not fit its
 * variable is recorded in `problems` (the caller reports them all at once) and the default is used.
 */
export interface EnvReaders {
  readonly str: (name: VariableName) => string;
  readonly opt: (name: VariableName) => string | null;
  readonly url: (name: VariableName) => string | null;
  readonly int: (name: VariableName) => number;
  readonly optInt: (name: VariableName) => number | null;
  readonly bool: (name: VariableName) => boolean;
  readonly oneOf: <T extends string>(name: VariableName) => T;
  readonly list: (name: VariableName) => string[];
}

/** Readers of `env`; an unset or empty variable reads as its catalogue default. */
export function createEnvReaders(env: Readonly<Record<string, string | undefined>>, problems: string[]): EnvReaders {
  const spec = new Map<string, ConfigVariable>(CONFIG_VARIABLES.map((c) => [c.name, c]));
  const raw = (name: VariableName): string => {
    const value = env[name];
    return value === undefined || value === '' ? (spec.get(name)?.default ?? '') : value.trim();
  };
  const str = (name: VariableName): string => raw(name);
  const opt = (name: VariableName): string | null => {
    const value = raw(name);
    return value === '' ? null : value;
  };
  const url = (name: VariableName): string | null => {
    const value = opt(name);
    if (value === null) return null;
    try {
      const parsed = new URL(value);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
      return value.replace(/\/+$/, '');
    } catch {
      problems.push(`${name}: "${value}" is not an http(s) URL`);
      return null;
    }
  };
  const int = (name: VariableName): number => {
    const c = spec.get(name) as ConfigVariable;
    const value = raw(name);
    const n = Number(value);
    if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(n)) {
      problems.push(`${name}: "${value}" is not an integer`);
      return Number(c.default);
    }
    if ((c.min !== undefined && n < c.min) || (c.max !== undefined && n > c.max)) {
      problems.push(`${name}: ${n} is outside ${c.min ?? '-∞'}..${c.max ?? '∞'}`);
      return Number(c.default);
    }
    return n;
  };
  const optInt = (name: VariableName): number | null => (raw(name) === '' ? null : int(name));
  const bool = (name: VariableName): boolean => {
    const value = raw(name).toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(value)) return true;
    if (['0', 'false', 'no', 'off'].includes(value)) return false;
    problems.push(`${name}: "${value}" is not a boolean (true/false)`);
    return false;
  };
  const oneOf = <T extends string>(name: VariableName): T => {
    const c = spec.get(name) as ConfigVariable;
    const value = raw(name);
    if (!c.values?.includes(value)) {
      problems.push(`${name}: "${value}" is not one of ${c.values?.join(', ')}`);
      return c.default as T;
    }
    return value as T;
  };
  const list = (name: VariableName): string[] =>
    raw(name)
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);

  return { str, opt, url, int, optInt, bool, oneOf, list };
}

/** The per-user model cache: `$XDG_CACHE_HOME/kb-document-service/models`, else under `~/.cache`. */
export function defaultModelCache(env: Readonly<Record<string, string | undefined>>): string {
  const cacheHome = env.XDG_CACHE_HOME?.trim() || path.join(env.HOME?.trim() || os.homedir(), '.cache');
  return path.join(cacheHome, 'kb-document-service', 'models');
}
