from enum import StrEnum

class QueueBodyDeduplicationScope(StrEnum):
    MESSAGEGROUP = "messageGroup"
    QUEUE = "queue"

    def __str__(self) -> str:
        return str(self.value)
