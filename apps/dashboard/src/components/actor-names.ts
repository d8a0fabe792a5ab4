import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { shortId } from '../format.ts';
import type { Account, ApiKey } from '../types.ts';

/**
 * Names for the ids that author versions and audit entries: this account is "you", a key of the
 * workspace is "key <name>", anything else (another account) a shortened id.
 */
export function useActorNames(account: Account): (id: string) => string {
  const [keys, setKeys] = useState<Map<string, string>>(new Map());
  useEffect(() => {
    api<{ keys: ApiKey[] }>('GET', '/dashboard/api/keys').then(
      (r) => setKeys(new Map(r.keys.map((k) => [k.id, k.name]))),
      () => setKeys(new Map()),
    );
  }, []);
  return (id: string) => {
    if (id === account.id) return `you (${account.email})`;
    const key = keys.get(id);
    return key ? `key “${key}”` : shortId(id);
  };
}
