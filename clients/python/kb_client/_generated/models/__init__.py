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
from .create_source_request import CreateSourceRequest
from .create_source_request_kind import CreateSourceRequestKind
from .create_source_request_metadata import CreateSourceRequestMetadata
from .create_webhook_request import CreateWebhookRequest
from .create_webhook_request_events_item import CreateWebhookRequestEventsItem
from .dead_letter import DeadLetter
from .dead_letter_count import DeadLetterCount
from .dead_letter_count_stage import DeadLetterCountStage
from .dead_letter_list import DeadLetterList
from .dead_letter_replay_record import DeadLetterReplayRecord
from .dead_letter_replay_record_outcome import DeadLetterReplayRecordOutcome
from .dead_letter_replay_request import DeadLetterReplayRequest
from .dead_letter_replay_request_stage import DeadLetterReplayRequestStage
from .dead_letter_replay_result import DeadLetterReplayResult
from .dead_letter_source import DeadLetterSource
from .dead_letter_stage import DeadLetterStage
from .document import Document
from .document_list import DocumentList
from .document_list_item import DocumentListItem
from .document_lookup import DocumentLookup
from .document_lookup_match import DocumentLookupMatch
from .document_lookup_result import DocumentLookupResult
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
from .list_dead_letters_stage import ListDeadLettersStage
from .list_dead_letters_state import ListDeadLettersState
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
from .scoped_token import ScopedToken
from .scoped_token_permissions_item import ScopedTokenPermissionsItem
from .scoped_token_token_type import ScopedTokenTokenType
from .search_filters import SearchFilters
from .search_filters_metadata import SearchFiltersMetadata
from .search_request import SearchRequest
from .search_request_group_by import SearchRequestGroupBy
from .search_request_mode import SearchRequestMode
from .search_response import SearchResponse
from .search_response_mode import SearchResponseMode
from .search_result import SearchResult
from .search_weights import SearchWeights
from .source import Source
from .source_credentials import SourceCredentials
from .source_item_key import SourceItemKey
from .source_kind import SourceKind
from .source_list import SourceList
from .source_metadata import SourceMetadata
from .source_run import SourceRun
from .source_run_counts import SourceRunCounts
from .source_run_errors_item import SourceRunErrorsItem
from .source_run_list import SourceRunList
from .source_run_status import SourceRunStatus
from .source_status import SourceStatus
from .sync_started import SyncStarted
from .sync_started_status import SyncStartedStatus
from .token_request import TokenRequest
from .token_request_permissions_item import TokenRequestPermissionsItem
from .update_source_request import UpdateSourceRequest
from .update_source_request_metadata import UpdateSourceRequestMetadata
from .update_webhook_request import UpdateWebhookRequest
from .update_webhook_request_events_item import UpdateWebhookRequestEventsItem
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
from .webhook_delivery import WebhookDelivery
from .webhook_delivery_attempt_log_item import WebhookDeliveryAttemptLogItem
from .webhook_delivery_list import WebhookDeliveryList
from .webhook_delivery_status import WebhookDeliveryStatus
from .webhook_endpoint import WebhookEndpoint
from .webhook_list import WebhookList

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
    "CreateSourceRequest",
    "CreateSourceRequestKind",
    "CreateSourceRequestMetadata",
    "CreateWebhookRequest",
    "CreateWebhookRequestEventsItem",
    "DeadLetter",
    "DeadLetterCount",
    "DeadLetterCountStage",
    "DeadLetterList",
    "DeadLetterReplayRecord",
    "DeadLetterReplayRecordOutcome",
    "DeadLetterReplayRequest",
    "DeadLetterReplayRequestStage",
    "DeadLetterReplayResult",
    "DeadLetterSource",
    "DeadLetterStage",
    "Document",
    "DocumentList",
    "DocumentListItem",
    "DocumentLookup",
    "DocumentLookupMatch",
    "DocumentLookupResult",
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
    "ListDeadLettersStage",
    "ListDeadLettersState",
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
    "ScopedToken",
    "ScopedTokenPermissionsItem",
    "ScopedTokenTokenType",
    "SearchFilters",
    "SearchFiltersMetadata",
    "SearchRequest",
    "SearchRequestGroupBy",
    "SearchRequestMode",
    "SearchResponse",
    "SearchResponseMode",
    "SearchResult",
    "SearchWeights",
    "Source",
    "SourceCredentials",
    "SourceItemKey",
    "SourceKind",
    "SourceList",
    "SourceMetadata",
    "SourceRun",
    "SourceRunCounts",
    "SourceRunErrorsItem",
    "SourceRunList",
    "SourceRunStatus",
    "SourceStatus",
    "SyncStarted",
    "SyncStartedStatus",
    "TokenRequest",
    "TokenRequestPermissionsItem",
    "UpdateSourceRequest",
    "UpdateSourceRequestMetadata",
    "UpdateWebhookRequest",
    "UpdateWebhookRequestEventsItem",
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
    "WebhookDelivery",
    "WebhookDeliveryAttemptLogItem",
    "WebhookDeliveryList",
    "WebhookDeliveryStatus",
    "WebhookEndpoint",
    "WebhookList",
)
