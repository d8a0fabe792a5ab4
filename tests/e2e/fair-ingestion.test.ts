import { describeFairIngestion } from '../support/fair-ingestion.ts';

/** Fair scheduling, progress and cancellation on the embedded runtime (SQLite log, files, SQLite stores). */
describeFairIngestion(() => ({}), 15_000);
