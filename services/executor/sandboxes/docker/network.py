"""The attempt's own network (verifier.network = "bridge")."""

import ipaddress
import secrets

#: Where attempts' networks take their ranges: one /28 each (the gateway, the verifier, the
#: service and room to spare), drawn at random from the shared address space of RFC 6598,
#: not from the engine's pools (about 30 networks in all by default). No address of it is
#: ever on the host (inhibit_ipv4), so no range adds a route there or hides one.
_SUBNETS = ipaddress.ip_network("100.64.0.0/10")
_SUBNET_PREFIX = 28
#: Draws before giving up: two live attempts share a range with odds of 1 in 262,144.
SUBNET_TRIES = 8


def attempt_subnet() -> tuple[str, str]:
    """A /28 of _SUBNETS at random, and its first address (the gateway no one holds)."""
    count = 2 ** (_SUBNET_PREFIX - _SUBNETS.prefixlen)
    start = int(_SUBNETS.network_address) + secrets.randbelow(count) * 2 ** (32 - _SUBNET_PREFIX)
    return f"{ipaddress.ip_address(start)}/{_SUBNET_PREFIX}", str(ipaddress.ip_address(start + 1))
