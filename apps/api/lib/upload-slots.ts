import { KbError } from '../../../core/errors/kb-error.ts';

/** Bounds the uploads one API key has in progress at once (in this process). */
export interface UploadSlots {
  /**
   * Takes a slot for `keyId` and returns its release (call it once, when the upload's request is
   * done); throws `rate-limit-exceeded` when the key already has `max` uploads in progress.
   */
  acquire(keyId: string): () => void;
}

export function createUploadSlots(max: number): UploadSlots {
  const inUse = new Map<string, number>();
  return {
    acquire(keyId) {
      const current = inUse.get(keyId) ?? 0;
      if (current >= max) {
        throw new KbError(
          'rate-limit-exceeded',
          `This API key already has ${current} uploads in progress; at most ${max} may run at once. Retry when one has finished.`,
          { retryAfter: 1 },
        );
      }
      inUse.set(keyId, current + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (inUse.get(keyId) ?? 1) - 1;
        if (left <= 0) inUse.delete(keyId);
        else inUse.set(keyId, left);
      };
    },
  };
}
