/** Default limits of the parsers, kept apart from the parsers so that reading them loads nothing heavy. */

/** PDF: most pages, most OCR'd pages, render width for OCR, "no text layer" threshold, image size. */
export const PDF_DEFAULTS = {
  maxPages: 2000,
  maxOcrPages: 50,
  ocrRenderWidth: 2000,
  minPageChars: 20,
  maxImagePixels: 40_000_000,
} as const;

/** XLSX: most rows over all sheets. */
export const DEFAULT_MAX_SHEET_ROWS = 200_000;

/**
 * XLSX: most entries of the shared-string table. SheetJS holds the whole table in memory, and a
 * table this large holds more text than a document may chunk into anyway.
 */
export const DEFAULT_MAX_SHARED_STRINGS = 200_000;
