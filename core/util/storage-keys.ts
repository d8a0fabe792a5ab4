/**
 * Object-store keys. Built from identifiers only (never from client file names), grouped by
 * workspace, document and version so a purge is one prefix delete.
 */
export const storageKeys = {
  documentPrefix: (workspaceId: string, documentId: string) => `workspaces/${workspaceId}/documents/${documentId}/`,
  upload: (workspaceId: string, documentId: string, uploadId: string) =>
    `workspaces/${workspaceId}/documents/${documentId}/uploads/${uploadId}`,
  parsed: (workspaceId: string, documentId: string, version: number) =>
    `workspaces/${workspaceId}/documents/${documentId}/versions/${version}/parsed.json`,
  chunks: (workspaceId: string, documentId: string, version: number) =>
    `workspaces/${workspaceId}/documents/${documentId}/versions/${version}/chunks.json`,
};
