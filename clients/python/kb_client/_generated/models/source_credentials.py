from enum import StrEnum


class SourceCredentials(StrEnum):
    NONE = "none"
    STORED = "stored"

    def __str__(self) -> str:
        return str(self.value)
