from enum import StrEnum

class QueueBodyFifoThroughputLimit(StrEnum):
    PERMESSAGEGROUPID = "perMessageGroupId"
    PERQUEUE = "perQueue"

    def __str__(self) -> str:
        return str(self.value)
