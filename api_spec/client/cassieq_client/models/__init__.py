""" Contains all the data models used in inputs/outputs """

from .account_body import AccountBody
from .account_body_keys import AccountBodyKeys
from .ack_latency_body import AckLatencyBody
from .auth_error_body import AuthErrorBody
from .create_account_body_type_1 import CreateAccountBodyType1
from .errors_body import ErrorsBody
from .get_message_body import GetMessageBody
from .health import Health
from .key_create_request import KeyCreateRequest
from .level_body import LevelBody
from .message_debug_body import MessageDebugBody
from .monoton_body import MonotonBody
from .permission_body import PermissionBody
from .permission_request import PermissionRequest
from .pointers_body import PointersBody
from .pointers_body_stragglers import PointersBodyStragglers
from .purged_body import PurgedBody
from .queue_create_options import QueueCreateOptions
from .queue_definition_body import QueueDefinitionBody
from .redrive_request import RedriveRequest
from .redrive_started import RedriveStarted
from .redrive_status import RedriveStatus
from .resource_error_body import ResourceErrorBody
from .statistics_body import StatisticsBody
from .statistics_detail_body import StatisticsDetailBody
from .statistics_detail_body_delivery_count_histogram import StatisticsDetailBodyDeliveryCountHistogram
from .statistics_size_body import StatisticsSizeBody
from .tombstone_body import TombstoneBody
from .update_message_body import UpdateMessageBody
from .update_message_request import UpdateMessageRequest
from .v2_error_body import V2ErrorBody

__all__ = (
    "AccountBody",
    "AccountBodyKeys",
    "AckLatencyBody",
    "AuthErrorBody",
    "CreateAccountBodyType1",
    "ErrorsBody",
    "GetMessageBody",
    "Health",
    "KeyCreateRequest",
    "LevelBody",
    "MessageDebugBody",
    "MonotonBody",
    "PermissionBody",
    "PermissionRequest",
    "PointersBody",
    "PointersBodyStragglers",
    "PurgedBody",
    "QueueCreateOptions",
    "QueueDefinitionBody",
    "RedriveRequest",
    "RedriveStarted",
    "RedriveStatus",
    "ResourceErrorBody",
    "StatisticsBody",
    "StatisticsDetailBody",
    "StatisticsDetailBodyDeliveryCountHistogram",
    "StatisticsSizeBody",
    "TombstoneBody",
    "UpdateMessageBody",
    "UpdateMessageRequest",
    "V2ErrorBody",
)
