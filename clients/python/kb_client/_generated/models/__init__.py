"""Contains all the data models used in inputs/outputs"""

from .added_chunk import AddedChunk
from .added_chunk_type import AddedChunkType
from .audit_actor import AuditActor
from .audit_actor_type import AuditActorType
from .audit_entry import AuditEntry
from .audit_log import AuditLog
from .audit_snapshot import AuditSnapshot
from .check_status import CheckStatus
from .chunk import Chunk
from .chunk_list import ChunkList
from .chunk_window import ChunkWindow
from .document import Document
from .document_list import DocumentList
from .document_list_item import DocumentListItem
from .document_page import DocumentPage
from .document_stats import DocumentStats
from .document_text import DocumentText
from .field_error import FieldError
from .health_check import HealthCheck
from .ingest_error import IngestError
from .ingest_progress import IngestProgress
from .ingest_progress_stage import IngestProgressStage
from .list_audit_logs_action import ListAuditLogsAction
from .list_audit_logs_order import ListAuditLogsOrder
from .liveness import Liveness
from .liveness_status import LivenessStatus
from .metadata import Metadata
from .metadata_update import MetadataUpdate
from .metadata_update_metadata import MetadataUpdateMetadata
from .modified_chunk import ModifiedChunk
from .modified_chunk_type import ModifiedChunkType
from .pagination import Pagination
from .problem import Problem
from .problem_error import ProblemError
from .readiness import Readiness
from .readiness_checks import ReadinessChecks
from .removed_chunk import RemovedChunk
from .removed_chunk_type import RemovedChunkType
from .replace_form import ReplaceForm
from .replace_form_metadata import ReplaceFormMetadata
from .rollback_request import RollbackRequest
from .rollback_result import RollbackResult
from .search_filters import SearchFilters
from .search_filters_metadata import SearchFiltersMetadata
from .search_request import SearchRequest
from .search_request_group_by import SearchRequestGroupBy
from .search_request_mode import SearchRequestMode
from .search_response import SearchResponse
from .search_response_mode import SearchResponseMode
from .search_result import SearchResult
from .search_weights import SearchWeights
from .upload_form import UploadForm
from .upload_form_metadata import UploadFormMetadata
from .upload_result import UploadResult
from .upload_result_status import UploadResultStatus
from .version import Version
from .version_changes import VersionChanges
from .version_comparison import VersionComparison
from .version_detail import VersionDetail
from .version_list import VersionList
from .version_status import VersionStatus

__all__ = (
    "AddedChunk",
    "AddedChunkType",
    "AuditActor",
    "AuditActorType",
    "AuditEntry",
    "AuditLog",
    "AuditSnapshot",
    "CheckStatus",
    "Chunk",
    "ChunkList",
    "ChunkWindow",
    "Document",
    "DocumentList",
    "DocumentListItem",
    "DocumentPage",
    "DocumentStats",
    "DocumentText",
    "FieldError",
    "HealthCheck",
    "IngestError",
    "IngestProgress",
    "IngestProgressStage",
    "ListAuditLogsAction",
    "ListAuditLogsOrder",
    "Liveness",
    "LivenessStatus",
    "Metadata",
    "MetadataUpdate",
    "MetadataUpdateMetadata",
    "ModifiedChunk",
    "ModifiedChunkType",
    "Pagination",
    "Problem",
    "ProblemError",
    "Readiness",
    "ReadinessChecks",
    "RemovedChunk",
    "RemovedChunkType",
    "ReplaceForm",
    "ReplaceFormMetadata",
    "RollbackRequest",
    "RollbackResult",
    "SearchFilters",
    "SearchFiltersMetadata",
    "SearchRequest",
    "SearchRequestGroupBy",
    "SearchRequestMode",
    "SearchResponse",
    "SearchResponseMode",
    "SearchResult",
    "SearchWeights",
    "UploadForm",
    "UploadFormMetadata",
    "UploadResult",
    "UploadResultStatus",
    "Version",
    "VersionChanges",
    "VersionComparison",
    "VersionDetail",
    "VersionList",
    "VersionStatus",
)
