from enum import StrEnum


class UpdateWebhookRequestEventsItem(StrEnum):
    DOCUMENT_DELETED = "document.deleted"
    DOCUMENT_PURGED = "document.purged"
    DOCUMENT_VERSION_COMPLETED = "document.version.completed"
    DOCUMENT_VERSION_FAILED = "document.version.failed"
    SOURCE_SYNC_COMPLETED = "source.sync.completed"
    SOURCE_SYNC_FAILED = "source.sync.failed"
    VALUE_6 = "*"

    def __str__(self) -> str:
        return str(self.value)
