import { describe } from 'vitest';
import { chunksAspect } from './document-store/chunks.aspect.ts';
import { type ContractContext, type DocumentStoreHarness, useContractStore } from './document-store/context.ts';
import { deletionAspect } from './document-store/deletion.aspect.ts';
import { documentsAspect } from './document-store/documents.aspect.ts';
import { MODEL } from './document-store/fixtures.ts';
import { indexModelAspect } from './document-store/index-model.aspect.ts';
import { keywordSearchAspect } from './document-store/keyword-search.aspect.ts';
import { notificationOutboxAspect } from './document-store/notification-outbox.aspect.ts';
import { pendingVersionsAspect } from './document-store/pending-versions.aspect.ts';
import { recordedWritesAspect } from './document-store/recorded-writes.aspect.ts';
import { retentionAspect } from './document-store/retention.aspect.ts';
import { servedSetAspect } from './document-store/served-set.aspect.ts';
import { sourceItemsAspect } from './document-store/source-items.aspect.ts';
import { transferAspect } from './document-store/transfer.aspect.ts';
import { vectorCacheAspect } from './document-store/vector-cache.aspect.ts';
import { vectorSearchAspect } from './document-store/vector-search.aspect.ts';
import { versionsAspect } from './document-store/versions.aspect.ts';

export type { ContractContext, DocumentStoreHarness };

export interface DocumentStoreContractOptions {
  /**
   * Tests of one adapter only, registered in the main group after the shared aspects. They get
   * the group's context (its store is open, with the contract's index model, inside tests and
   * hooks) and may also open stores of their own.
   */
  readonly additionalTests?: (suite: ContractContext) => void;
}

/**
 * The `DocumentStore` contract, run against one adapter: one aspect per file under
 * `document-store/`, composed here.
 *
 * `make` is called once per group of tests (twice in all) and must return a store over storage
 * of its own (a fresh file, a fresh index name): the index-model group asserts an empty index
 * and replaces the model. Within the main group every test uses random workspace and document
 * ids, so tests never see each other's data. Scores are compared only by order, except vector
 * scores, which the port fixes as cosine similarity.
 */
export function describeDocumentStoreContract(
  name: string,
  make: () => Promise<DocumentStoreHarness>,
  options: DocumentStoreContractOptions = {},
): void {
  describe(`DocumentStore contract: ${name}`, () => {
    const context = useContractStore(make, { indexModel: MODEL });
    documentsAspect(context);
    versionsAspect(context);
    chunksAspect(context);
    vectorCacheAspect(context);
    keywordSearchAspect(context);
    servedSetAspect(context);
    vectorSearchAspect(context);
    deletionAspect(context);
    retentionAspect(context);
    pendingVersionsAspect(context);
    recordedWritesAspect(context);
    notificationOutboxAspect(context);
    sourceItemsAspect(context);
    transferAspect(context);
    options.additionalTests?.(context);
  });

  describe(`DocumentStore contract: ${name} (index model)`, () => {
    indexModelAspect(useContractStore(make, { indexModel: null }));
  });
}
