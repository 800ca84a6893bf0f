"""Harness drivers: how each kind of harness works one trial."""

from hemra.services.executor.harnesses.base import HarnessDriver, HarnessResult, TrialContext


def driver_for(harness) -> HarnessDriver:
    """The driver for a pinned hemra.v1.Harness."""
    if harness.kind == "builtin":
        from hemra.services.executor.harnesses import builtin

        return builtin.DRIVERS[harness.harness_name]()
    if harness.kind == "program":
        from hemra.services.executor.harnesses.program import ProgramDriver

        return ProgramDriver()
    if harness.kind == "cli":
        from hemra.services.executor.harnesses import cli

        return cli.driver(harness.agent)
    if harness.kind == "acp":
        from hemra.services.executor.harnesses.acp import AcpDriver

        return AcpDriver()
    if harness.kind == "sdk":
        from hemra.services.executor.harnesses.sdk import SdkDriver

        return SdkDriver()
    if harness.kind == "computer-use":
        from hemra.services.executor.harnesses.computer_use import ComputerUseDriver

        return ComputerUseDriver()
    raise LookupError(f"harness kind {harness.kind!r} has no driver in this executor")


__all__ = ["HarnessDriver", "HarnessResult", "TrialContext", "driver_for"]
