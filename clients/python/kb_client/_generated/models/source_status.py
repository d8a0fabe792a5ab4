from enum import StrEnum


class SourceStatus(StrEnum):
    COMPLETED = "completed"
    FAILED = "failed"
    NEVER_SYNCED = "never_synced"
    RUNNING = "running"

    def __str__(self) -> str:
        return str(self.value)
