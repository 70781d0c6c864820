from enum import StrEnum

class QueueOptionsBodyDeduplicationScope(StrEnum):
    MESSAGEGROUP = "messageGroup"
    QUEUE = "queue"

    def __str__(self) -> str:
        return str(self.value)
