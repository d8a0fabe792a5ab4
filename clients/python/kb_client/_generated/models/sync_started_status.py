from enum import StrEnum


class SyncStartedStatus(StrEnum):
    RUNNING = "running"

    def __str__(self) -> str:
        return str(self.value)
