from enum import StrEnum

class QueueOptionsBodyFifoThroughputLimit(StrEnum):
    PERMESSAGEGROUPID = "perMessageGroupId"
    PERQUEUE = "perQueue"

    def __str__(self) -> str:
        return str(self.value)
