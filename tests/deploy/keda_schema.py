"""The schemas KEDA's CRDs (keda.sh/v1alpha1, KEDA 2.x) give ScaledObject and
TriggerAuthentication, as JSON Schema, for the parts the chart writes: the same required
fields, types (int32 counts, a trigger's metadata a map of strings) and enums.

Stricter than the CRDs in one way: they are structural, so a cluster silently prunes a field
it does not know (a misspelt `minReplicaCount` would vanish and the default apply); here an
unknown field is an error. kubernetes-validate has no schema for CRDs, so this is the check.
"""

_INT32 = {"type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1}
_NAME = {"type": "string", "minLength": 1, "maxLength": 253}
_METADATA = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": _NAME,
        "namespace": {"type": "string"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
    },
    "additionalProperties": False,
}


def _object(kind: str, spec: dict) -> dict:
    return {
        "type": "object",
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "properties": {
            "apiVersion": {"const": "keda.sh/v1alpha1"},
            "kind": {"const": kind},
            "metadata": _METADATA,
            "spec": spec,
        },
        "additionalProperties": False,
    }


_TRIGGER = {
    "type": "object",
    "required": ["type", "metadata"],
    "properties": {
        "type": {"type": "string", "minLength": 1},
        "name": {"type": "string"},
        "useCachedMetrics": {"type": "boolean"},
        "metricType": {"enum": ["AverageValue", "Value", "Utilization"]},
        # Every value a string: a number here (port: 5432) fails the CRD's validation.
        "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
        "authenticationRef": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": _NAME, "kind": {"enum": ["TriggerAuthentication", "ClusterTriggerAuthentication"]}},
            "additionalProperties": False,
        },
    },
    "additionalProperties": False,
}

SCALED_OBJECT = _object(
    "ScaledObject",
    {
        "type": "object",
        "required": ["scaleTargetRef", "triggers"],
        "properties": {
            "scaleTargetRef": {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": _NAME,
                    "apiVersion": {"type": "string"},
                    "kind": {"type": "string"},
                    "envSourceContainerName": {"type": "string"},
                },
                "additionalProperties": False,
            },
            "pollingInterval": _INT32,
            "cooldownPeriod": _INT32,
            "initialCooldownPeriod": _INT32,
            "idleReplicaCount": _INT32,
            "minReplicaCount": _INT32,
            "maxReplicaCount": _INT32,
            "triggers": {"type": "array", "minItems": 1, "items": _TRIGGER},
        },
        "additionalProperties": False,
    },
)

_SECRET_TARGET = {
    "type": "object",
    "required": ["parameter", "name", "key"],
    "properties": {"parameter": {"type": "string"}, "name": _NAME, "key": {"type": "string"}},
    "additionalProperties": False,
}

TRIGGER_AUTHENTICATION = _object(
    "TriggerAuthentication",
    {
        "type": "object",
        "properties": {
            "secretTargetRef": {"type": "array", "items": _SECRET_TARGET},
            "env": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["parameter", "name"],
                    "properties": {
                        "parameter": {"type": "string"},
                        "name": {"type": "string"},
                        "containerName": {"type": "string"},
                    },
                    "additionalProperties": False,
                },
            },
        },
        "additionalProperties": False,
    },
)

BY_KIND = {"ScaledObject": SCALED_OBJECT, "TriggerAuthentication": TRIGGER_AUTHENTICATION}
