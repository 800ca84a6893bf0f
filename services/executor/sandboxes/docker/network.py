"""The attempt's own network (verifier.network = "bridge")."""

import ipaddress
import secrets

from hemra.services.environments.engine import LABEL_ATTEMPT, client, docker_errors
from hemra.services.environments.images import LABEL_TASK
from hemra.services.executor.sandboxes.base import SandboxError
from hemra.services.executor.sandboxes.docker.cleanup import process_labels

#: Where attempts' networks take their ranges: one /28 each (the gateway, the verifier, the
#: service and room to spare), drawn at random from the shared address space of RFC 6598,
#: not from the engine's pools (about 30 networks in all by default). No address of it is
#: ever on the host (inhibit_ipv4), so no range adds a route there or hides one.
_SUBNETS = ipaddress.ip_network("100.64.0.0/10")
_SUBNET_PREFIX = 28
#: Draws before giving up: two live attempts share a range with odds of 1 in 262,144.
_SUBNET_TRIES = 8


def _attempt_subnet() -> tuple[str, str]:
    """A /28 of _SUBNETS at random, and its first address (the gateway no one holds)."""
    count = 2 ** (_SUBNET_PREFIX - _SUBNETS.prefixlen)
    start = int(_SUBNETS.network_address) + secrets.randbelow(count) * 2 ** (32 - _SUBNET_PREFIX)
    return f"{ipaddress.ip_address(start)}/{_SUBNET_PREFIX}", str(ipaddress.ip_address(start + 1))


def create(attempt_id: str, task_digest: str) -> str:
    """The attempt's own network, its ID: internal (no route beyond it), and the bridge has no
    address on the host (inhibit_ipv4), so no host service answers on it, loopback or not;
    another attempt's is another bridge and subnet. Labelled like the attempt's containers, so
    the start-up sweep removes it after a kill -9."""
    from docker.types import IPAMConfig, IPAMPool

    for attempt in range(1, _SUBNET_TRIES + 1):
        subnet, gateway = _attempt_subnet()
        try:
            return client().api.create_network(
                f"hemra-{attempt_id}",
                driver="bridge",
                internal=True,
                options={"com.docker.network.bridge.inhibit_ipv4": "true"},
                ipam=IPAMConfig(pool_configs=[IPAMPool(subnet=subnet, gateway=gateway)]),
                labels={LABEL_ATTEMPT: attempt_id, LABEL_TASK: task_digest, **process_labels()},
            )["Id"]
        except docker_errors().APIError as exc:
            if attempt < _SUBNET_TRIES and "overlaps" in str(exc.explanation or exc):
                continue  # another attempt's network holds that range: draw again
            raise SandboxError(f"cannot make the verifier's network: {exc.explanation or exc}") from None
    raise AssertionError("unreachable")
