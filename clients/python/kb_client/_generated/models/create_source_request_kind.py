from enum import StrEnum


class CreateSourceRequestKind(StrEnum):
    FOLDER = "folder"
    S3 = "s3"
    WEB = "web"

    def __str__(self) -> str:
        return str(self.value)
