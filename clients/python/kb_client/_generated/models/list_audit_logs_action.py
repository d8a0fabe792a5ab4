from enum import StrEnum


class ListAuditLogsAction(StrEnum):
    CREATE = "create"
    DELETE = "delete"
    KEY_CREATE = "key_create"
    KEY_REVOKE = "key_revoke"
    PURGE = "purge"
    ROLLBACK = "rollback"
    UPDATE = "update"

    def __str__(self) -> str:
        return str(self.value)
