from enum import StrEnum


class LivenessStatus(StrEnum):
    HEALTHY = "healthy"

    def __str__(self) -> str:
        return str(self.value)
