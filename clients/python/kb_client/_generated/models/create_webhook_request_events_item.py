from enum import StrEnum


class CreateWebhookRequestEventsItem(StrEnum):
    DOCUMENT_DELETED = "document.deleted"
    DOCUMENT_PURGED = "document.purged"
    DOCUMENT_VERSION_COMPLETED = "document.version.completed"
    DOCUMENT_VERSION_FAILED = "document.version.failed"
    VALUE_4 = "*"

    def __str__(self) -> str:
        return str(self.value)
