from enum import StrEnum


class AuditActorType(StrEnum):
    API_KEY = "api_key"
    SOURCE = "source"
    USER = "user"

    def __str__(self) -> str:
        return str(self.value)
