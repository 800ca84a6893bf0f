"""hemra.services.executor.harnesses.sdk: where the program reaches the harness protocol, and the
relay's plan for it (relayed, its answers never read for usage)."""

import pytest

from hemra.services.executor.harnesses.sdk import SdkDriver, _inside
from hemra.services.executor.sandboxes.relay import Unwatched, plan


@pytest.mark.parametrize(
    ("address", "inside"),
    [
        ("127.0.0.1:50051", ("127.0.0.1", 50051)),
        ("[::1]:7", ("::1", 7)),
        ("executor:50051", ("executor", 50051)),
        ("10.1.2.3:50051", ("127.0.0.1", 50051)),  # a wildcard listener advertises this machine's address
    ],
)
def test_inside__the_address_the_sandbox_reaches(address, inside):
    assert _inside(address) == inside


def test_protocol_endpoint__relayed_unwatched_beside_a_watched_model():
    [protocol] = SdkDriver().protocol_endpoints("127.0.0.1:50051")
    assert isinstance(protocol, Unwatched)
    model, relayed = plan([("127.0.0.1", 8080), protocol])
    assert (model.port, model.watched) == (8080, True)
    assert (relayed.host, relayed.port, relayed.watched) == ("127.0.0.1", 50051, False)
