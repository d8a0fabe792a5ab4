import { describe, expect, it } from 'vitest';
import type { AccessScope } from '../../../core/model/access-scope.model.ts';
import { matchesFilters, narrowFilters, versionVisible } from '../../../core/services/access-rules.ts';

const facts = {
  documentId: 'd1',
  source: 'crm',
  documentCreatedAt: '2026-03-01T00:00:00.000Z',
  mimeType: 'text/markdown',
  metadata: { customer: ['acme', 'shared'], tier: 2, public: true },
};

const scope = (filters: AccessScope['filters'], sources: string[] | null = null): AccessScope => ({
  tokenId: 't',
  parentKeyId: 'k',
  permissions: ['search'],
  filters,
  sources,
  expiresAt: '2030-01-01T00:00:00.000Z',
});

describe('versionVisible', () => {
  it('lets a version through only when it matches every rule, type-exactly', () => {
    expect(versionVisible(undefined, facts)).toBe(true);
    expect(versionVisible(scope({ metadata: { customer: ['acme'] } }), facts)).toBe(true);
    expect(versionVisible(scope({ metadata: { customer: ['globex'] } }), facts)).toBe(false);
    expect(versionVisible(scope({ metadata: { tier: [2] } }), facts)).toBe(true);
    expect(versionVisible(scope({ metadata: { tier: ['2'] } }), facts)).toBe(false);
    expect(versionVisible(scope({ metadata: { public: [true] } }), facts)).toBe(true);
    expect(versionVisible(scope({ metadata: { missing: ['x'] } }), facts)).toBe(false);
    expect(versionVisible(scope({ documentIds: ['d2'] }), facts)).toBe(false);
    expect(versionVisible(scope({ mimeTypes: ['application/pdf'] }), facts)).toBe(false);
    expect(versionVisible(scope({}, ['crm']), facts)).toBe(true);
    expect(versionVisible(scope({}, ['upload']), facts)).toBe(false);
    // A deleted document's source is unknown: a scope naming sources hides it.
    expect(versionVisible(scope({}, ['crm']), { ...facts, source: null })).toBe(false);
  });

  it('reads created_after as inclusive and created_before as exclusive', () => {
    expect(matchesFilters({ createdAfter: '2026-03-01T00:00:00Z' }, facts)).toBe(true);
    expect(matchesFilters({ createdBefore: '2026-03-01T00:00:00Z' }, facts)).toBe(false);
    expect(matchesFilters({ createdBefore: '2026-03-01T01:00:00+01:00' }, facts)).toBe(false);
    expect(matchesFilters({ createdBefore: '2026-03-01T00:00:01Z' }, facts)).toBe(true);
  });
});

describe('narrowFilters', () => {
  it("keeps what both allow: a request narrows the scope's filters, never widens them", () => {
    expect(narrowFilters({ metadata: { customer: ['acme'] } }, {})).toEqual({ metadata: { customer: ['acme'] } });
    expect(narrowFilters({ metadata: { customer: ['acme'] } }, { metadata: { customer: ['acme', 'globex'] } })).toEqual(
      { metadata: { customer: ['acme'] } },
    );
    expect(narrowFilters({ metadata: { customer: ['acme'] } }, { metadata: { status: ['published'] } })).toEqual({
      metadata: { customer: ['acme'], status: ['published'] },
    });
    expect(narrowFilters({ documentIds: ['a', 'b'] }, { documentIds: ['b', 'c'] })).toEqual({ documentIds: ['b'] });
    expect(
      narrowFilters(
        { createdAfter: '2026-01-01T00:00:00Z', createdBefore: '2026-06-01T00:00:00Z' },
        { createdAfter: '2025-01-01T00:00:00Z', createdBefore: '2026-03-01T00:00:00Z' },
      ),
    ).toEqual({ createdAfter: '2026-01-01T00:00:00Z', createdBefore: '2026-03-01T00:00:00Z' });
    // An empty list in a request means "any" in the filter language: it cannot lift the scope's list.
    expect(narrowFilters({ mimeTypes: ['text/plain'] }, { mimeTypes: [] })).toEqual({ mimeTypes: ['text/plain'] });
  });

  it('answers null when nothing can match both (never an empty list, which would mean any)', () => {
    expect(narrowFilters({ metadata: { customer: ['acme'] } }, { metadata: { customer: ['globex'] } })).toBeNull();
    expect(narrowFilters({ metadata: { tier: [2] } }, { metadata: { tier: ['2'] } })).toBeNull();
    expect(narrowFilters({ documentIds: ['a'] }, { documentIds: ['b'] })).toBeNull();
    expect(
      narrowFilters({ createdBefore: '2026-01-01T00:00:00Z' }, { createdAfter: '2026-02-01T00:00:00Z' }),
    ).toBeNull();
  });
});
