from enum import StrEnum


class UploadResultStatus(StrEnum):
    PENDING = "pending"

    def __str__(self) -> str:
        return str(self.value)
