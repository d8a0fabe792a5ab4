/**
 * Kafka's murmur2 hash (the Java client's `Utils.murmur2`, also kafkajs's default partitioner)
 * of the key's UTF-8 bytes, as a signed 32-bit integer.
 */
export function murmur2(key: string): number {
  const data = Buffer.from(key, 'utf8');
  const m = 0x5bd1e995;
  const length = data.length;
  let h = (0x9747b28c ^ length) | 0;
  const blocks = length >>> 2;
  for (let i = 0; i < blocks; i++) {
    let k = data.readInt32LE(i * 4);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m);
    h ^= k;
  }
  const tail = length & ~3;
  const rest = length % 4;
  if (rest === 3) h ^= (data[tail + 2] ?? 0) << 16;
  if (rest >= 2) h ^= (data[tail + 1] ?? 0) << 8;
  if (rest >= 1) {
    h ^= data[tail] ?? 0;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}

/** The partition of `key` among `partitions`, as Kafka's default partitioner computes it. */
export function partitionForKey(key: string, partitions: number): number {
  return (murmur2(key) & 0x7fffffff) % partitions;
}
