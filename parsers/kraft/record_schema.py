"""The grammar of KRaft metadata records: field lists per record type and version.

This is the one place that says what a record holds; :mod:`parsers.kraft.records` reads with
it and :mod:`samplegen.kafka.kraft_encode` writes with it. The lists follow Kafka's message schemas
(``metadata/src/main/resources/common/metadata/*.json`` and, for control records,
``clients/src/main/resources/common/message/*.json``) up to Kafka 4.1.

Every metadata record is "flexible": compact strings/arrays (unsigned varint length + 1) and a
tagged-field section after the fixed fields of every struct. A tagged field is written only
when it differs from its default, so a reader must treat an absent tag as "the default" —
for PartitionChangeRecord that default means "unchanged".
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

OPEN = 1 << 15  # "N+" versions: open-ended

PRIMITIVES = ("int8", "int16", "int32", "int64", "uint16", "bool", "uuid", "string", "bytes", "float64")


@dataclass(frozen=True)
class Field:
    name: str  # Kafka's name (PascalCase); the decoded dict uses :attr:`key`
    type: str  # a primitive, "[]" + primitive, "[]" (array of structs) or "{}" (one struct)
    min_version: int = 0
    max_version: int = OPEN
    nullable_from: int | None = None  # first version in which null is allowed
    tag: int | None = None  # tagged field: written only when not the default
    default: Any = None
    fields: tuple["Field", ...] = ()  # members of a struct / struct array
    key: str = ""  # Kafka's JSON name (lower camel case), also our decoded dict's key

    def __post_init__(self) -> None:
        if not self.key:
            object.__setattr__(self, "key", self.name[0].lower() + self.name[1:])

    def present_in(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version

    def nullable_in(self, version: int) -> bool:
        return self.nullable_from is not None and version >= self.nullable_from

    def default_value(self) -> Any:
        if self.default is not None:
            return self.default
        if self.nullable_from is not None and self.tag is not None:
            return None
        return zero_value(self.type)


def zero_value(type_: str) -> Any:
    if type_.startswith("["):
        return []
    return {"bool": False, "string": "", "bytes": b"", "uuid": ZERO_UUID, "float64": 0.0}.get(type_, 0)


ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"  # Uuid.ZERO_UUID as Kafka prints it (url-safe base64, no padding)


def f(name: str, type_: str, versions: str = "0+", *, nullable: str | None = None, tag: int | None = None,
      default: Any = None, fields: tuple[Field, ...] = ()) -> Field:
    lo, hi = _versions(versions)
    null_from = _versions(nullable)[0] if nullable else None
    return Field(name, type_, lo, hi, null_from, tag, default, fields)


def _versions(spec: str) -> tuple[int, int]:
    if spec.endswith("+"):
        return int(spec[:-1]), OPEN
    if "-" in spec:
        lo, hi = spec.split("-")
        return int(lo), int(hi)
    return int(spec), int(spec)


@dataclass(frozen=True)
class RecordSchema:
    name: str  # e.g. PartitionChangeRecord
    api_key: int | None  # None for control records
    max_version: int
    fields: tuple[Field, ...]

    @property
    def type_name(self) -> str:
        """The UPPER_SNAKE name kafka-dump-log prints (PARTITION_CHANGE_RECORD)."""
        return upper_snake(self.name)


def upper_snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


def _endpoint(with_protocol: bool = True) -> tuple[Field, ...]:
    out = (f("Name", "string"), f("Host", "string"), f("Port", "uint16"))
    return out + ((f("SecurityProtocol", "int16"),) if with_protocol else ())


_FEATURE_RANGE = (f("Name", "string"), f("MinSupportedVersion", "int16"), f("MaxSupportedVersion", "int16"))

# ---------------------------------------------------------------------------- metadata records (by apiKey)

METADATA: dict[int, RecordSchema] = {s.api_key: s for s in (
    RecordSchema("RegisterBrokerRecord", 0, 3, (
        f("BrokerId", "int32"),
        f("IsMigratingZkBroker", "bool", "2+"),
        f("IncarnationId", "uuid"),
        f("BrokerEpoch", "int64"),
        f("EndPoints", "[]", fields=_endpoint()),
        f("Features", "[]", fields=_FEATURE_RANGE),
        f("Rack", "string", nullable="0+"),
        f("Fenced", "bool", default=True),
        f("InControlledShutdown", "bool", "1+"),
        f("LogDirs", "[]uuid", "3+", tag=0),
    )),
    RecordSchema("UnregisterBrokerRecord", 1, 0, (
        f("BrokerId", "int32"),
        f("BrokerEpoch", "int64"),
    )),
    RecordSchema("TopicRecord", 2, 0, (
        f("Name", "string"),
        f("TopicId", "uuid"),
    )),
    RecordSchema("PartitionRecord", 3, 2, (
        f("PartitionId", "int32", default=-1),
        f("TopicId", "uuid"),
        f("Replicas", "[]int32"),
        f("Isr", "[]int32"),
        f("RemovingReplicas", "[]int32"),
        f("AddingReplicas", "[]int32"),
        f("Leader", "int32", default=-1),
        f("LeaderRecoveryState", "int8", tag=0, default=0),
        f("LeaderEpoch", "int32", default=-1),
        f("PartitionEpoch", "int32", default=-1),
        f("Directories", "[]uuid", "1+"),
        f("EligibleLeaderReplicas", "[]int32", "2+", nullable="2+", tag=1),
        f("LastKnownElr", "[]int32", "2+", nullable="2+", tag=2),
    )),
    RecordSchema("ConfigRecord", 4, 0, (
        f("ResourceType", "int8"),
        f("ResourceName", "string"),
        f("Name", "string"),
        f("Value", "string", nullable="0+"),
    )),
    # Every field but the partition is a tagged delta: absent = unchanged.
    RecordSchema("PartitionChangeRecord", 5, 2, (
        f("PartitionId", "int32", default=-1),
        f("TopicId", "uuid"),
        f("Isr", "[]int32", nullable="0+", tag=0),
        f("Leader", "int32", tag=1, default=-2),  # -2 = no change, -1 = no leader
        f("Replicas", "[]int32", nullable="0+", tag=2),
        f("RemovingReplicas", "[]int32", nullable="0+", tag=3),
        f("AddingReplicas", "[]int32", nullable="0+", tag=4),
        f("LeaderRecoveryState", "int8", tag=5, default=-1),
        f("Directories", "[]uuid", "1+", nullable="1+", tag=8),
        f("EligibleLeaderReplicas", "[]int32", "2+", nullable="2+", tag=6),
        f("LastKnownElr", "[]int32", "2+", nullable="2+", tag=7),
    )),
    RecordSchema("FenceBrokerRecord", 7, 0, (
        f("Id", "int32"),
        f("Epoch", "int64"),
    )),
    RecordSchema("UnfenceBrokerRecord", 8, 0, (
        f("Id", "int32"),
        f("Epoch", "int64"),
    )),
    RecordSchema("RemoveTopicRecord", 9, 0, (
        f("TopicId", "uuid"),
    )),
    RecordSchema("DelegationTokenRecord", 10, 0, (
        f("Owner", "string"),
        f("Requester", "string"),
        f("Renewers", "[]string"),
        f("IssueTimestamp", "int64"),
        f("MaxTimestamp", "int64"),
        f("ExpirationTimestamp", "int64"),
        f("TokenId", "string"),
    )),
    RecordSchema("UserScramCredentialRecord", 11, 0, (
        f("Name", "string"),
        f("Mechanism", "int8"),
        f("Salt", "bytes"),
        f("StoredKey", "bytes"),
        f("ServerKey", "bytes"),
        f("Iterations", "int32"),
    )),
    RecordSchema("FeatureLevelRecord", 12, 0, (
        f("Name", "string"),
        f("FeatureLevel", "int16"),
    )),
    RecordSchema("ClientQuotaRecord", 14, 0, (
        f("Entity", "[]", fields=(f("EntityType", "string"), f("EntityName", "string", nullable="0+"))),
        f("Key", "string"),
        f("Value", "float64"),
        f("Remove", "bool"),
    )),
    RecordSchema("ProducerIdsRecord", 15, 0, (
        f("BrokerId", "int32"),
        f("BrokerEpoch", "int64", default=-1),
        f("NextProducerId", "int64"),
    )),
    RecordSchema("BrokerRegistrationChangeRecord", 17, 2, (
        f("BrokerId", "int32"),
        f("BrokerEpoch", "int64"),
        f("Fenced", "int8", tag=0),  # 1 fence, -1 unfence, 0 no change
        f("InControlledShutdown", "int8", "1+", tag=1),  # 1 = in controlled shutdown, 0 no change
        f("LogDirs", "[]uuid", "2+", tag=2),
    )),
    RecordSchema("AccessControlEntryRecord", 18, 0, (
        f("Id", "uuid"),
        f("ResourceType", "int8"),
        f("ResourceName", "string"),
        f("PatternType", "int8"),
        f("Principal", "string"),
        f("Host", "string"),
        f("Operation", "int8"),
        f("PermissionType", "int8"),
    )),
    RecordSchema("RemoveAccessControlEntryRecord", 19, 0, (
        f("Id", "uuid"),
    )),
    RecordSchema("NoOpRecord", 20, 0, ()),
    RecordSchema("ZkMigrationStateRecord", 21, 0, (
        f("ZkMigrationState", "int8"),
    )),
    RecordSchema("RemoveUserScramCredentialRecord", 22, 0, (
        f("Name", "string"),
        f("Mechanism", "int8"),
    )),
    RecordSchema("BeginTransactionRecord", 23, 0, (
        f("Name", "string", nullable="0+", tag=0),
    )),
    RecordSchema("EndTransactionRecord", 24, 0, ()),
    RecordSchema("AbortTransactionRecord", 25, 0, (
        f("Reason", "string", nullable="0+", tag=0),
    )),
    RecordSchema("RemoveDelegationTokenRecord", 26, 0, (
        f("TokenId", "string"),
    )),
    RecordSchema("RegisterControllerRecord", 27, 0, (
        f("ControllerId", "int32"),
        f("IncarnationId", "uuid"),
        f("ZkMigrationReady", "bool"),
        f("EndPoints", "[]", fields=_endpoint()),
        f("Features", "[]", fields=_FEATURE_RANGE),
    )),
    RecordSchema("ClearElrRecord", 28, 0, (
        f("TopicName", "string"),
    )),
)}

BY_NAME: dict[str, RecordSchema] = {s.name: s for s in METADATA.values()}
BY_TYPE_NAME: dict[str, RecordSchema] = {s.type_name: s for s in METADATA.values()}

# ---------------------------------------------------------------------------- control records (by control type)

_VOTER = (f("VoterId", "int32"),)

CONTROL: dict[int, RecordSchema] = {
    2: RecordSchema("LeaderChangeMessage", None, 0, (
        f("Version", "int16"),
        f("LeaderId", "int32"),
        f("Voters", "[]", fields=_VOTER),
        f("GrantingVoters", "[]", fields=_VOTER),
    )),
    3: RecordSchema("SnapshotHeaderRecord", None, 0, (
        f("Version", "int16"),
        f("LastContainedLogTimestamp", "int64"),
    )),
    4: RecordSchema("SnapshotFooterRecord", None, 0, (
        f("Version", "int16"),
    )),
    5: RecordSchema("KRaftVersionRecord", None, 0, (
        f("Version", "int16"),
        f("KRaftVersion", "int16"),
    )),
    6: RecordSchema("VotersRecord", None, 0, (
        f("Version", "int16"),
        f("Voters", "[]", fields=(
            f("VoterId", "int32"),
            f("VoterDirectoryId", "uuid"),
            f("Endpoints", "[]", fields=_endpoint(with_protocol=False)),
            f("KRaftVersionFeature", "{}", fields=(f("MinSupportedVersion", "int16"), f("MaxSupportedVersion", "int16"))),
        )),
    )),
}
# Transaction markers (ABORT/COMMIT) are not flexible: int16 version, int32 coordinator epoch.
END_TXN_MARKER_FORMAT = ">hi"


def metadata_name(api_key: int) -> str:
    schema = METADATA.get(api_key)
    if schema is not None:
        return schema.name
    return f"UnknownRecord(apiKey={api_key})"


# ConfigResource.Type ids, as ConfigRecord.ResourceType stores them.
CONFIG_RESOURCE_TYPES = {0: "UNKNOWN", 2: "TOPIC", 4: "BROKER", 8: "BROKER_LOGGER", 16: "CLIENT_METRICS", 32: "GROUP"}
